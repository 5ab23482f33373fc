package publish

import (
	"context"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/fullsend-ai/agent-sandbox/gitrepo"
)

// DefaultVersion is the version of a build without an explicit one: `git
// describe --tags --always --dirty` of dir (v1.2.0, v1.2.0-3-gabcdef0,
// abcdef0-dirty), or "" outside a git work tree.
func DefaultVersion(ctx context.Context, dir string) string {
	return gitrepo.Describe(ctx, dir)
}

// CacheDir decides the compressed-layer cache directory: none with
// noCache, else dir when set, else "fullsend/layers" under the user cache
// directory (userCacheDir is os.UserCacheDir), else none.
func CacheDir(dir string, noCache bool, userCacheDir func() (string, error)) string {
	switch {
	case noCache:
		return ""
	case dir != "":
		return dir
	}
	base, err := userCacheDir()
	if err != nil || base == "" {
		return ""
	}
	return filepath.Join(base, "fullsend", "layers")
}

// DefaultTarballRepository names the image in a tarball written without a
// tag.
const DefaultTarballRepository = "fullsend/agent-sandbox"

// TarballTag is the tag of an image written to a tarball without a tag:
// meant to be the version when it is a valid tag, else "build". The
// strict check below needs a registry in "x:VERSION", so today it is
// always "build"; kept as is, since the tag is part of the tarball.
func TarballTag(version string) string {
	if _, err := name.NewTag("x:"+version, name.StrictValidation); version != "" && err == nil {
		return version
	}
	return "build"
}

// ShaTags returns the tag named tag in every repository of tags, in order,
// once per repository.
func ShaTags(tags []name.Tag, tag string) []name.Tag {
	var out []name.Tag
	for _, repo := range repositories(tags) {
		out = append(out, repo.Tag(tag))
	}
	return out
}

// repositories returns the repositories of tags in order, each once.
func repositories(tags []name.Tag) []name.Repository {
	var out []name.Repository
	seen := map[string]bool{}
	for _, t := range tags {
		repo := t.Context()
		if seen[repo.String()] {
			continue
		}
		seen[repo.String()] = true
		out = append(out, repo)
	}
	return out
}

// BaseRef is the base image by digest (REPO@sha256:...) from the base
// name and digest annotations, or "" unless both are set and the name is a
// reference.
func BaseRef(baseName, baseDigest string) string {
	if baseName == "" || baseDigest == "" {
		return ""
	}
	if r, err := name.ParseReference(baseName); err == nil {
		return r.Context().Name() + "@" + baseDigest
	}
	return ""
}
