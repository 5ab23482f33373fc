package sign

import (
	"github.com/fullsend-ai/agent-sandbox/handover"

	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// Signature annotation keys: signed claims in the payload's "optional"
// section (what `cosign verify -a key=value` checks).
const (
	// AnnotationPoliciesDigest is the sha256 of policies/manifest.json, the
	// same value as the image annotation of that name: the signature pins
	// exactly these policies.
	AnnotationPoliciesDigest = handover.PoliciesDigestAnnotation
	// AnnotationRevision is the git commit the image was built from.
	AnnotationRevision = "dev.fullsend.git.revision"
	// AnnotationVersion is the fullsend version that signed.
	AnnotationVersion = "dev.fullsend.version"
	// AnnotationRunURL is the CI run that signed.
	AnnotationRunURL = "dev.fullsend.ci.run-url"
)

// ErrNoSubject reports a Subject with neither an image nor an index.
var ErrNoSubject = errors.New("nothing to sign")

// Claims are the facts a signature vouches for, besides the digest and the
// repository.
type Claims struct {
	PoliciesDigest  string
	GitRevision     string
	FullsendVersion string
	RunURL          string
	// Extra holds further key=value annotations (`--annotation`).
	Extra map[string]string
}

// Annotations renders the claims as signature annotations; empty values
// are left out. A key in Extra may not override a fullsend claim.
func (c Claims) Annotations() (map[string]string, error) {
	out := map[string]string{}
	for k, v := range c.Extra {
		if k == "" {
			return nil, errors.New("annotation with an empty key")
		}
		out[k] = v
	}
	for k, v := range map[string]string{
		AnnotationPoliciesDigest: c.PoliciesDigest,
		AnnotationRevision:       c.GitRevision,
		AnnotationVersion:        c.FullsendVersion,
		AnnotationRunURL:         c.RunURL,
	} {
		if v == "" {
			continue
		}
		if old, ok := out[k]; ok && old != v {
			return nil, fmt.Errorf("annotation %s=%q conflicts with the value fullsend sets (%q)", k, old, v)
		}
		out[k] = v
	}
	return out, nil
}

// Subject is what gets signed: an image or an index and the repository it
// is (or will be) stored in. The digest is computed locally from the bytes,
// never taken from a registry's word.
type Subject struct {
	Repository name.Repository
	// Exactly one of Image and Index is set.
	Image v1.Image
	Index v1.ImageIndex
}

// Digest returns the subject's manifest digest.
func (s Subject) Digest() (v1.Hash, error) {
	switch {
	case s.Image != nil && s.Index == nil:
		return s.Image.Digest()
	case s.Index != nil && s.Image == nil:
		return s.Index.Digest()
	}
	return v1.Hash{}, fmt.Errorf("%w: set exactly one of Image and Index", ErrNoSubject)
}

// Ref returns repository@digest.
func (s Subject) Ref() (name.Digest, error) {
	h, err := s.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	return s.Repository.Digest(h.String()), nil
}

// Signer makes cosign signatures and attestations with one key or one
// keyless identity.
type Signer struct {
	sv signature.SignerVerifier
	// certPEM and chainPEM are set for keyless signing (Fulcio certificate).
	certPEM, chainPEM []byte
	tlog              TransparencyLog
	// identity describes the signer for results: a key id or a certificate
	// subject and issuer.
	identity string
}

// NewKeyed returns a signer for a loaded key (see LoadPrivateKey). Its
// signatures are not uploaded to a transparency log unless WithRekor is
// used: keyed signatures of private images stay private by default.
func NewKeyed(sv signature.SignerVerifier) (*Signer, error) {
	id, err := KeyID(sv)
	if err != nil {
		return nil, fmt.Errorf("reading signer public key: %w", err)
	}
	return &Signer{sv: sv, identity: "key " + id}, nil
}

// Identity describes the signer: "key sha256:..." or the keyless
// certificate identity.
func (s *Signer) Identity() string { return s.identity }

// Options selects what Sign produces besides the image signature.
type Options struct {
	Claims Claims
	// SBOM adds an SPDX 2.3 SBOM attestation (predicate type
	// https://spdx.dev/Document).
	SBOM *SBOMOptions
	// Provenance adds a SLSA provenance v1 attestation.
	Provenance *Provenance
}

// Result summarizes a signing operation.
type Result struct {
	Ref         string            `json:"ref"`
	Digest      string            `json:"digest"`
	Signer      string            `json:"signer"`
	Annotations map[string]string `json:"annotations"`
	// Attestations lists the predicate types attached.
	Attestations []string `json:"attestations,omitempty"`
	// Transparency says where the signatures were logged: "none" or the
	// Rekor URL with log indexes.
	Transparency string `json:"transparency"`
}

// Signed holds signatures and attestations made over one subject, ready to
// be written next to it (Push, AppendToLayout).
type Signed struct {
	ref    name.Digest
	sig    oci.Signature
	atts   []oci.Signature
	dedupe signature.Verifier
	Result Result
}

// Sign signs subj (payload: cosign's simple-signing format with the digest,
// the repository and the claims) and makes the requested attestations.
// Nothing is written anywhere yet.
func (s *Signer) Sign(ctx context.Context, subj Subject, opts Options) (*Signed, error) {
	ref, err := subj.Ref()
	if err != nil {
		return nil, err
	}
	ann, err := opts.Claims.Annotations()
	if err != nil {
		return nil, err
	}
	optional := make(map[string]any, len(ann))
	for k, v := range ann {
		optional[k] = v
	}
	body, err := payload.Cosign{Image: ref, Annotations: optional}.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding signature payload: %w", err)
	}
	sig, tlogDesc, err := s.signPayload(ctx, body)
	if err != nil {
		return nil, fmt.Errorf("signing %s: %w", ref, err)
	}
	out := &Signed{ref: ref, sig: sig, dedupe: s.sv, Result: Result{
		Ref:          ref.String(),
		Digest:       ref.DigestStr(),
		Signer:       s.identity,
		Annotations:  ann,
		Transparency: tlogDesc,
	}}
	var statements []*statement
	if opts.SBOM != nil {
		st, err := sbomStatement(ctx, subj, ref, *opts.SBOM)
		if err != nil {
			return nil, err
		}
		statements = append(statements, st)
	}
	if opts.Provenance != nil {
		st, err := provenanceStatement(ref, *opts.Provenance)
		if err != nil {
			return nil, err
		}
		statements = append(statements, st)
	}
	for _, st := range statements {
		att, err := s.attest(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("attesting %s for %s: %w", st.PredicateType, ref, err)
		}
		out.atts = append(out.atts, att)
		out.Result.Attestations = append(out.Result.Attestations, st.PredicateType)
	}
	return out, nil
}

// signPayload signs a simple-signing payload and returns it as a cosign
// signature layer (with certificate and Rekor bundle when keyless).
func (s *Signer) signPayload(ctx context.Context, body []byte) (oci.Signature, string, error) {
	raw, err := s.sv.SignMessage(bytes.NewReader(body), signatureOpts(ctx)...)
	if err != nil {
		return nil, "", err
	}
	var opts []static.Option
	if s.certPEM != nil {
		opts = append(opts, static.WithCertChain(s.certPEM, s.chainPEM))
	}
	desc := "none"
	if s.tlog != nil {
		e, err := s.tlog.UploadSignature(ctx, raw, body, s.publicMaterial())
		if err != nil {
			return nil, "", err
		}
		opts = append(opts, static.WithBundle(e.bundle()))
		desc = e.Log
	}
	sig, err := static.NewSignature(body, base64.StdEncoding.EncodeToString(raw), opts...)
	if err != nil {
		return nil, "", err
	}
	return sig, desc, nil
}

// publicMaterial is what Rekor records as the signer: the certificate when
// keyless, else the PEM public key.
func (s *Signer) publicMaterial() []byte {
	if s.certPEM != nil {
		return s.certPEM
	}
	pub, err := s.sv.PublicKey()
	if err != nil {
		return nil
	}
	pem, err := marshalPublicKeyPEM(pub)
	if err != nil {
		return nil
	}
	return pem
}

func signatureOpts(ctx context.Context) []signature.SignOption {
	return []signature.SignOption{signatureContext(ctx)}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
