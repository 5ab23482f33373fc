package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/handover"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"
)

// Options are the inputs of Build. Everything that reaches the image is an
// explicit input here, so equal Options give equal digests.
type Options struct {
	// Base is "scratch", an OCI layout directory, a docker/OCI tarball or a
	// registry reference (resolved to a digest once).
	Base string
	// BaseName, when set, is recorded as org.opencontainers.image.base.name
	// instead of the registry reference (useful for a local base that was
	// saved from a known reference).
	BaseName string
	// Platforms to build; one gives an image, several an index.
	Platforms []v1.Platform
	// Project is the project directory (agents/, skills/, templates/,
	// policies/ with a compiled manifest.json); ProjectName names it in
	// messages. Pass an os.Root's FS, so that no path leads out of the
	// project; any symbolic link in those directories (or one of them
	// being a link) fails the build, which needs Project to report links
	// (fs.ReadLinkFS, as os.Root.FS and os.DirFS do).
	Project     fs.FS
	ProjectName string
	// Binaries maps a platform (as v1.Platform.String()) to a prebuilt
	// fullsend binary. A platform without one takes Self when Self serves
	// it, else is compiled from Source, else built from Self's module at
	// its version (go install MODULE/cmd/fullsend@VERSION).
	Binaries map[string]string
	// Self is the installed fullsend (see CurrentExecutable); nil: none.
	Self *Executable
	// Source is the fullsend module root to compile from (see FindSource).
	Source string
	// Version is stamped into compiled binaries and the version annotation.
	Version string
	// Revision and SourceURL fill the revision and source annotations.
	Revision  string
	SourceURL string
	// Created is the timestamp of every layer entry, the config and the
	// created annotation (see ResolveEpoch).
	Created time.Time
	// Title and Description fill the matching annotations (defaults apply).
	Title       string
	Description string
	// CacheDir keeps compressed layers by diffID; "" disables the cache.
	CacheDir string
	// Remote configures registry access for a registry base.
	Remote []remote.Option
	// Log receives progress lines (base resolution, cache use) and one
	// summary line per stage with its duration; may be nil.
	Log    io.Writer
	status *Status // Build's status line, for binary

	// Progress, when set (a terminal), shows a live status line while the
	// base resolves and the binaries build (see Status).
	Progress io.Writer
}

// Result is a built image or index, not yet written anywhere.
type Result struct {
	// Image is set for a single platform, Index for several.
	Image v1.Image
	Index v1.ImageIndex
	// Digest is the manifest (or index) digest: what gets signed.
	Digest    v1.Hash
	MediaType types.MediaType
	// PoliciesDigest is the hex sha256 of policies/manifest.json, also the
	// dev.fullsend.policies.digest annotation.
	PoliciesDigest string
	Manifest       *bundle.Manifest
	// Platforms holds the built platforms and, in the same order, their
	// image digests.
	Platforms      []v1.Platform
	PlatformDigest []v1.Hash
	// BaseKind, BaseName and BaseDigest describe the resolved base.
	BaseKind   string
	BaseName   string
	BaseDigest v1.Hash
	// Annotations are the manifest/index annotations (also image labels).
	Annotations map[string]string
}

// Taggable returns the image or index, for remote.Write-style APIs.
func (r *Result) Taggable() remote.Taggable {
	if r.Index != nil {
		return r.Index
	}
	return r.Image
}

// Annotation keys written on every manifest and index.
const (
	AnnotationCreated        = "org.opencontainers.image.created"
	AnnotationSource         = "org.opencontainers.image.source"
	AnnotationRevision       = "org.opencontainers.image.revision"
	AnnotationVersion        = "org.opencontainers.image.version"
	AnnotationBaseName       = "org.opencontainers.image.base.name"
	AnnotationBaseDigest     = "org.opencontainers.image.base.digest"
	AnnotationTitle          = "org.opencontainers.image.title"
	AnnotationDescription    = "org.opencontainers.image.description"
	AnnotationPoliciesDigest = handover.PoliciesDigestAnnotation
	// LabelOpenShellVersion is set by the Containerfile on the heavy base;
	// Build refuses policies compiled for another OpenShell version.
	LabelOpenShellVersion = "dev.fullsend.openshell.version"
)

// ErrOpenShellMismatch reports policies compiled for another OpenShell
// version than the one the base image ships.
var ErrOpenShellMismatch = errors.New("policies target a different OpenShell version than the base image")

// OpenShellMismatchError is ErrOpenShellMismatch with the two versions:
// the policies must be recompiled for Base.
type OpenShellMismatchError struct {
	// Policies is the version the policies were compiled for, Base the
	// version the base image ships.
	Policies, Base string
}

func (e *OpenShellMismatchError) Error() string {
	return fmt.Sprintf("policies compiled for OpenShell %s, base ships %s: %v", e.Policies, e.Base, ErrOpenShellMismatch)
}

func (e *OpenShellMismatchError) Unwrap() error { return ErrOpenShellMismatch }

// ErrNoPlatforms reports Options without a target platform.
var ErrNoPlatforms = errors.New("no platforms given")

// Build assembles the image for every platform in parallel. It reads the
// project and the base, compiles or loads the binaries, and returns the
// image or index with its digest; nothing is written to a registry.
func Build(ctx context.Context, o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Created.IsZero() {
		o.Created = time.Unix(0, 0).UTC() // never year 1 in a tar header
	}
	logf := o.logf
	proj, err := loadProject(o.Project, o.ProjectName)
	if err != nil {
		return nil, err
	}
	status := NewStatus(o.Progress)
	defer status.Close()
	o.status = status
	started := time.Now()
	endBase := status.Start("resolving base " + o.Base)
	base, err := resolveBase(o.Base, o.Platforms, append([]remote.Option{remote.WithContext(ctx)}, o.Remote...))
	endBase()
	if err != nil {
		return nil, err
	}
	if base.kind == BaseRegistry {
		logf("base %s resolved to %s@%s in %s", o.Base, base.name, base.digest, since(started))
	}
	layers, err := o.buildLayers(ctx, layerCache{dir: o.CacheDir}, proj)
	if err != nil {
		return nil, err
	}
	status.Close()
	annotations := o.annotations(base, proj)
	images, err := o.assembleAll(base, layers, annotations, proj)
	if err != nil {
		return nil, err
	}
	res := &Result{
		PoliciesDigest: proj.policiesDigest,
		Manifest:       proj.manifest,
		Platforms:      o.Platforms,
		BaseKind:       base.kind,
		BaseName:       annotations[AnnotationBaseName],
		BaseDigest:     base.digest,
		Annotations:    annotations,
	}
	if res.PlatformDigest, err = digests(images); err != nil {
		return nil, err
	}
	logf("built %d platform(s) in %s", len(images), since(started))
	if len(images) == 1 {
		res.Image, res.Digest, res.MediaType = images[0], res.PlatformDigest[0], types.OCIManifestSchema1
		return res, nil
	}
	idx := o.index(images, indexAnnotations(annotations, base))
	if res.Digest, err = idx.Digest(); err != nil {
		return nil, err
	}
	res.Index, res.MediaType = idx, types.OCIImageIndex
	return res, nil
}

// digests returns the manifest digest of each image.
func digests(images []v1.Image) ([]v1.Hash, error) {
	var ds []v1.Hash
	for _, img := range images {
		d, err := img.Digest()
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// index is the OCI index of the platform images (in o.Platforms' order)
// with the given annotations.
func (o *Options) index(images []v1.Image, annotations map[string]string) v1.ImageIndex {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for i, img := range images {
		p := o.Platforms[i]
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &p},
		})
	}
	return mutate.Annotations(idx, annotations).(v1.ImageIndex)
}

// check refuses Options that name no platform, an unsupported one, or no
// project.
func (o *Options) check() error {
	if len(o.Platforms) == 0 {
		return ErrNoPlatforms
	}
	if err := checkPlatforms(o.Platforms); err != nil {
		return err
	}
	if o.Project == nil {
		return errors.New("no project directory given")
	}
	return nil
}

// builtLayers are the layers of a build: content and policies, the same
// on every platform, and one binary layer per platform (in o.Platforms'
// order).
type builtLayers struct {
	content, policies *layer
	binaries          []*layer
}

// buildLayers makes every layer of the build in parallel: the content and
// policies layers once, a binary layer per platform.
func (o *Options) buildLayers(ctx context.Context, cache layerCache, proj *project) (*builtLayers, error) {
	// The content layers are the same on every platform: build them once.
	contentTar, err := planTar(withRoot(proj.content), o.Created)
	if err != nil {
		return nil, fmt.Errorf("content layer: %w", err)
	}
	policiesTar, err := planTar(proj.policies, o.Created)
	if err != nil {
		return nil, fmt.Errorf("policies layer: %w", err)
	}
	bl := &builtLayers{binaries: make([]*layer, len(o.Platforms))}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { bl.content, err = cache.newLayer(contentTar); return err })
	g.Go(func() (err error) { bl.policies, err = cache.newLayer(policiesTar); return err })
	tmp, err := os.MkdirTemp("", "fullsend-image-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for i, p := range o.Platforms {
		g.Go(func() (err error) { bl.binaries[i], err = o.binaryLayer(gctx, cache, p, tmp); return err })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return bl, nil
}

// binaryLayer is the layer holding the fullsend binary for p.
func (o *Options) binaryLayer(ctx context.Context, cache layerCache, p v1.Platform, tmp string) (*layer, error) {
	bin, err := o.binary(ctx, p, tmp)
	if err != nil {
		return nil, err
	}
	binTar, err := planTar([]file{bin}, o.Created)
	if err != nil {
		return nil, fmt.Errorf("binary layer for %s: %w", p, err)
	}
	return cache.newLayer(binTar)
}

// assembleAll assembles the image of every platform on its base image.
func (o *Options) assembleAll(base *resolvedBase, bl *builtLayers, annotations map[string]string, proj *project) ([]v1.Image, error) {
	images := make([]v1.Image, len(o.Platforms))
	for i, p := range o.Platforms {
		img, err := o.assemble(base.images[i], p, []*layer{bl.binaries[i], bl.content, bl.policies}, annotations, proj)
		if err != nil {
			return nil, fmt.Errorf("assembling %s: %w", p, err)
		}
		images[i] = img
	}
	return images, nil
}

// binary returns the layer entry of the fullsend binary for p: the
// prebuilt one if given, else one compiled from the source module into tmp.
func (o *Options) binary(ctx context.Context, p v1.Platform, tmp string) (file, error) {
	from, err := o.binarySource(p)
	if err != nil {
		return file{}, err
	}
	started := time.Now()
	if from == FromSource || from == FromModule {
		defer o.status.Start("building fullsend for " + p.String())()
	}
	path, err := o.binaryPath(ctx, from, p, tmp)
	if err != nil {
		return file{}, err
	}
	if from == FromSource || from == FromModule {
		o.logf("fullsend binary for %s: %s (%s)", p, describeSource(from, o, p), since(started))
	} else {
		o.logf("fullsend binary for %s: %s", p, describeSource(from, o, p))
	}
	info, err := os.Stat(path)
	if err != nil {
		return file{}, fmt.Errorf("binary for %s: %w", p, err)
	}
	if !info.Mode().IsRegular() {
		return file{}, fmt.Errorf("binary for %s: %s is not a regular file", p, path)
	}
	return file{path: BinaryPath, src: path, size: info.Size(), exec: true}, nil
}

// binaryPath is the host path of the binary for p from source from: the
// prebuilt binary, the running executable, or one built into tmp from
// the source module or the executable's module.
func (o *Options) binaryPath(ctx context.Context, from string, p v1.Platform, tmp string) (string, error) {
	switch from {
	case FromBinary:
		return o.Binaries[p.String()], nil
	case FromExecutable:
		return o.Self.Path, nil
	case FromSource:
		path := filepath.Join(tmp, "fullsend-"+platformSlug(p))
		if err := goBuild(ctx, o.Source, p, o.Version, path); err != nil {
			return "", err
		}
		return path, nil
	case FromModule:
		// Minutes of silence the first time: say why before it starts.
		o.logf("%s", moduleBuildNote(o.Self, p))
		return goInstall(ctx, o.Self, p, tmp)
	}
	return "", nil
}

// withRoot adds the /opt/fullsend directory itself, so the layer carries it
// even for a project with no agents, skills or templates directories.
func withRoot(files []file) []file {
	return append(files, file{path: InstallRoot, dir: true})
}

func checkPlatforms(ps []v1.Platform) error {
	seen := map[string]bool{}
	for _, p := range ps {
		if p.OS != "linux" || p.Architecture == "" {
			return fmt.Errorf("platform %q: want linux/ARCH[/VARIANT]", p)
		}
		if seen[p.String()] {
			return fmt.Errorf("platform %s given twice", p)
		}
		seen[p.String()] = true
	}
	return nil
}

// ParsePlatforms parses a comma-separated list like
// "linux/amd64,linux/arm64" and returns the platforms sorted, so the index
// does not depend on the order they were given in.
func ParsePlatforms(specs []string) ([]v1.Platform, error) {
	var ps []v1.Platform
	for _, s := range specs {
		p, err := v1.ParsePlatform(s)
		if err != nil {
			return nil, fmt.Errorf("platform %q: %w", s, err)
		}
		ps = append(ps, *p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].String() < ps[j].String() })
	return ps, checkPlatforms(ps)
}

func platformSlug(p v1.Platform) string {
	s := p.OS + "-" + p.Architecture
	if p.Variant != "" {
		s += "-" + p.Variant
	}
	return s
}

// logf writes one progress line to o.Log, if set.
func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format+"\n", args...)
	}
}

func describeSource(from string, o *Options, p v1.Platform) string {
	switch from {
	case FromBinary:
		return o.Binaries[p.String()]
	case FromExecutable:
		return fmt.Sprintf("%s (%s, version %s)", FromExecutable, o.Self.Path, orDevel(o.Self.Version))
	case FromSource:
		return "compiled from " + o.Source
	default:
		return "go install " + CommandPath + "@" + o.Self.Version
	}
}
