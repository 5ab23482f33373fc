package verify

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/fullsend-ai/agent-sandbox/sign"
)

// annotationRefName is the OCI annotation naming an image in a layout's
// index.json; `fullsend image build --tag --oci-layout` sets it to the tag.
const annotationRefName = "org.opencontainers.image.ref.name"

// layoutRef is the reference given with a layout: the repository the
// signature must name, and optionally a tag and a pinned digest.
type layoutRef struct {
	repo        name.Repository
	tag, pinned string
}

// parseLayoutRef reads REPO, REPO:TAG, REPO@sha256:... or
// REPO:TAG@sha256:.... A layout holds its image, so nothing is resolved: the
// repository is what the signature must name, a tag is checked against the
// layout's own name for the image, and a digest against the image's.
func parseLayoutRef(s string) (layoutRef, error) {
	var r layoutRef
	base := s
	if at := strings.Index(s, "@"); at >= 0 {
		base, r.pinned = s[:at], s[at+1:]
		if _, err := name.NewDigest(s); err != nil {
			return r, fmt.Errorf("%w: image reference %q: %w", ErrPolicy, s, err)
		}
	}
	if base == "" {
		return r, fmt.Errorf("%w: %w", ErrPolicy, ErrNoRepository)
	}
	repo, err := name.NewRepository(base)
	if err == nil {
		r.repo = repo
		return r, nil
	}
	// Not a bare repository: then REPO:TAG, whose tag is explicit.
	tag, terr := name.NewTag(base)
	if terr != nil {
		return r, fmt.Errorf("%w: repository %q: %w", ErrPolicy, base, err)
	}
	r.repo, r.tag = tag.Context(), tag.TagStr()
	return r, nil
}

// openLayout is step 1 for an OCI layout: the layout's image, checked
// against the digest and the tag the reference pins.
func (o *Options) openLayout(res *Result) (*sign.Entity, *Result, error) {
	res.Source = "oci-layout"
	ref, err := parseLayoutRef(o.Image)
	if err != nil {
		return nil, nil, err
	}
	ent, err := sign.OpenLayout(o.Layout, ref.repo)
	if err != nil {
		return nil, nil, err
	}
	if err := o.checkLayoutRef(ref, ent, res); err != nil {
		return nil, nil, err
	}
	res.fill(ent.Ref)
	return ent, res, nil
}

// checkLayoutRef checks the layout's image against the reference: the
// digest it pins; else, unless RequireDigest refuses an unpinned
// reference, the tag it names (recorded as res.ResolvedTag).
func (o *Options) checkLayoutRef(ref layoutRef, ent *sign.Entity, res *Result) error {
	if ref.pinned != "" {
		if ref.pinned != ent.Digest.String() {
			return fmt.Errorf("OCI layout %s holds %s, not the pinned %s", o.Layout, ent.Digest, ref.pinned)
		}
		return nil
	}
	if o.RequireDigest {
		return fmt.Errorf("%w: %s (hint: pass %s@%s)", ErrNotPinned, o.Image, ref.repo.Name(), ent.Digest)
	}
	if ref.tag == "" {
		return nil
	}
	if err := o.checkLayoutTag(ref, ent); err != nil {
		return err
	}
	res.ResolvedTag = ref.repo.Tag(ref.tag).String()
	return nil
}

// checkLayoutTag compares the tag given with the name the layout's index
// gives the image (org.opencontainers.image.ref.name). A layout that names
// none cannot contradict the tag: only the digest is verified, and said so.
func (o *Options) checkLayoutTag(ref layoutRef, ent *sign.Entity) error {
	named := ""
	if idx, err := layout.ImageIndexFromPath(o.Layout); err == nil {
		if im, err := idx.IndexManifest(); err == nil {
			for _, d := range im.Manifests {
				if d.Digest == ent.Digest {
					named = d.Annotations[annotationRefName]
					break
				}
			}
		}
	}
	switch named {
	case ref.tag:
		o.logf("OCI layout %s names its image %s; verifying and using only the digest %s", o.Layout, named, ent.Digest)
	case "":
		o.logf("OCI layout %s names no tag for its image; tag %s is not checked, only the digest %s is verified", o.Layout, ref.tag, ent.Digest)
	default:
		return fmt.Errorf("OCI layout %s names its image %q, not %q", o.Layout, named, ref.tag)
	}
	return nil
}
