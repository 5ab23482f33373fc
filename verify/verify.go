package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/fullsend-ai/agent-sandbox/handover"
	"github.com/fullsend-ai/agent-sandbox/sign"
)

// Sentinel errors callers (and the CLI's exit codes) branch on.
var (
	// ErrNotPinned: a tag was given under RequireDigest.
	ErrNotPinned = errors.New("image reference is not pinned by digest")
	// ErrPolicy: the verification policy itself is incomplete or invalid.
	ErrPolicy = errors.New("invalid verification policy")
	// ErrClaims: a signature verified but its claims do not match.
	ErrClaims = sign.ErrClaims
	// ErrNoSigner: neither a public key nor a keyless identity was given
	// (wrapped with ErrPolicy).
	ErrNoSigner = errors.New("no signer given")
	// ErrNoRepository: an OCI layout is verified without the repository
	// the signature must name (wrapped with ErrPolicy).
	ErrNoRepository = errors.New("verifying an OCI layout needs the repository the signature names")
	// ErrFetchTrustedRoot: the Sigstore public-good trusted root could not
	// be fetched over TUF (a local trusted root avoids the fetch).
	ErrFetchTrustedRoot = errors.New("fetching the Sigstore trusted root")
)

// RepositoryError reports an Options.Repository that is not a repository
// name (wrapped with ErrPolicy).
type RepositoryError struct {
	Repository string
	Err        error
}

func (e *RepositoryError) Error() string {
	return fmt.Sprintf("repository %q: %v", e.Repository, e.Err)
}

func (e *RepositoryError) Unwrap() error { return e.Err }

// policiesDigestRE is the accepted form of the policy manifest digest.
var policiesDigestRE = regexp.MustCompile(`^(sha256:)?[0-9a-f]{64}$`)

// Options is a verification policy.
type Options struct {
	// Image is repo@sha256:..., or repo:tag (resolved once, then only the
	// digest is used) unless RequireDigest. With Layout it may be a bare
	// repository: the repository the signature must name.
	Image string
	// Layout is an OCI layout directory to verify instead of a registry.
	Layout string
	// SandboxImage, when set, is a second image verified after Image with
	// the same signer, transparency, digest-pinning, provenance and SBOM
	// requirements and the required Annotations: the separate image every
	// sandbox is then created from (`fullsend run` refuses any other). It
	// is always read from its registry, where OpenShell pulls it, even
	// with Layout; its signature must name its own repository (Repository
	// is Image's), and the policies digest is Image's claim only, so a
	// required dev.fullsend.policies.digest annotation is not asked of it.
	SandboxImage  string
	RequireDigest bool
	// Keys are public key files or KMS URIs; any one may have signed.
	Keys []string
	// Verifiers are already loaded keys (used with Keys).
	Verifiers []signature.Verifier
	// Identity is the keyless signer (certificate identity and issuer).
	Identity *sign.Identity
	// TrustedRoot is a Sigstore trusted_root.json for keyless (and for
	// RequireTlog); TrustedMaterial overrides it.
	TrustedRoot     string
	TrustedMaterial root.TrustedMaterial
	// Repository is the repository the signature must name; default: the
	// image's own repository.
	Repository string
	// Annotations must all be present, with these values, in the signature.
	Annotations map[string]string
	// RequireTlog makes keyed signatures carry a verified Rekor bundle.
	RequireTlog bool
	// InsecureIgnoreTlog skips Rekor for keyless signatures.
	InsecureIgnoreTlog bool
	// InsecureIgnoreSCT skips the certificate transparency check (private
	// Fulcio without a CT log).
	InsecureIgnoreSCT bool
	// RequireProvenance and RequireSBOM demand a verified SLSA provenance
	// v1 / SPDX attestation for the digest, signed by the same signer.
	RequireProvenance bool
	RequireSBOM       bool
	// ProvenanceBuilderID and ProvenanceSourceRepo, when set, must equal
	// the provenance's builder id and source repository (implies
	// RequireProvenance). ProvenanceBuilderIDRegexp, when set, is an
	// anchored (^...$) regular expression the builder id must match (also
	// implies RequireProvenance); with ProvenanceBuilderID, both must hold.
	//
	// A provenance from a local build (sign.LocalBuilderID) is refused
	// unless ProvenanceBuilderID names it or
	// ProvenanceBuilderIDRegexp matches it: local provenance never passes a
	// gate that requires provenance by accident.
	ProvenanceBuilderID       string
	ProvenanceBuilderIDRegexp string
	ProvenanceSourceRepo      string
	// Remote configures registry access.
	Remote []remote.Option
	// Log receives progress lines (tag resolution); may be nil.
	Log io.Writer

	builderRE *regexp.Regexp // ProvenanceBuilderIDRegexp, compiled by Verify
}

// Result is a successful verification.
type Result struct {
	// Ref is the verified repository@sha256:..., what the job must run.
	Ref        string `json:"ref"`
	Repository string `json:"repository"`
	Digest     string `json:"digest"`
	// Input is the reference as given; ResolvedTag is set when a tag was
	// resolved to Digest.
	Input       string `json:"input"`
	ResolvedTag string `json:"resolved_tag,omitempty"`
	Source      string `json:"source"` // "registry" or "oci-layout"
	// PoliciesDigest is the signed policy manifest digest
	// (FULLSEND_POLICIES_DIGEST for fullsend run).
	PoliciesDigest string   `json:"policies_digest,omitempty"`
	Signers        []string `json:"signers"`
	// Transparency says which transparency mode was used.
	Transparency string            `json:"transparency"`
	Annotations  map[string]string `json:"annotations"`
	Attestations []Attestation     `json:"attestations,omitempty"`
	// Sandbox is the verified Options.SandboxImage (without a policies
	// digest: the job's image pins the policies), nil when none was given.
	Sandbox *Result `json:"sandbox,omitempty"`
}

// Attestation is a verified attestation.
type Attestation struct {
	PredicateType string                  `json:"predicate_type"`
	Signer        string                  `json:"signer"`
	Provenance    *sign.ProvenanceSummary `json:"provenance,omitempty"`
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

// Verify applies the policy to the image, then to the sandbox image when
// one is given, and returns what was verified; both must pass.
func Verify(ctx context.Context, o Options) (*Result, error) {
	builderRE, err := compileBuilderRegexp(o.ProvenanceBuilderIDRegexp)
	if err != nil {
		return nil, err
	}
	o.builderRE = builderRE
	trust, err := o.trust(ctx)
	if err != nil {
		return nil, err
	}
	res, err := o.verifyOne(ctx, trust)
	if err != nil {
		return nil, err
	}
	if o.SandboxImage == "" {
		return res, nil
	}
	so := o.sandboxPolicy()
	sres, err := so.verifyOne(ctx, trust)
	if err != nil {
		return nil, fmt.Errorf("sandbox image %s: %w", o.SandboxImage, err)
	}
	sres.PoliciesDigest = ""
	res.Sandbox = sres
	return res, nil
}

// sandboxPolicy is the policy for the sandbox image: the same signer and
// requirements, read from the registry, its own repository, and the
// required annotations without the job image's policies digest.
func (o Options) sandboxPolicy() Options {
	so := o
	so.Image, so.SandboxImage, so.Layout, so.Repository = o.SandboxImage, "", "", ""
	so.Annotations = make(map[string]string, len(o.Annotations))
	maps.Copy(so.Annotations, o.Annotations)
	delete(so.Annotations, handover.PoliciesDigestAnnotation)
	return so
}

// verifyOne runs the four steps on o.Image with the loaded signer.
func (o *Options) verifyOne(ctx context.Context, trust sign.Trust) (*Result, error) {
	// 1. Digest pinning.
	ent, res, err := o.open(ctx)
	if err != nil {
		return nil, err
	}
	expectRepo, err := o.signedRepository(ent)
	if err != nil {
		return nil, err
	}
	// 2 and 3. Signer, then claims.
	check := func(cl *sign.SignedClaims) error {
		return o.checkClaims(cl, expectRepo, ent.Annotations)
	}
	sigs, err := ent.CheckSignatures(ctx, trust, check)
	if err != nil {
		return nil, err
	}
	res.Annotations = sigs[0].Claims.Annotations
	res.addSigners(sigs)
	if res.PoliciesDigest, err = agreedPoliciesDigest(ent, sigs); err != nil {
		return nil, err
	}

	// 4. Attestations.
	if res.Attestations, err = o.attestations(ctx, ent, trust); err != nil {
		return nil, err
	}
	return res, nil
}

// signedRepository is the repository the signature must name:
// o.Repository, else the image's own.
func (o *Options) signedRepository(ent *sign.Entity) (name.Repository, error) {
	if o.Repository == "" {
		return ent.Ref.Repository, nil
	}
	repo, err := name.NewRepository(o.Repository)
	if err != nil {
		return repo, fmt.Errorf("%w: %w", ErrPolicy, &RepositoryError{Repository: o.Repository, Err: err})
	}
	return repo, nil
}

// agreedPoliciesDigest is the policy manifest digest the valid signatures
// sigs claim (policiesDigest); they must all claim the same.
func agreedPoliciesDigest(ent *sign.Entity, sigs []sign.Verified) (string, error) {
	digest := policiesDigest(sigs[0].Claims, ent.Annotations)
	for _, s := range sigs[1:] {
		if d := policiesDigest(s.Claims, ent.Annotations); d != digest {
			return "", fmt.Errorf("%s: %w: valid signatures disagree on the policy manifest digest (%s vs %s)", ent.Ref, ErrClaims, digest, d)
		}
	}
	return digest, nil
}

// addSigners records the signers of the valid signatures (each once)
// and whether the transparency log backs them all.
func (r *Result) addSigners(sigs []sign.Verified) {
	tlogAll := true
	for _, s := range sigs {
		r.Signers = appendUnique(r.Signers, s.Signer)
		tlogAll = tlogAll && s.TlogVerified
	}
	if tlogAll {
		r.Transparency = "rekor: signature entries verified offline (signed entry timestamps)"
	} else {
		r.Transparency = "none: keyed signature verified offline, transparency log skipped"
	}
}

// attestations checks the attestations the policy asks for (step 4).
func (o *Options) attestations(ctx context.Context, ent *sign.Entity, trust sign.Trust) ([]Attestation, error) {
	type want struct {
		pt    string
		check func(*sign.Statement) error
	}
	var wants []want
	if o.requiresProvenance() {
		wants = append(wants, want{sign.PredicateSLSAProvenance1, o.checkProvenance})
	}
	if o.RequireSBOM {
		wants = append(wants, want{sign.PredicateSPDX, checkSBOM})
	}
	var out []Attestation
	for _, w := range wants {
		atts, err := ent.CheckAttestations(ctx, trust, w.pt, w.check)
		if err != nil {
			return nil, err
		}
		a := Attestation{PredicateType: w.pt, Signer: atts[0].Signer}
		if w.pt == sign.PredicateSLSAProvenance1 {
			a.Provenance, _ = sign.ParseProvenance(atts[0].Statement.Predicate)
		}
		out = append(out, a)
	}
	return out, nil
}

// requiresProvenance reports whether the policy asks for a provenance
// attestation: RequireProvenance, or any requirement on its contents.
func (o *Options) requiresProvenance() bool {
	return o.RequireProvenance || o.ProvenanceBuilderID != "" || o.ProvenanceBuilderIDRegexp != "" || o.ProvenanceSourceRepo != ""
}

// trust loads the signer half of the policy.
func (o *Options) trust(ctx context.Context) (sign.Trust, error) {
	t := sign.Trust{
		RequireKeyedTlog:  o.RequireTlog,
		IgnoreKeylessTlog: o.InsecureIgnoreTlog,
		IgnoreSCT:         o.InsecureIgnoreSCT,
	}
	if err := o.loadKeys(ctx, &t); err != nil {
		return t, err
	}
	ids, err := o.identities()
	if err != nil {
		return t, err
	}
	t.Identities = ids
	if len(t.Keys) == 0 && len(t.Identities) == 0 {
		return t, fmt.Errorf("%w: %w", ErrPolicy, ErrNoSigner)
	}
	if len(t.Identities) > 0 || o.RequireTlog {
		tm, err := o.trustedMaterial()
		if err != nil {
			return t, err
		}
		t.TrustedMaterial = tm
	}
	return t, nil
}

// identities are the keyless signers the policy accepts: Identity,
// validated, if given.
func (o *Options) identities() ([]sign.Identity, error) {
	if o.Identity == nil {
		return nil, nil
	}
	if err := o.Identity.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	return []sign.Identity{*o.Identity}, nil
}

// loadKeys adds the policy's keys to t: the loaded Verifiers (unnamed),
// then each of Keys, loaded.
func (o *Options) loadKeys(ctx context.Context, t *sign.Trust) error {
	t.Keys = append(t.Keys, o.Verifiers...)
	t.KeyNames = make([]string, len(o.Verifiers))
	for _, k := range o.Keys {
		v, err := sign.LoadPublicKey(ctx, k)
		if err != nil {
			return err
		}
		t.Keys = append(t.Keys, v)
		t.KeyNames = append(t.KeyNames, k)
	}
	return nil
}

// trustedMaterial is the Sigstore trusted root: o.TrustedMaterial, else
// the file o.TrustedRoot, else the public-good root fetched over TUF.
func (o *Options) trustedMaterial() (root.TrustedMaterial, error) {
	if o.TrustedMaterial != nil {
		return o.TrustedMaterial, nil
	}
	if o.TrustedRoot != "" {
		tm, err := root.NewTrustedRootFromPath(o.TrustedRoot)
		if err != nil {
			return nil, fmt.Errorf("loading trusted root %s: %w", o.TrustedRoot, err)
		}
		return tm, nil
	}
	o.logf("fetching the Sigstore public-good trusted root over TUF (pass --trusted-root to stay offline)")
	tm, err := root.FetchTrustedRoot()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFetchTrustedRoot, err)
	}
	return tm, nil
}

// open resolves the reference (step 1) and opens the signed subject.
func (o *Options) open(ctx context.Context) (*sign.Entity, *Result, error) {
	res := &Result{Input: o.Image}
	if o.Layout != "" {
		return o.openLayout(res)
	}
	res.Source = "registry"
	ref, err := name.ParseReference(o.Image)
	if err != nil {
		return nil, nil, fmt.Errorf("image reference %q: %w", o.Image, err)
	}
	dig, ok := ref.(name.Digest)
	if !ok {
		if o.RequireDigest {
			return nil, nil, fmt.Errorf("%w: %s (hint: pass REPO@sha256:..., as printed by fullsend image build)", ErrNotPinned, o.Image)
		}
		desc, err := remote.Head(ref, append([]remote.Option{remote.WithContext(ctx)}, o.Remote...)...)
		if err != nil {
			return nil, nil, fmt.Errorf("resolving tag %s: %w", ref, err)
		}
		dig = ref.Context().Digest(desc.Digest.String())
		res.ResolvedTag = ref.String()
		o.logf("resolved %s to %s; verifying and using only the digest", ref, dig)
	}
	ent, err := sign.OpenRemote(ctx, dig, o.Remote...)
	if err != nil {
		return nil, nil, err
	}
	res.fill(ent.Ref)
	return ent, res, nil
}

func (r *Result) fill(ref name.Digest) {
	r.Ref = ref.String()
	r.Repository = ref.Repository.Name()
	r.Digest = ref.DigestStr()
}

// checkClaims is step 3, run on each signature that passed step 2.
func (o *Options) checkClaims(cl *sign.SignedClaims, expect name.Repository, manifest map[string]string) error {
	got, err := name.NewRepository(cl.DockerReference)
	if err != nil || got.Name() != expect.Name() {
		return fmt.Errorf("signature names repository %q, expected %q (signature made for another repository)", cl.DockerReference, expect.Name())
	}
	if err := o.checkAnnotations(cl); err != nil {
		return err
	}
	return checkPoliciesDigest(cl, manifest)
}

// checkAnnotations requires every annotation of o.Annotations, with its
// value, among the signed ones (the first missing or different one, in
// key order, is the error).
func (o *Options) checkAnnotations(cl *sign.SignedClaims) error {
	for _, k := range slices.Sorted(maps.Keys(o.Annotations)) {
		v, ok := cl.Annotations[k]
		if !ok {
			return fmt.Errorf("signature lacks required annotation %s", k)
		}
		if v != o.Annotations[k] {
			return fmt.Errorf("signature annotation %s=%q, required %q", k, v, o.Annotations[k])
		}
	}
	return nil
}

// checkPoliciesDigest requires the policies digest, where the signature
// claims it and where the manifest annotates it, to be a sha256 digest,
// and the two to agree when both are given.
func checkPoliciesDigest(cl *sign.SignedClaims, manifest map[string]string) error {
	signed, hasSigned := cl.Annotations[handover.PoliciesDigestAnnotation]
	inManifest, hasManifest := manifest[handover.PoliciesDigestAnnotation]
	if err := checkDigestForm("signature", signed, hasSigned); err != nil {
		return err
	}
	if err := checkDigestForm("image", inManifest, hasManifest); err != nil {
		return err
	}
	if hasSigned && hasManifest && normDigest(signed) != normDigest(inManifest) {
		return fmt.Errorf("signature claims policies %s but the image manifest says %s", signed, inManifest)
	}
	return nil
}

// checkDigestForm requires a policies digest annotation, when present, to
// be a sha256 digest; where says whose annotation it is.
func checkDigestForm(where, digest string, present bool) error {
	if present && !policiesDigestRE.MatchString(digest) {
		return fmt.Errorf("%s annotation %s=%q is not a sha256 digest", where, handover.PoliciesDigestAnnotation, digest)
	}
	return nil
}

// policiesDigest is the signed claim, else the manifest annotation (which
// the signature covers through the manifest digest), normalized to sha256:hex.
func policiesDigest(cl *sign.SignedClaims, manifest map[string]string) string {
	if v, ok := cl.Annotations[handover.PoliciesDigestAnnotation]; ok {
		return normDigest(v)
	}
	if v, ok := manifest[handover.PoliciesDigestAnnotation]; ok && policiesDigestRE.MatchString(v) {
		return normDigest(v)
	}
	return ""
}

func normDigest(s string) string {
	if strings.HasPrefix(s, "sha256:") {
		return s
	}
	return "sha256:" + s
}

func (o *Options) checkProvenance(st *sign.Statement) error {
	p, err := sign.ParseProvenance(st.Predicate)
	if err != nil {
		return err
	}
	if err := o.checkBuilder(p.BuilderID); err != nil {
		return err
	}
	if o.ProvenanceSourceRepo != "" && p.SourceRepo != o.ProvenanceSourceRepo {
		return fmt.Errorf("provenance source %q, required %q", p.SourceRepo, o.ProvenanceSourceRepo)
	}
	return nil
}

// checkBuilder applies the builder id requirements to a provenance's
// builder id; errors name both the recorded and the required builder.
func (o *Options) checkBuilder(id string) error {
	if o.ProvenanceBuilderID != "" && id != o.ProvenanceBuilderID {
		return fmt.Errorf("provenance builder id %q, required %q", id, o.ProvenanceBuilderID)
	}
	if o.builderRE != nil && !o.builderRE.MatchString(id) {
		return fmt.Errorf("provenance builder id %q, required to match %q", id, o.ProvenanceBuilderIDRegexp)
	}
	if sign.IsLocalBuilderID(id) && o.ProvenanceBuilderID == "" && o.builderRE == nil {
		return fmt.Errorf("provenance builder id %q is a local build (signed outside CI), accepted only when required by name", id)
	}
	return nil
}

// compileBuilderRegexp compiles an anchored (^...$) builder id expression
// so that it matches whole ids only; "" is no requirement.
func compileBuilderRegexp(re string) (*regexp.Regexp, error) {
	if re == "" {
		return nil, nil
	}
	if !strings.HasPrefix(re, "^") || !strings.HasSuffix(re, "$") || strings.HasSuffix(re, `\$`) {
		return nil, fmt.Errorf("%w: provenance builder id regexp %q must be anchored: start with ^ and end with $", ErrPolicy, re)
	}
	c, err := regexp.Compile("^(?:" + re + ")$")
	if err != nil {
		return nil, fmt.Errorf("%w: provenance builder id regexp %q: %w", ErrPolicy, re, err)
	}
	return c, nil
}

func checkSBOM(st *sign.Statement) error {
	var doc struct {
		SPDXVersion string `json:"spdxVersion"`
	}
	if err := json.Unmarshal(st.Predicate, &doc); err != nil {
		return fmt.Errorf("SBOM predicate: %w", err)
	}
	if !strings.HasPrefix(doc.SPDXVersion, "SPDX-") {
		return fmt.Errorf("SBOM predicate is not an SPDX document (spdxVersion %q)", doc.SPDXVersion)
	}
	return nil
}

func appendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
