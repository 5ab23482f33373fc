package publish

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/gitrepo"
	"github.com/fullsend-ai/agent-sandbox/image"
	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
	"github.com/fullsend-ai/agent-sandbox/sign"
)

// Result is a published build.
type Result struct {
	// Image is the built image or index.
	Image *image.Result
	// Version is the version the image was built with (resolved default
	// included).
	Version string
	// Published says where the image went.
	Published
	// Signatures are the signatures made, one per repository.
	Signatures []sign.Result
}

// Run builds the image, signs its digest when asked, and publishes it:
// OCI layout (with the signature), tarball, then the registries (by
// digest, signatures, tags), and finally writes the digest file. Nothing
// is written before the build and the signatures succeed, and no tag is
// written before every signature is stored. On a publishing error the
// partial Result says what was already written.
func Run(ctx context.Context, o Options) (*Result, error) {
	tags, err := o.checkOutputs()
	if err != nil {
		return nil, err
	}
	bo, err := o.ImageOptions(ctx)
	if err != nil {
		return nil, err
	}
	var signer *sign.Signer
	if o.Sign != nil {
		if signer, err = o.signer(ctx, tags); err != nil {
			return nil, err
		}
	}
	if o.Prepare != nil {
		if err := o.Prepare(ctx); err != nil {
			return nil, err
		}
	}
	img, err := image.Build(ctx, bo)
	if err != nil {
		return nil, err
	}
	art := &Artifact{Image: img}
	if signer != nil {
		started := time.Now()
		if art.Signatures, err = o.signatures(ctx, signer, img, tags, bo.Version); err != nil {
			return nil, err
		}
		fmt.Fprintf(o.log(), "signed %s (%d signature(s) with attestations) in %s\n", img.Digest, len(art.Signatures), time.Since(started).Round(time.Millisecond))
	}
	res := &Result{Image: img, Version: bo.Version}
	started := time.Now()
	res.Published, err = o.publisher(ctx, tags, bo).Publish(ctx, art)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(o.log(), "published %s in %s\n", img.Digest, time.Since(started).Round(time.Millisecond))
	for _, sd := range art.Signatures {
		res.Signatures = append(res.Signatures, sd.Result)
	}
	if o.DigestFile != "" {
		if err := writeDigestFile(o.DigestFile, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// checkOutputs checks the base and the outputs and parses the tags.
func (o *Options) checkOutputs() ([]name.Tag, error) {
	if o.Base == "" {
		return nil, invalid(ErrNoBase, "", nil)
	}
	if o.Push && len(o.Tags) == 0 {
		return nil, invalid(ErrPushNeedsTag, "", nil)
	}
	var tags []name.Tag
	for _, s := range o.Tags {
		t, err := name.NewTag(s, name.StrictValidation)
		if err != nil {
			return nil, invalid(ErrTag, s, err)
		}
		tags = append(tags, t)
	}
	return tags, nil
}

// signer checks that the signature has a repository and a place to go,
// then makes the signer (before the build: a wrong password fails fast).
func (o *Options) signer(ctx context.Context, tags []name.Tag) (*sign.Signer, error) {
	if len(tags) == 0 {
		return nil, invalid(ErrSignNeedsTag, "", nil)
	}
	if !o.Push && o.OCILayout == "" {
		return nil, invalid(ErrSignNeedsOutput, "", nil)
	}
	return o.Sign.Signer(ctx, o.getenv)
}

// signatures signs the build once per repository named by tags, on the
// locally computed digest.
func (o *Options) signatures(ctx context.Context, signer *sign.Signer, img *image.Result, tags []name.Tag, version string) ([]*sign.Signed, error) {
	base := ""
	if img.BaseDigest.Hex != "" {
		base = BaseRef(img.BaseName, img.BaseDigest.String())
	}
	params := map[string]any{"base": o.Base, "platforms": o.Platforms, "version": version}
	so, err := o.Sign.resolveFromEnv(o.getenv, img.Annotations, params, base)
	if err != nil {
		return nil, err
	}
	var out []*sign.Signed
	for _, repo := range repositories(tags) {
		sd, err := signer.Sign(ctx, sign.Subject{Repository: repo, Image: img.Image, Index: img.Index}, so)
		if err != nil {
			return nil, err
		}
		out = append(out, sd)
	}
	return out, nil
}

// publisher is the outputs of o in their order: local files first, the
// registries last.
func (o *Options) publisher(ctx context.Context, tags []name.Tag, bo image.Options) Publisher {
	var ps []Publisher
	if o.OCILayout != "" {
		l := Layout{Dir: o.OCILayout}
		if len(tags) > 0 {
			l.RefName = tags[0].TagStr()
		}
		ps = append(ps, l)
	}
	if o.Tarball != "" {
		t := Tarball{File: o.Tarball}
		if len(tags) > 0 {
			t.Ref = tags[0]
		} else {
			// TarballTag is always a valid tag.
			t.Ref, _ = name.NewTag(DefaultTarballRepository + ":" + TarballTag(bo.Version))
		}
		ps = append(ps, t)
	}
	if o.Push {
		ps = append(ps, Registry{
			Tags: tags, AllowLatest: o.AllowLatest, ShaTag: o.ShaTag, Revision: bo.Revision,
			Remote: image.RemoteConfig{Keychain: image.Keychain(o.getenv), Progress: o.Progress},
		})
	}
	return Multi(ps...)
}

// writeDigestFile writes the pushed references, or the digest when
// nothing was pushed.
func writeDigestFile(file string, res *Result) error {
	lines := res.Refs
	if len(lines) == 0 {
		lines = []string{res.Image.Digest.String()}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("writing digest file: %w", err)
	}
	if err := atomicfile.Write(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing digest file: %w", err)
	}
	return nil
}

// ImageOptions resolves the build inputs of o into image.Options: it
// parses the platforms and binaries, checks the project directory, reads
// the timestamp (logged), finds the source module when a platform has no
// prebuilt binary, and applies the defaults of Version, Revision,
// SourceURL and CacheDir.
func (o *Options) ImageOptions(ctx context.Context) (image.Options, error) {
	platforms, err := image.ParsePlatforms(o.Platforms)
	if err != nil {
		return image.Options{}, invalid(ErrPlatform, "", err)
	}
	if info, err := os.Stat(o.Dir); err != nil || !info.IsDir() {
		return image.Options{}, invalid(ErrNotDir, o.Dir, nil)
	}
	// The project is read through a root: no link leads out of it. The
	// root lives as long as the options (closed when collected).
	project, err := os.OpenRoot(o.Dir)
	if err != nil {
		return image.Options{}, invalid(ErrNotDir, o.Dir, err)
	}
	created, source, err := image.ResolveEpoch(ctx, o.Dir, o.getenv)
	if err != nil {
		return image.Options{}, invalid(ErrEpoch, "", err)
	}
	fmt.Fprintf(o.log(), "timestamps: %s (%s)\n", created.Format("2006-01-02T15:04:05Z"), source)
	bo := image.Options{
		Base:        o.Base,
		BaseName:    o.BaseName,
		Platforms:   platforms,
		Project:     project.FS(),
		ProjectName: o.Dir,
		Version:     o.Version,
		Revision:    o.Revision,
		SourceURL:   o.SourceURL,
		Created:     created,
		Title:       o.Title,
		Description: o.Description,
		Remote:      image.RemoteOptions(ctx, image.RemoteConfig{Keychain: image.Keychain(o.getenv)}),
		Log:         o.Log,
		Progress:    o.Progress,
	}
	if bo.Binaries, err = parseBinaries(o.Binaries, platforms); err != nil {
		return bo, err
	}
	if err := o.binarySource(&bo); err != nil {
		return bo, err
	}
	o.applyDefaults(ctx, &bo)
	return bo, nil
}

// binarySource sets where bo's binaries without a prebuilt one come from:
// the source module o.Source, else the running executable (o.Self, else
// the current one) with a fullsend checkout around the current directory
// for what it cannot serve.
func (o *Options) binarySource(bo *image.Options) error {
	var err error
	if o.Source != "" {
		bo.Source, err = image.FindSource(o.Source)
		return err
	}
	bo.Self = o.Self
	if bo.Self == nil {
		bo.Self = image.CurrentExecutable()
	}
	// A checkout of fullsend around the current directory compiles
	// what the running binary cannot serve (development).
	if image.NeedsSource(*bo) {
		bo.Source, _ = image.FindSource(".")
	}
	return image.CheckBinaries(*bo)
}

// applyDefaults fills bo's Revision (git), SourceURL (CI environment) and
// Version when o left them empty, and its CacheDir.
func (o *Options) applyDefaults(ctx context.Context, bo *image.Options) {
	if bo.Revision == "" {
		bo.Revision = gitrepo.Head(ctx, o.Dir)
	}
	if bo.SourceURL == "" {
		bo.SourceURL = cienv.Detect(o.getenv).RepositoryURL()
	}
	if bo.Version == "" {
		bo.Version = DefaultVersion(ctx, o.Dir)
	}
	bo.CacheDir = CacheDir(o.CacheDir, o.NoCache, os.UserCacheDir)
}

// parseBinaries parses PLATFORM=PATH specs into a map keyed by the
// platform's canonical form; every platform must be one of platforms.
func parseBinaries(specs []string, platforms []v1.Platform) (map[string]string, error) {
	out := map[string]string{}
	for _, b := range specs {
		plat, path, ok := strings.Cut(b, "=")
		p, err := image.ParsePlatforms([]string{plat})
		if !ok || path == "" || err != nil {
			return out, invalid(ErrBinarySpec, b, nil)
		}
		out[p[0].String()] = path
	}
	wanted := map[string]bool{}
	for _, p := range platforms {
		wanted[p.String()] = true
	}
	for p := range out {
		if !wanted[p] {
			return out, invalid(ErrBinaryPlatform, p, nil)
		}
	}
	return out, nil
}
