package image

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Scratch is the --base value for an empty base image.
const Scratch = "scratch"

// ErrNoBase reports Options without a base image (a registry reference,
// an OCI layout directory, an image tarball or "scratch").
var ErrNoBase = errors.New("no base image given")

// ErrPlatformNotInBase reports a requested platform the base does not provide.
var ErrPlatformNotInBase = errors.New("platform not provided by the base image")

// Base kinds, as reported in Result.BaseKind.
const (
	BaseScratch  = "scratch"
	BaseRegistry = "registry"
	BaseLayout   = "oci-layout"
	BaseTarball  = "tarball"
)

// resolvedBase is the base image selected for every requested platform.
type resolvedBase struct {
	kind string
	// name is the registry reference as given (empty for local bases).
	name string
	// digest is what name resolved to (an index or an image); zero for
	// local bases and scratch.
	digest v1.Hash
	images []v1.Image // parallel to the requested platforms
}

// resolveBase opens spec, which is "scratch", an OCI layout directory, a
// docker/OCI tarball file, or a registry reference (in that order), and
// selects one image per platform.
func resolveBase(spec string, platforms []v1.Platform, ropts []remote.Option) (*resolvedBase, error) {
	if spec == "" {
		return nil, ErrNoBase
	}
	if spec == Scratch {
		return scratchBase(platforms)
	}
	info, err := os.Stat(spec)
	if err == nil {
		if info.IsDir() {
			return layoutBase(spec, platforms)
		}
		return tarballBase(spec, platforms)
	}
	if looksLikePath(spec) {
		return nil, fmt.Errorf("base %s: %w", spec, err)
	}
	ref, err := name.ParseReference(spec)
	if err != nil {
		return nil, fmt.Errorf("base %q is neither scratch, an existing OCI layout or tarball, nor an image reference: %w", spec, err)
	}
	return registryBase(ref, platforms, ropts)
}

// scratchBase is an empty image per platform.
func scratchBase(platforms []v1.Platform) (*resolvedBase, error) {
	b := &resolvedBase{kind: BaseScratch}
	for _, p := range platforms {
		img, err := scratchImage(p)
		if err != nil {
			return nil, err
		}
		b.images = append(b.images, img)
	}
	return b, nil
}

// registryBase resolves ref in its registry: the platforms' images of an
// index, or the one image when it is one.
func registryBase(ref name.Reference, platforms []v1.Platform, ropts []remote.Option) (*resolvedBase, error) {
	desc, err := remote.Get(ref, ropts...)
	if err != nil {
		return nil, fmt.Errorf("resolving base %s: %w", ref, err)
	}
	b := &resolvedBase{kind: BaseRegistry, name: ref.Name(), digest: desc.Digest}
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, fmt.Errorf("base %s: %w", ref, err)
		}
		b.images, err = selectPlatforms(idx, platforms, ref.Name())
		return b, err
	}
	img, err := desc.Image()
	if err != nil {
		return nil, fmt.Errorf("base %s: %w", ref, err)
	}
	b.images, err = singleImage(img, platforms, ref.Name())
	return b, err
}

// looksLikePath reports a base that can only mean a local file, so a typo
// in a path is an error instead of a registry lookup.
func looksLikePath(spec string) bool {
	for _, p := range []string{"/", "./", "../", "~"} {
		if strings.HasPrefix(spec, p) {
			return true
		}
	}
	for _, s := range []string{".tar", ".tar.gz", ".tgz", "/"} {
		if strings.HasSuffix(spec, s) {
			return true
		}
	}
	return false
}

func layoutBase(dir string, platforms []v1.Platform) (*resolvedBase, error) {
	if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
		return nil, fmt.Errorf("base %s is a directory but not an OCI image layout (no oci-layout file)", dir)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("base %s: %w", dir, err)
	}
	b := &resolvedBase{kind: BaseLayout}
	b.images, err = selectPlatforms(idx, platforms, dir)
	return b, err
}

func tarballBase(file string, platforms []v1.Platform) (*resolvedBase, error) {
	img, err := tarball.ImageFromPath(file, nil)
	if err != nil {
		return nil, fmt.Errorf("base %s: reading image tarball: %w", file, err)
	}
	b := &resolvedBase{kind: BaseTarball}
	b.images, err = singleImage(img, platforms, file)
	return b, err
}

// selectPlatforms picks, for each platform, the image of idx (searching
// nested indexes, as an OCI layout's index.json usually wraps the real one).
func selectPlatforms(idx v1.ImageIndex, platforms []v1.Platform, what string) ([]v1.Image, error) {
	candidates, err := indexImages(idx, nil)
	if err != nil {
		return nil, fmt.Errorf("base %s: %w", what, err)
	}
	images := make([]v1.Image, len(platforms))
	for i, want := range platforms {
		for _, img := range candidates {
			p, err := imagePlatform(img)
			if err != nil {
				return nil, fmt.Errorf("base %s: %w", what, err)
			}
			if p.Satisfies(want) {
				images[i] = img
				break
			}
		}
		if images[i] == nil {
			return nil, fmt.Errorf("base %s: %s: %w", what, want, ErrPlatformNotInBase)
		}
	}
	return images, nil
}

// indexImages appends to images every image of ii, in manifest order,
// descending into nested indexes.
func indexImages(ii v1.ImageIndex, images []v1.Image) ([]v1.Image, error) {
	im, err := ii.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range im.Manifests {
		switch {
		case d.MediaType.IsIndex():
			child, err := ii.ImageIndex(d.Digest)
			if err != nil {
				return nil, err
			}
			if images, err = indexImages(child, images); err != nil {
				return nil, err
			}
		case d.MediaType.IsImage():
			img, err := ii.Image(d.Digest)
			if err != nil {
				return nil, err
			}
			images = append(images, img)
		}
	}
	return images, nil
}

func singleImage(img v1.Image, platforms []v1.Platform, what string) ([]v1.Image, error) {
	p, err := imagePlatform(img)
	if err != nil {
		return nil, fmt.Errorf("base %s: %w", what, err)
	}
	images := make([]v1.Image, len(platforms))
	for i, want := range platforms {
		if !p.Satisfies(want) {
			return nil, fmt.Errorf("base %s is a single %s image; %s: %w", what, p, want, ErrPlatformNotInBase)
		}
		images[i] = img
	}
	return images, nil
}

// imagePlatform reads the platform from the image config (the index
// descriptor's platform is only a hint).
func imagePlatform(img v1.Image) (*v1.Platform, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading image config: %w", err)
	}
	if p := cf.Platform(); p != nil {
		return p, nil
	}
	return &v1.Platform{}, nil
}

// scratchImage is an empty OCI image for platform p.
func scratchImage(p v1.Platform) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant, cf.OSVersion = p.OS, p.Architecture, p.Variant, p.OSVersion
	cf.RootFS.Type = "layers"
	return mutate.ConfigFile(img, cf)
}
