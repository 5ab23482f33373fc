package sign

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/oci"
	cempty "github.com/sigstore/cosign/v2/pkg/oci/empty"
	clayout "github.com/sigstore/cosign/v2/pkg/oci/layout"
	cmutate "github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// Sentinel errors of verification; callers branch on them with errors.Is.
var (
	// ErrNoSignatures: the subject carries no signature at all.
	ErrNoSignatures = errors.New("no signatures found")
	// ErrNoValidSignature: signatures exist, none satisfies the policy.
	ErrNoValidSignature = errors.New("no valid signature")
	// ErrNoAttestations: no attestation of the requested type exists.
	ErrNoAttestations = errors.New("no attestations found")
	// ErrNoValidAttestation: attestations exist, none satisfies the policy.
	ErrNoValidAttestation = errors.New("no valid attestation")
	// ErrClaims: a signature verified cryptographically but its claims
	// (digest, repository, annotations) do not match.
	ErrClaims = errors.New("signed claims do not match")
)

// Entity is a subject opened for verification: its digest (computed from
// the manifest bytes fetched by digest), its manifest annotations and
// access to the signatures and attestations stored next to it.
type Entity struct {
	// Ref is repository@digest. For an OCI layout the repository is the
	// one given to OpenLayout.
	Ref    name.Digest
	Digest v1.Hash
	// Annotations are the subject manifest's annotations.
	Annotations map[string]string
	sigs, atts  func() (oci.Signatures, error)
}

// OpenRemote opens ref (pinned by digest) in its registry.
func OpenRemote(ctx context.Context, ref name.Digest, opts ...remote.Option) (*Entity, error) {
	ropts := append([]remote.Option{remote.WithContext(ctx)}, opts...)
	se, err := ociremote.SignedEntity(ref, ociremote.WithRemoteOptions(ropts...))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ref, err)
	}
	return newEntity(ref, se, se.Signatures, se.Attestations)
}

// OpenLayout opens the signed subject of an OCI image layout in cosign's
// format (written by fullsend image build --sign or cosign save); repo is
// the repository the signature must name.
func OpenLayout(path string, repo name.Repository) (*Entity, error) {
	top, err := clayout.SignedImageIndex(path)
	if err != nil {
		return nil, fmt.Errorf("reading OCI layout %s: %w", path, err)
	}
	var subj oci.SignedEntity
	if ii, err := top.SignedImageIndex(v1.Hash{}); err != nil {
		return nil, fmt.Errorf("reading OCI layout %s: %w", path, err)
	} else if ii != nil {
		subj = ii
	} else if img, err := top.SignedImage(v1.Hash{}); err != nil {
		return nil, fmt.Errorf("reading OCI layout %s: %w", path, err)
	} else if img != nil {
		subj = img
	}
	if subj == nil {
		return nil, &UnsignedLayoutError{Path: path}
	}
	h, err := subj.Digest()
	if err != nil {
		return nil, err
	}
	return newEntity(repo.Digest(h.String()), subj, top.Signatures, top.Attestations)
}

type manifester interface {
	RawManifest() ([]byte, error)
}

func newEntity(ref name.Digest, se oci.SignedEntity, sigs, atts func() (oci.Signatures, error)) (*Entity, error) {
	h, err := se.Digest()
	if err != nil {
		return nil, fmt.Errorf("digest of %s: %w", ref, err)
	}
	if h.String() != ref.DigestStr() {
		return nil, fmt.Errorf("%s: content has digest %s", ref, h)
	}
	e := &Entity{Ref: ref, Digest: h, sigs: sigs, atts: atts, Annotations: map[string]string{}}
	if m, ok := se.(manifester); ok {
		raw, err := m.RawManifest()
		if err != nil {
			return nil, fmt.Errorf("manifest of %s: %w", ref, err)
		}
		var mf struct {
			Annotations map[string]string `json:"annotations"`
		}
		if err := json.Unmarshal(raw, &mf); err != nil {
			return nil, fmt.Errorf("manifest of %s: %w", ref, err)
		}
		if mf.Annotations != nil {
			e.Annotations = mf.Annotations
		}
	}
	return e, nil
}

// Identity is a keyless signer identity: the certificate's subject (SAN)
// and OIDC issuer, each exact or an anchored regular expression.
type Identity struct {
	Subject, SubjectRegexp string
	Issuer, IssuerRegexp   string
}

// Validate rejects identities that would match too much: both parts are
// required and every regular expression must be anchored (^...$).
func (id Identity) Validate() error {
	if id.Subject == "" && id.SubjectRegexp == "" {
		return errors.New("keyless identity: a certificate identity (or identity regexp) is required")
	}
	if id.Issuer == "" && id.IssuerRegexp == "" {
		return errors.New("keyless identity: a certificate OIDC issuer (or issuer regexp) is required")
	}
	for flag, re := range map[string]string{"identity": id.SubjectRegexp, "issuer": id.IssuerRegexp} {
		if re == "" {
			continue
		}
		if !strings.HasPrefix(re, "^") || !strings.HasSuffix(re, "$") || strings.HasSuffix(re, `\$`) {
			return fmt.Errorf("keyless %s regexp %q must be anchored: start with ^ and end with $", flag, re)
		}
		if _, err := regexp.Compile(re); err != nil {
			return fmt.Errorf("keyless %s regexp %q: %w", flag, re, err)
		}
	}
	return nil
}

// fullMatch makes an (already anchored) expression match whole strings
// even with a top-level alternation: "^a|b$" would otherwise accept "xb".
func fullMatch(re string) string {
	if re == "" {
		return ""
	}
	return "^(?:" + re + ")$"
}

// Trust is who may sign: public keys (any one suffices) or keyless
// identities under a trusted root, and how transparency is handled.
type Trust struct {
	Keys []signature.Verifier
	// KeyNames, when set, says where each of Keys came from (a file, a KMS
	// URI; "" when unknown), so that a failure names the key the user gave.
	KeyNames []string
	// Identities and TrustedMaterial are used for keyless signatures.
	Identities      []Identity
	TrustedMaterial root.TrustedMaterial
	// RequireKeyedTlog makes keyed signatures carry a Rekor bundle that
	// verifies against TrustedMaterial; by default keyed signatures are
	// checked offline without a transparency log.
	RequireKeyedTlog bool
	// IgnoreKeylessTlog skips the Rekor check of keyless signatures; the
	// certificate must then still be valid now.
	IgnoreKeylessTlog bool
	// IgnoreSCT skips the certificate-transparency check of keyless
	// certificates (private Fulcio instances without a CT log).
	IgnoreSCT bool
}

// SignedClaims is the verified content of a signature payload.
type SignedClaims struct {
	DockerReference string
	Digest          string
	Type            string
	Annotations     map[string]string
}

// Verified describes one accepted signature or attestation.
type Verified struct {
	// Signer is "key sha256:..." or the keyless certificate identity.
	Signer string
	// TlogVerified is true when a Rekor bundle was verified.
	TlogVerified bool
	// Claims is set for signatures.
	Claims *SignedClaims
	// Statement is set for attestations.
	Statement *Statement
}

type checker struct {
	label       string
	co          *cosign.CheckOpts
	requireTlog bool
	keyed       bool
}

// reason words why a signature failed one checker: for a key, that the
// signature was not made with it (what was expected), not only the
// library's words.
func (c checker) reason(err error) string {
	s := cleanErr(err)
	if c.keyed && strings.Contains(s, "invalid signature") {
		return "not made with this key: the image was signed with another key, or changed after signing (" + s + ")"
	}
	return s
}

func (t Trust) checkers() ([]checker, error) {
	var out []checker
	for i, k := range t.Keys {
		id, err := KeyID(k)
		if err != nil {
			return nil, err
		}
		label := "key " + id
		if i < len(t.KeyNames) && t.KeyNames[i] != "" {
			label += " from " + t.KeyNames[i]
		}
		if t.RequireKeyedTlog && t.TrustedMaterial == nil {
			return nil, errors.New("checking keyed signatures against Rekor needs a trusted root (Rekor public keys)")
		}
		co := &cosign.CheckOpts{SigVerifier: k, IgnoreTlog: !t.RequireKeyedTlog, TrustedMaterial: t.TrustedMaterial, IgnoreSCT: true, Offline: true}
		out = append(out, checker{label: label, co: co, requireTlog: t.RequireKeyedTlog, keyed: true})
	}
	if len(t.Identities) > 0 {
		if t.TrustedMaterial == nil {
			return nil, errors.New("keyless verification needs a trusted root (Fulcio CA, Rekor and CT log keys)")
		}
		var ids []cosign.Identity
		for _, id := range t.Identities {
			if err := id.Validate(); err != nil {
				return nil, err
			}
			ids = append(ids, cosign.Identity{Subject: id.Subject, SubjectRegExp: fullMatch(id.SubjectRegexp), Issuer: id.Issuer, IssuerRegExp: fullMatch(id.IssuerRegexp)})
		}
		co := &cosign.CheckOpts{Identities: ids, TrustedMaterial: t.TrustedMaterial, IgnoreTlog: t.IgnoreKeylessTlog, IgnoreSCT: t.IgnoreSCT, Offline: true}
		out = append(out, checker{label: "keyless", co: co, requireTlog: !t.IgnoreKeylessTlog})
	}
	if len(out) == 0 {
		return nil, errors.New("no signer to check against: give a public key or a keyless identity")
	}
	return out, nil
}

// CheckSignatures verifies the subject's cosign signatures against trust
// and then claims (payload digest and type first, then the caller's
// check). It returns every signature that passes; an error lists why each
// one failed.
func (e *Entity) CheckSignatures(ctx context.Context, t Trust, check func(*SignedClaims) error) ([]Verified, error) {
	checkers, err := t.checkers()
	if err != nil {
		return nil, err
	}
	list, err := listOf(e.sigs)
	if err != nil {
		return nil, fmt.Errorf("reading signatures of %s: %w", e.Ref, err)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%s: %w", e.Ref, ErrNoSignatures)
	}
	var ok []Verified
	var reasons []string
	claimsFailed := false
	for i, sig := range list {
		v, why, badClaims := e.checkSignature(ctx, checkers, i, sig, check)
		reasons = append(reasons, why...)
		claimsFailed = claimsFailed || badClaims
		if v != nil {
			ok = append(ok, *v)
		}
	}
	if len(ok) == 0 {
		if claimsFailed {
			return nil, fmt.Errorf("%s: %w (%w) among %d:\n  %s", e.Ref, ErrNoValidSignature, ErrClaims, len(list), strings.Join(reasons, "\n  "))
		}
		return nil, fmt.Errorf("%s: %w among %d:\n  %s", e.Ref, ErrNoValidSignature, len(list), strings.Join(reasons, "\n  "))
	}
	return ok, nil
}

// checkSignature verifies signature number i (0-based) with each checker
// in turn until one accepts it, and returns it with the reasons of the
// checkers that refused it first (nil when none accepts it), and whether
// its claims failed a check.
func (e *Entity) checkSignature(ctx context.Context, checkers []checker, i int, sig oci.Signature, check func(*SignedClaims) error) (*Verified, []string, bool) {
	var reasons []string
	claimsFailed := false
	for _, c := range checkers {
		if err := c.tlogPresent(sig); err != nil {
			reasons = append(reasons, fmt.Sprintf("signature %d (%s): %s", i+1, c.label, err))
			continue
		}
		var claims *SignedClaims
		co := *c.co
		co.ClaimVerifier = func(sig oci.Signature, h v1.Hash, _ map[string]any) error {
			cl, err := parseClaims(sig, h)
			if err == nil && check != nil {
				err = check(cl)
			}
			if err != nil {
				claimsFailed = true
				return err
			}
			claims = cl
			return nil
		}
		tlog, err := cosign.VerifyImageSignature(ctx, sig, e.Digest, &co)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("signature %d (%s): %s", i+1, c.label, c.reason(err)))
			continue
		}
		return &Verified{Signer: signerLabel(sig, c.label), TlogVerified: tlog, Claims: claims}, reasons, claimsFailed
	}
	return nil, reasons, claimsFailed
}

// tlogPresent fails early, with a clear message, when the policy requires
// a transparency-log entry and the signature carries none.
func (c checker) tlogPresent(sig oci.Signature) error {
	if !c.requireTlog {
		return nil
	}
	b, err := sig.Bundle()
	if err != nil {
		return fmt.Errorf("reading the Rekor bundle: %w", err)
	}
	if b == nil {
		return errors.New("no Rekor bundle on the signature, and the policy requires a transparency-log entry (signed without tlog upload?)")
	}
	return nil
}

func parseClaims(sig oci.Signature, h v1.Hash) (*SignedClaims, error) {
	raw, err := sig.Payload()
	if err != nil {
		return nil, err
	}
	var p payload.SimpleContainerImage
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("signature payload is not a cosign simple-signing payload: %w", err)
	}
	if p.Critical.Type != payload.CosignSignatureType {
		return nil, fmt.Errorf("signature payload type is %q, want %q", p.Critical.Type, payload.CosignSignatureType)
	}
	if p.Critical.Image.DockerManifestDigest != h.String() {
		return nil, fmt.Errorf("signature claims digest %s, not %s (signature copied from another image)", p.Critical.Image.DockerManifestDigest, h)
	}
	cl := &SignedClaims{
		DockerReference: p.Critical.Identity.DockerReference,
		Digest:          p.Critical.Image.DockerManifestDigest,
		Type:            p.Critical.Type,
		Annotations:     map[string]string{},
	}
	for k, v := range p.Optional {
		s, ok := v.(string)
		if !ok {
			b, _ := json.Marshal(v)
			s = string(b)
		}
		cl.Annotations[k] = s
	}
	return cl, nil
}

// CheckAttestations verifies the subject's attestations of predicateType
// against trust (signature, subject digest) and then check. It returns the
// attestations that pass.
func (e *Entity) CheckAttestations(ctx context.Context, t Trust, predicateType string, check func(*Statement) error) ([]Verified, error) {
	checkers, err := t.checkers()
	if err != nil {
		return nil, err
	}
	list, err := listOf(e.atts)
	if err != nil {
		return nil, fmt.Errorf("reading attestations of %s: %w", e.Ref, err)
	}
	var ok []Verified
	var reasons []string
	seen := 0
	for i, att := range list {
		st, err := attestationStatement(att)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("attestation %d: %s", i+1, err))
			continue
		}
		if st.PredicateType != predicateType {
			continue
		}
		seen++
		v, why, err := e.checkAttestation(ctx, checkers, i, att, st, check)
		if err != nil {
			return nil, err
		}
		reasons = append(reasons, why...)
		if v != nil {
			ok = append(ok, *v)
		}
	}
	if seen == 0 {
		return nil, fmt.Errorf("%s: %w of type %s", e.Ref, ErrNoAttestations, predicateType)
	}
	if len(ok) == 0 {
		return nil, fmt.Errorf("%s: %w of type %s among %d:\n  %s", e.Ref, ErrNoValidAttestation, predicateType, seen, strings.Join(reasons, "\n  "))
	}
	return ok, nil
}

// listOf reads the signatures (or attestations) get returns; none when it
// returns nil.
func listOf(get func() (oci.Signatures, error)) ([]oci.Signature, error) {
	sigs, err := get()
	if err != nil || sigs == nil {
		return nil, err
	}
	return sigs.Get()
}

// checkAttestation verifies attestation number i (0-based; statement st)
// with each checker in turn until one accepts it, and returns it with the
// reasons of the checkers that refused it first; nil when none accepts
// it.
func (e *Entity) checkAttestation(ctx context.Context, checkers []checker, i int, att oci.Signature, st *Statement, check func(*Statement) error) (*Verified, []string, error) {
	var reasons []string
	for _, c := range checkers {
		if err := c.tlogPresent(att); err != nil {
			reasons = append(reasons, fmt.Sprintf("attestation %d (%s): %s", i+1, c.label, err))
			continue
		}
		co := *c.co
		co.ClaimVerifier = subjectVerifier(st, check)
		one, err := cmutate.AppendSignatures(cempty.Signatures(), false, att)
		if err != nil {
			return nil, nil, err
		}
		checked, tlog, err := cosign.VerifyImageAttestation(ctx, one, e.Digest, &co)
		if err != nil || len(checked) == 0 {
			reasons = append(reasons, fmt.Sprintf("attestation %d (%s): %s", i+1, c.label, c.reason(err)))
			continue
		}
		return &Verified{Signer: signerLabel(att, c.label), TlogVerified: tlog, Statement: st}, reasons, nil
	}
	return nil, reasons, nil
}

// subjectVerifier is the claim check of an attestation: one of st's
// subjects is the verified digest, then check (when not nil) passes.
func subjectVerifier(st *Statement, check func(*Statement) error) func(oci.Signature, v1.Hash, map[string]any) error {
	return func(_ oci.Signature, h v1.Hash, _ map[string]any) error {
		for _, s := range st.Subject {
			if "sha256:"+s.Digest["sha256"] == h.String() {
				if check != nil {
					return check(st)
				}
				return nil
			}
		}
		return fmt.Errorf("attestation subject is not %s (attestation for another digest)", h)
	}
}

// attestationStatement decodes the in-toto statement of a DSSE attestation
// layer (before its signature is checked: only used to select by type).
func attestationStatement(att oci.Signature) (*Statement, error) {
	body, err := attestationStatementBytes(att)
	if err != nil {
		return nil, err
	}
	var st Statement
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, fmt.Errorf("in-toto statement: %w", err)
	}
	return &st, nil
}

// attestationStatementBytes returns the DSSE payload of an attestation.
func attestationStatementBytes(att oci.Signature) ([]byte, error) {
	raw, err := att.Payload()
	if err != nil {
		return nil, err
	}
	var env struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("not a DSSE envelope: %w", err)
	}
	if env.PayloadType != PayloadType {
		return nil, fmt.Errorf("DSSE payload type %q, want %q", env.PayloadType, PayloadType)
	}
	body, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, fmt.Errorf("DSSE payload: %w", err)
	}
	return body, nil
}

func signerLabel(sig oci.Signature, fallback string) string {
	if c, err := sig.Cert(); err == nil && c != nil {
		return CertificateIdentity(c)
	}
	return fallback
}

// cleanErr flattens cosign's multi-line errors into one line and names
// the DSSE threshold failure for what it is.
func cleanErr(err error) string {
	if err == nil {
		return "rejected"
	}
	s := strings.Join(strings.Fields(err.Error()), " ")
	if strings.Contains(s, "accepted signatures do not match threshold") {
		s = "invalid signature: the DSSE envelope is not signed by this signer (" + s + ")"
	}
	if strings.Contains(s, "leaf certificate verification failed") {
		s += " (the certificate was not issued by a CA in the trusted root)"
	}
	return s
}
