package sign

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	cremote "github.com/sigstore/cosign/v2/pkg/cosign/remote"
	"github.com/sigstore/cosign/v2/pkg/oci"
	cempty "github.com/sigstore/cosign/v2/pkg/oci/empty"
	clayout "github.com/sigstore/cosign/v2/pkg/oci/layout"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	"github.com/sigstore/sigstore/pkg/signature/options"

	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
)

// Annotations cosign puts on the descriptors of an OCI layout's index.json
// to tell the signed subject from its signatures and attestations
// (cosign save / cosign verify --local-image).
const (
	layoutKind           = "kind"
	layoutKindImage      = "dev.cosignproject.cosign/image"
	layoutKindImageIndex = "dev.cosignproject.cosign/imageIndex"
	layoutKindSigs       = "dev.cosignproject.cosign/sigs"
	layoutKindAtts       = "dev.cosignproject.cosign/atts"
)

// ErrNoLayoutSubject reports an OCI layout without one unambiguous image
// (or index) to sign.
var ErrNoLayoutSubject = errors.New("no unambiguous image in the OCI layout")

// UnsignedLayoutError reports an OCI layout whose index marks no signed
// subject: it was not written by a signing tool (or cosign save).
type UnsignedLayoutError struct{ Path string }

func (e *UnsignedLayoutError) Error() string {
	return fmt.Sprintf("OCI layout %s marks no signed image (no %q annotation)", e.Path, layoutKind)
}

// isSignatureKind reports whether a layout descriptor's kind annotation
// marks cosign signatures or attestations rather than a subject.
func isSignatureKind(kind string) bool { return kind == layoutKindSigs || kind == layoutKindAtts }

// LayoutSubject reads the image (or index) of the OCI layout at dir to
// sign for repo, with its manifest annotations. Signatures and
// attestations already in the layout are skipped; digest, when set
// ("sha256:..."), selects the manifest when the layout holds several.
func LayoutSubject(dir string, repo name.Repository, digest string) (Subject, map[string]string, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return Subject{}, nil, fmt.Errorf("opening OCI layout %s: %w", dir, err)
	}
	ii, err := p.ImageIndex()
	if err != nil {
		return Subject{}, nil, fmt.Errorf("reading OCI layout %s: %w", dir, err)
	}
	im, err := ii.IndexManifest()
	if err != nil {
		return Subject{}, nil, fmt.Errorf("reading OCI layout %s: %w", dir, err)
	}
	cands := subjectCandidates(im.Manifests, digest)
	if len(cands) != 1 {
		return Subject{}, nil, fmt.Errorf("%s: %w (%d candidates; pass REPO@sha256:... to pick one)", dir, ErrNoLayoutSubject, len(cands))
	}
	subj := Subject{Repository: repo}
	var raw []byte
	if cands[0].MediaType.IsIndex() {
		if subj.Index, err = ii.ImageIndex(cands[0].Digest); err == nil {
			raw, err = subj.Index.RawManifest()
		}
	} else {
		if subj.Image, err = ii.Image(cands[0].Digest); err == nil {
			raw, err = subj.Image.RawManifest()
		}
	}
	if err != nil {
		return subj, nil, fmt.Errorf("reading %s in %s: %w", cands[0].Digest, dir, err)
	}
	return subj, ManifestAnnotations(raw), nil
}

// subjectCandidates is the layout's manifests that are not signatures or
// attestations and, when digest is set, have that digest.
func subjectCandidates(manifests []v1.Descriptor, digest string) []v1.Descriptor {
	var cands []v1.Descriptor
	for _, d := range manifests {
		if isSignatureKind(d.Annotations[layoutKind]) {
			continue
		}
		if digest == "" || d.Digest.String() == digest {
			cands = append(cands, d)
		}
	}
	return cands
}

// ManifestAnnotations returns the annotations of a raw image manifest or
// index, or an empty map.
func ManifestAnnotations(raw []byte) map[string]string {
	var m struct {
		Annotations map[string]string `json:"annotations"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Annotations == nil {
		return map[string]string{}
	}
	return m.Annotations
}

// Ref returns the signed repository@digest.
func (sd *Signed) Ref() string { return sd.ref.String() }

// Push writes the signature and attestations to the subject's repository
// under cosign's tags (sha256-<hex>.sig, sha256-<hex>.att), appending to
// what is already there. The subject must already be in the registry
// (push the image first): the signatures are attached to what the registry
// serves for that digest, and the digest is checked against the signed one.
func (sd *Signed) Push(ctx context.Context, opts ...remote.Option) error {
	ropts := append([]remote.Option{remote.WithContext(ctx)}, opts...)
	oopts := []ociremote.Option{ociremote.WithRemoteOptions(ropts...)}
	se, err := ociremote.SignedEntity(sd.ref, oopts...)
	if err != nil {
		return fmt.Errorf("reading %s from the registry (push the image before its signatures): %w", sd.ref, err)
	}
	if err := sd.checkDigest(se); err != nil {
		return err
	}
	se, err = sd.attach(se)
	if err != nil {
		return err
	}
	if err := ociremote.WriteSignatures(sd.ref.Repository, se, oopts...); err != nil {
		return fmt.Errorf("writing signature of %s: %w", sd.ref, err)
	}
	if len(sd.atts) > 0 {
		if err := ociremote.WriteAttestations(sd.ref.Repository, se, oopts...); err != nil {
			return fmt.Errorf("writing attestations of %s: %w", sd.ref, err)
		}
	}
	return nil
}

func (sd *Signed) checkDigest(se oci.SignedEntity) error {
	h, err := se.Digest()
	if err != nil {
		return fmt.Errorf("digest of %s: %w", sd.ref, err)
	}
	if h.String() != sd.ref.DigestStr() {
		return fmt.Errorf("%s: the stored subject has digest %s, not the signed %s", sd.ref.Repository, h, sd.ref.DigestStr())
	}
	return nil
}

// attach adds the signature and attestations to se, skipping ones that are
// already there (same payload, verifying with the same key).
func (sd *Signed) attach(se oci.SignedEntity) (oci.SignedEntity, error) {
	dd := cremote.NewDupeDetector(sd.dedupe)
	se, err := mutate.AttachSignatureToEntity(se, sd.sig, mutate.WithDupeDetector(dd))
	if err != nil {
		return nil, fmt.Errorf("attaching signature: %w", err)
	}
	ad := attestationDupes{sd.dedupe}
	for _, att := range sd.atts {
		se, err = mutate.AttachAttestationToEntity(se, att, mutate.WithDupeDetector(ad))
		if err != nil {
			return nil, fmt.Errorf("attaching attestation: %w", err)
		}
	}
	return se, nil
}

// AppendToLayout adds the signature and attestations to the OCI image
// layout at path, which must already hold the signed subject (as written by
// image.WriteLayout or cosign save). The layout ends up in cosign's format:
// the subject's descriptor is marked as the signed image (or index) and the
// signatures and attestations are one image each, so `cosign verify
// --local-image` and `fullsend verify --oci-layout` both read it. index.json is
// replaced atomically, after every blob is in place.
func (sd *Signed) AppendToLayout(path string) error {
	p, err := layout.FromPath(path)
	if err != nil {
		return fmt.Errorf("opening OCI layout %s: %w", path, err)
	}
	ii, err := p.ImageIndex()
	if err != nil {
		return fmt.Errorf("reading OCI layout %s: %w", path, err)
	}
	im, err := ii.IndexManifest()
	if err != nil {
		return fmt.Errorf("reading OCI layout %s: %w", path, err)
	}
	sigs, atts, err := layoutSignatures(path)
	if err != nil {
		return err
	}
	kept, err := sd.markSubject(path, im.Manifests)
	if err != nil {
		return err
	}
	dd := cremote.NewDupeDetector(sd.dedupe)
	if sigs, err = appendDeduped(sigs, dd, sd.sig); err != nil {
		return err
	}
	if atts, err = appendDeduped(atts, attestationDupes{sd.dedupe}, sd.atts...); err != nil {
		return err
	}
	for _, x := range []struct {
		img  oci.Signatures
		kind string
	}{{sigs, layoutKindSigs}, {atts, layoutKindAtts}} {
		if kept, err = appendSignatureImage(p, path, kept, x.img, x.kind); err != nil {
			return err
		}
	}
	im.Manifests = kept
	raw, err := json.MarshalIndent(im, "", "   ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(path, "index.json"), raw, 0o644)
}

// layoutSignatures reads the signatures and attestations already in the
// layout at path (empty ones when there are none).
func layoutSignatures(path string) (sigs, atts oci.Signatures, err error) {
	se, err := clayout.SignedImageIndex(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading OCI layout %s: %w", path, err)
	}
	if sigs, err = se.Signatures(); err != nil {
		return nil, nil, fmt.Errorf("reading signatures in %s: %w", path, err)
	}
	if atts, err = se.Attestations(); err != nil {
		return nil, nil, fmt.Errorf("reading attestations in %s: %w", path, err)
	}
	if sigs == nil {
		sigs = cempty.Signatures()
	}
	if atts == nil {
		atts = cempty.Signatures()
	}
	return sigs, atts, nil
}

// markSubject returns the layout's descriptors without its signatures and
// attestations (they are rewritten), the signed subject marked with
// cosign's kind annotation. The layout must hold the subject and mark no
// other one.
func (sd *Signed) markSubject(path string, manifests []v1.Descriptor) ([]v1.Descriptor, error) {
	var kept []v1.Descriptor
	found := false
	for _, desc := range manifests {
		if isSignatureKind(desc.Annotations[layoutKind]) {
			continue // replaced by the caller
		}
		if desc.Digest.String() == sd.ref.DigestStr() {
			found = true
			ann := make(map[string]string, len(desc.Annotations)+1)
			maps.Copy(ann, desc.Annotations)
			ann[layoutKind] = layoutKindImage
			if desc.MediaType.IsIndex() {
				ann[layoutKind] = layoutKindImageIndex
			}
			desc.Annotations = ann
		} else if k := desc.Annotations[layoutKind]; k == layoutKindImage || k == layoutKindImageIndex {
			return nil, fmt.Errorf("OCI layout %s already marks %s as its signed subject, not %s", path, desc.Digest, sd.ref.DigestStr())
		}
		kept = append(kept, desc)
	}
	if !found {
		return nil, fmt.Errorf("OCI layout %s does not hold %s: write the image there first", path, sd.ref.DigestStr())
	}
	return kept, nil
}

// appendSignatureImage writes img (signatures or attestations, per kind)
// into the layout and appends its descriptor to kept; an empty img is
// left out.
func appendSignatureImage(p layout.Path, path string, kept []v1.Descriptor, img oci.Signatures, kind string) ([]v1.Descriptor, error) {
	if n, err := img.Get(); err != nil {
		return kept, err
	} else if len(n) == 0 {
		return kept, nil
	}
	if err := p.WriteImage(img); err != nil {
		return kept, fmt.Errorf("writing %s to %s: %w", kind, path, err)
	}
	desc, err := partial.Descriptor(img)
	if err != nil {
		return kept, err
	}
	desc.Annotations = map[string]string{layoutKind: kind}
	return append(kept, *desc), nil
}

func appendDeduped(base oci.Signatures, dd mutate.DupeDetector, add ...oci.Signature) (oci.Signatures, error) {
	var fresh []oci.Signature
	for _, s := range add {
		dup, err := dd.Find(base, s)
		if err != nil {
			return nil, fmt.Errorf("looking for duplicate signatures: %w", err)
		}
		if dup == nil {
			fresh = append(fresh, s)
		}
	}
	if len(fresh) == 0 {
		return base, nil
	}
	return mutate.AppendSignatures(base, false, fresh...)
}

// attestationDupes finds an existing attestation equal to a new one: same
// predicate type, the same in-toto statement bytes, and a DSSE signature
// that verifies with the signer's key. (cosign's DupeDetector only knows
// simple-signing layers.) Re-signing a reproducible build therefore does
// not grow the .att image.
type attestationDupes struct{ v signature.Verifier }

func (d attestationDupes) Find(existing oci.Signatures, newAtt oci.Signature) (oci.Signature, error) {
	want, err := attestationStatementBytes(newAtt)
	if err != nil {
		return nil, err
	}
	newAnn, err := newAtt.Annotations()
	if err != nil {
		return nil, err
	}
	list, err := existing.Get()
	if err != nil {
		return nil, err
	}
	for _, old := range list {
		ann, err := old.Annotations()
		if err != nil || ann["predicateType"] != newAnn["predicateType"] {
			continue
		}
		got, err := attestationStatementBytes(old)
		if err != nil || !bytes.Equal(got, want) {
			continue
		}
		env, err := old.Payload()
		if err != nil {
			continue
		}
		if dsse.WrapVerifier(d.v).VerifySignature(bytes.NewReader(env), nil) == nil {
			return old, nil
		}
	}
	return nil, nil
}

// signatureContext passes ctx to KMS-backed signers.
func signatureContext(ctx context.Context) signature.SignOption {
	return options.WithContext(ctx)
}

func marshalPublicKeyPEM(pub crypto.PublicKey) ([]byte, error) {
	return cryptoutils.MarshalPublicKeyToPEM(pub)
}
