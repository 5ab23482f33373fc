package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Sentinel errors for push and output callers.
var (
	// ErrLatestTag refuses the mutable "latest" tag unless explicitly allowed.
	ErrLatestTag = errors.New(`refusing the mutable "latest" tag`)
	// ErrNoTag reports a push without any tag to push to.
	ErrNoTag = errors.New("no tag given")
	// ErrImmutableTag reports an immutable tag that already names another digest.
	ErrImmutableTag = errors.New("immutable tag already points at a different image")
)

// PushOptions configure Push.
type PushOptions struct {
	// Tags are moved to the image after every repository holds it.
	Tags []name.Tag
	// ImmutableTags are written only if absent or already pointing at this
	// digest; they are checked before anything is uploaded.
	ImmutableTags []name.Tag
	// AllowLatest permits a tag named "latest".
	AllowLatest bool
	Remote      RemoteConfig
	// BeforeTag runs after every repository holds the image by digest and
	// before any tag is written: signatures and attestations are pushed
	// there, so no tag ever points at an unsigned image. An error stops
	// the push before tagging.
	BeforeTag func(ctx context.Context, refs []name.Digest) error
}

// Push uploads the result to every repository named by the tags, by digest
// first, and only then writes the tags: a failed push never leaves a tag
// pointing at a partial image. It returns the repo@digest references.
func Push(ctx context.Context, r *Result, o PushOptions) ([]name.Digest, error) {
	all := append(append([]name.Tag(nil), o.Tags...), o.ImmutableTags...)
	if len(all) == 0 {
		return nil, fmt.Errorf("push: %w", ErrNoTag)
	}
	for _, t := range all {
		if t.TagStr() == "latest" && !o.AllowLatest {
			return nil, fmt.Errorf("push %s: %w", t, ErrLatestTag)
		}
	}
	ropts := RemoteOptions(ctx, o.Remote)
	if err := checkImmutable(r, o.ImmutableTags, ropts); err != nil {
		return nil, err
	}
	// Phase 1: the image (blobs, then manifests) by digest, per repository.
	refs, err := pushByDigest(r, all, o.Remote.Progress, ropts)
	if err != nil {
		return nil, err
	}
	if o.BeforeTag != nil {
		if err := o.BeforeTag(ctx, refs); err != nil {
			return refs, fmt.Errorf("before tagging (the image is pushed by digest, no tag was written): %w", err)
		}
	}
	// Phase 2: tags, each a manifest PUT of bytes the registry already has.
	for _, t := range all {
		if err := remote.Tag(t, r.Taggable(), ropts...); err != nil {
			return refs, fmt.Errorf("tagging %s (the image itself is pushed as %s): %w", t, t.Context().Digest(r.Digest.String()), err)
		}
	}
	return refs, nil
}

// checkImmutable refuses immutable tags that already name another digest.
func checkImmutable(r *Result, tags []name.Tag, ropts []remote.Option) error {
	for _, t := range tags {
		desc, err := remote.Head(t, ropts...)
		var terr *transport.Error
		switch {
		case errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound:
		case err != nil:
			return fmt.Errorf("checking immutable tag %s: %w", t, err)
		case desc.Digest != r.Digest:
			return fmt.Errorf("tag %s is %s, this build is %s: %w", t, desc.Digest, r.Digest, ErrImmutableTag)
		}
	}
	return nil
}

// pushByDigest uploads the image to every repository of tags, once each,
// by digest only, and returns the repo@digest references.
func pushByDigest(r *Result, tags []name.Tag, progress io.Writer, ropts []remote.Option) ([]name.Digest, error) {
	var refs []name.Digest
	seen := map[string]bool{}
	for _, t := range tags {
		repo := t.Context()
		if seen[repo.String()] {
			continue
		}
		seen[repo.String()] = true
		ref := repo.Digest(r.Digest.String())
		opts := ropts
		var wait func()
		status := NewStatus(progress)
		if status != nil {
			var po remote.Option
			po, wait = pushProgress(status, "pushing "+repo.String())
			opts = append(append([]remote.Option(nil), ropts...), po)
		}
		err := remote.Push(ref, r.Taggable(), opts...)
		if wait != nil {
			wait()
		}
		status.Close()
		if err != nil {
			return nil, fmt.Errorf("pushing %s: %w", ref, err)
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

// ShaTag is the immutable tag for a build: "sha-" plus the first 12
// characters of the git revision, or of the image digest without one.
func ShaTag(revision string, digest v1.Hash) string {
	if len(revision) >= 12 && isHex(revision) {
		return "sha-" + strings.ToLower(revision[:12])
	}
	return "sha256-" + digest.Hex[:12]
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// WriteLayout writes the result as an OCI image layout in dir. The layout is
// written next to dir and renamed into place, so dir is never left half
// written; an existing dir is replaced only if it is an OCI layout.
// refName, if set, becomes the org.opencontainers.image.ref.name annotation.
func WriteLayout(r *Result, dir, refName string) error {
	if err := checkReplaceable(dir); err != nil {
		return err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return fmt.Errorf("writing oci layout: %w", err)
	}
	var opts []layout.Option
	if refName != "" {
		opts = append(opts, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": refName}))
	}
	if r.Index != nil {
		err = p.AppendIndex(r.Index, opts...)
	} else {
		err = p.AppendImage(r.Image, opts...)
	}
	if err != nil {
		return fmt.Errorf("writing oci layout: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// checkReplaceable refuses a dir that exists and is not a directory, or
// is a non-empty directory that is not an OCI layout.
func checkReplaceable(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return nil // nothing there to protect
	}
	if !info.IsDir() {
		return fmt.Errorf("oci layout %s exists and is not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			return fmt.Errorf("oci layout %s exists, is not empty and is not an OCI layout; refusing to replace it", dir)
		}
	}
	return nil
}
