package publish

import (
	"context"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fullsend-ai/agent-sandbox/image"
	"github.com/fullsend-ai/agent-sandbox/sign"
)

// Artifact is what gets published: a built image and the signatures made
// over its digest, one per repository in the order of the tags (none when
// unsigned).
type Artifact struct {
	Image      *image.Result
	Signatures []*sign.Signed
}

// Published records where an artifact was written.
type Published struct {
	// Refs are the pushed repo@sha256:... references.
	Refs []string
	// Tags are the tags written, mutable ones first.
	Tags []string
	// OCILayout and Tarball are the local outputs written.
	OCILayout string
	Tarball   string
}

func (p *Published) add(q Published) {
	p.Refs = append(p.Refs, q.Refs...)
	p.Tags = append(p.Tags, q.Tags...)
	if q.OCILayout != "" {
		p.OCILayout = q.OCILayout
	}
	if q.Tarball != "" {
		p.Tarball = q.Tarball
	}
}

// Publisher writes an artifact somewhere. A publisher that can hold
// signatures stores them before anything names the image by a tag.
type Publisher interface {
	Publish(ctx context.Context, a *Artifact) (Published, error)
}

// Multi publishes to each publisher in turn and stops at the first error;
// it returns what was published up to and including the failing one.
func Multi(ps ...Publisher) Publisher { return multi(ps) }

type multi []Publisher

func (m multi) Publish(ctx context.Context, a *Artifact) (Published, error) {
	var out Published
	for _, p := range m {
		got, err := p.Publish(ctx, a)
		out.add(got)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// Layout writes the image as an OCI image layout in Dir (replacing an
// earlier layout there) and adds the first signature in cosign's layout
// format, so `fullsend verify --oci-layout` and `cosign verify --local-image`
// read it.
type Layout struct {
	Dir string
	// RefName becomes the org.opencontainers.image.ref.name annotation
	// ("": none).
	RefName string
}

// Publish implements Publisher.
func (l Layout) Publish(_ context.Context, a *Artifact) (Published, error) {
	if err := image.WriteLayout(a.Image, l.Dir, l.RefName); err != nil {
		return Published{}, err
	}
	if len(a.Signatures) > 0 {
		if err := a.Signatures[0].AppendToLayout(l.Dir); err != nil {
			return Published{}, err
		}
	}
	return Published{OCILayout: l.Dir}, nil
}

// Tarball writes the image as an image archive for docker load (see
// image.WriteTarball); it holds no signatures.
type Tarball struct {
	File string
	// Ref names the image in the archive.
	Ref name.Reference
}

// Publish implements Publisher.
func (t Tarball) Publish(_ context.Context, a *Artifact) (Published, error) {
	if err := image.WriteTarball(a.Image, t.File, t.Ref); err != nil {
		return Published{}, err
	}
	return Published{Tarball: t.File}, nil
}

// Registry pushes the image to the repositories of Tags: the image by
// digest first, then every signature, and only then the tags (image.Push
// with a BeforeTag step), so no tag ever names an unsigned image and a
// failed push leaves no tag behind.
type Registry struct {
	Tags        []name.Tag
	AllowLatest bool
	// ShaTag also writes the immutable image.ShaTag(Revision, digest) in
	// every repository of Tags; it is never moved once written.
	ShaTag   bool
	Revision string
	Remote   image.RemoteConfig
}

// Publish implements Publisher.
func (r Registry) Publish(ctx context.Context, a *Artifact) (Published, error) {
	po := image.PushOptions{Tags: r.Tags, AllowLatest: r.AllowLatest, Remote: r.Remote}
	if r.ShaTag {
		po.ImmutableTags = ShaTags(r.Tags, image.ShaTag(r.Revision, a.Image.Digest))
	}
	if len(a.Signatures) > 0 {
		po.BeforeTag = func(ctx context.Context, _ []name.Digest) error {
			return pushSignatures(ctx, a.Signatures, image.RemoteOptions(ctx, r.Remote))
		}
	}
	refs, err := image.Push(ctx, a.Image, po)
	var out Published
	for _, ref := range refs {
		out.Refs = append(out.Refs, ref.String())
	}
	if err != nil {
		return out, err
	}
	for _, t := range append(append([]name.Tag(nil), po.Tags...), po.ImmutableTags...) {
		out.Tags = append(out.Tags, t.String())
	}
	return out, nil
}

// pushSignatures writes every signature next to its pushed image.
func pushSignatures(ctx context.Context, sigs []*sign.Signed, ropts []remote.Option) error {
	for _, sd := range sigs {
		if err := sd.Push(ctx, ropts...); err != nil {
			return err
		}
	}
	return nil
}
