package publish

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fullsend-ai/agent-sandbox/image"
	"github.com/fullsend-ai/agent-sandbox/sign"
)

// SignImageOptions are the inputs of SignImage (`fullsend image sign`).
type SignImageOptions struct {
	// Image is the image to sign: REPO:TAG (resolved to its digest once,
	// and logged) or REPO@sha256:.... With OCILayout it names the
	// repository the signature is for: REPO, or REPO@sha256:... to pick one
	// manifest of several.
	Image string
	// OCILayout, when set, signs the image in this OCI layout directory
	// and adds the signature there instead of to a registry.
	OCILayout string
	// Sign chooses the signer, the claims and the attestations.
	Sign SignOptions
	// Getenv reads the CI variables and registry tokens; nil: os.Getenv.
	Getenv func(string) string
	// Log receives progress lines (tag resolution); nil discards them.
	Log io.Writer
}

// SignImage signs an image that is already stored (in a registry or an
// OCI layout) on its digest, with the claims and attestations of
// o.Sign, and stores the signature next to it.
func SignImage(ctx context.Context, o SignImageOptions) (*sign.Result, error) {
	if err := o.Sign.validate(); err != nil {
		return nil, err
	}
	getenv := orEnv(o.Getenv)
	ropts := image.RemoteOptions(ctx, image.RemoteConfig{Keychain: image.Keychain(getenv)})
	subj, ann, err := o.subject(ropts)
	if err != nil {
		return nil, err
	}
	so, err := o.Sign.resolveFromEnv(getenv, ann, nil, BaseRef(ann[image.AnnotationBaseName], ann[image.AnnotationBaseDigest]))
	if err != nil {
		return nil, err
	}
	signer, err := o.Sign.Signer(ctx, getenv)
	if err != nil {
		return nil, err
	}
	signed, err := signer.Sign(ctx, subj, so)
	if err != nil {
		return nil, err
	}
	if o.OCILayout != "" {
		err = signed.AppendToLayout(o.OCILayout)
	} else {
		err = signed.Push(ctx, ropts...)
	}
	if err != nil {
		return nil, err
	}
	return &signed.Result, nil
}

// subject reads the image to sign and its manifest annotations.
func (o *SignImageOptions) subject(ropts []remote.Option) (sign.Subject, map[string]string, error) {
	if o.OCILayout != "" {
		repoStr, digest, _ := strings.Cut(o.Image, "@")
		repo, err := name.NewRepository(repoStr)
		if err != nil {
			return sign.Subject{}, nil, invalid(ErrLayoutRepository, repoStr, err)
		}
		return sign.LayoutSubject(o.OCILayout, repo, digest)
	}
	return remoteSubject(orDiscard(o.Log), o.Image, ropts)
}

// remoteSubject resolves ref (a tag once, logged) and reads the image or
// index it names.
func remoteSubject(log io.Writer, ref string, ropts []remote.Option) (sign.Subject, map[string]string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return sign.Subject{}, nil, invalid(ErrImageRef, ref, err)
	}
	desc, err := remote.Get(r, ropts...)
	if err != nil {
		return sign.Subject{}, nil, fmt.Errorf("reading %s: %w", r, err)
	}
	if _, pinned := r.(name.Digest); !pinned {
		fmt.Fprintf(log, "resolved %s to %s@%s; signing the digest\n", r, r.Context().Name(), desc.Digest)
	}
	subj := sign.Subject{Repository: r.Context()}
	if desc.MediaType.IsIndex() {
		subj.Index, err = desc.ImageIndex()
	} else {
		subj.Image, err = desc.Image()
	}
	if err != nil {
		return subj, nil, fmt.Errorf("reading %s: %w", r, err)
	}
	return subj, sign.ManifestAnnotations(desc.Manifest), nil
}
