package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/image"
	"github.com/fullsend-ai/agent-sandbox/sign"

	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
)

// newImageCmd groups the image commands.
func newImageCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build the agent-sandbox image without a container daemon",
		Example: `  fullsend image build --base ghcr.io/fullsend-ai/agent-sandbox-base@sha256:... --dir . --oci-layout out/image
  fullsend image build --base scratch --platform linux/amd64,linux/arm64 --tag ghcr.io/acme/agents:v1.2.0 --push`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newImageBuildCmd(), newImageEntrypointCmd(), newImageSignCmd(), newImageKeygenCmd())
	return cmd
}

type imageBuildFlags struct {
	compile              bool
	base, baseName       string
	platforms            []string
	dir, source          string
	binaries             []string
	version, revision    string
	sourceURL            string
	title, description   string
	tags                 []string
	push, allowLatest    bool
	shaTag               bool
	layoutDir, tarball   string
	digestFile, cacheDir string
	noCache              bool
	output               string
	sign                 bool
	signing              signFlags
}

func newImageBuildCmd() *cobra.Command {
	var f imageBuildFlags
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build the image: base by digest + fullsend binary + /opt/fullsend content",
		Long: `Build the agent-sandbox image with go-containerregistry, without a daemon.

Layers on top of --base: the fullsend binary for each platform
(/usr/local/bin/fullsend; compiled from --source or taken from --binary), then
agents/, skills/, templates/ and the compiled policies/ of --dir under
/opt/fullsend. The policies must match policies/manifest.json and their
sources; the manifest digest is recorded in the dev.fullsend.policies.digest
annotation. Builds are reproducible: timestamps come from SOURCE_DATE_EPOCH,
else the git commit time, else 0.

With --push the image is uploaded by digest first and tagged last, plus an
immutable sha-<commit> tag; "latest" is refused without --allow-latest.`,
		Example: `  # local OCI layout, host platform, binary compiled from this checkout
  fullsend image build --base ghcr.io/fullsend-ai/agent-sandbox-base@sha256:... --oci-layout out/image

  # two platforms, pushed (auth: docker config, GITHUB_TOKEN, CI_REGISTRY_*)
  fullsend image build --base ghcr.io/fullsend-ai/agent-sandbox-base:v1 \
    --platform linux/amd64,linux/arm64 --tag ghcr.io/acme/agents:v1.2.0 --push -o json

  # prebuilt binaries, tarball for docker load
  fullsend image build --base scratch --binary linux/amd64=dist/fullsend --tarball out/image.tar`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cliError(runImageBuild(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), &f))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.base, "base", "", "base image: registry reference (resolved to a digest), OCI layout dir, image tarball, or scratch (required)")
	fl.StringVar(&f.baseName, "base-name", "", "value of the base.name annotation (default: the --base reference for a registry base)")
	fl.StringSliceVar(&f.platforms, "platform", []string{"linux/" + runtime.GOARCH}, "target platforms, comma separated (several build an OCI index)")
	fl.StringVar(&f.dir, "dir", ".", "project directory holding agents/, skills/, templates/ and policies/ (compiled first when missing or stale)")
	fl.BoolVar(&f.compile, "compile", true, "compile --dir first when its policies/ is missing or stale (false: refuse stale policies)")
	fl.StringVar(&f.source, "source", "", "fullsend module root to compile the binary from (default: found from the current directory)")
	fl.StringArrayVar(&f.binaries, "binary", nil, "prebuilt fullsend binary as PLATFORM=PATH (repeatable)")
	fl.StringVar(&f.version, "version", "", "version for the image annotation and the compiled binary (default: git describe)")
	fl.StringVar(&f.revision, "revision", "", "source revision annotation (default: git HEAD of --dir)")
	fl.StringVar(&f.sourceURL, "source-url", "", "source repository annotation (default: from GITHUB_* or CI_PROJECT_URL)")
	fl.StringVar(&f.title, "title", "", "title annotation")
	fl.StringVar(&f.description, "description", "", "description annotation")
	fl.StringArrayVarP(&f.tags, "tag", "t", nil, "image reference REGISTRY/REPO:TAG (repeatable; pushed with --push)")
	fl.BoolVar(&f.push, "push", false, "push to the registries of --tag: by digest first, tags last")
	fl.BoolVar(&f.allowLatest, "allow-latest", false, `permit the mutable "latest" tag`)
	fl.BoolVar(&f.shaTag, "sha-tag", true, "with --push, also write the immutable sha-<commit> tag (never moved once written)")
	fl.StringVar(&f.layoutDir, "oci-layout", "", "write an OCI image layout to this directory")
	fl.StringVar(&f.tarball, "tarball", "", "write a docker/OCI image tarball to this file (single platform)")
	fl.StringVar(&f.digestFile, "digest-file", "", "write the resulting repo@sha256:... references (or the digest) to this file")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "compressed-layer cache (default: the user cache dir)")
	fl.BoolVar(&f.noCache, "no-cache", false, "do not read or write the compressed-layer cache")
	fl.BoolVar(&f.sign, "sign", false, "sign the built digest (with SBOM and provenance attestations) and store the signature with the outputs; see fullsend image sign --help")
	addSignFlags(fl, &f.signing)
	addOutputFlag(cmd, &f.output)
	return cmd
}

// imageBuildReport is the -o json output of image build.
type imageBuildReport struct {
	Digest         string              `json:"digest"`
	MediaType      string              `json:"media_type"`
	PoliciesDigest string              `json:"policies_digest"`
	Platforms      []imagePlatformJSON `json:"platforms"`
	Base           imageBaseJSON       `json:"base"`
	Refs           []string            `json:"refs,omitempty"`
	Tags           []string            `json:"tags,omitempty"`
	OCILayout      string              `json:"oci_layout,omitempty"`
	Tarball        string              `json:"tarball,omitempty"`
	Signatures     []sign.Result       `json:"signatures,omitempty"`
}

type imagePlatformJSON struct {
	Platform string `json:"platform"`
	Digest   string `json:"digest"`
}

type imageBaseJSON struct {
	Kind   string `json:"kind"`
	Name   string `json:"name,omitempty"`
	Digest string `json:"digest,omitempty"`
}

func runImageBuild(ctx context.Context, stdout, stderr io.Writer, f *imageBuildFlags) error {
	if f.output != "text" && f.output != "json" {
		return usageErrorf("unknown output format %q (want text or json)", f.output)
	}
	if f.base == "" {
		return usageErrorf("--base is required (a registry reference, an OCI layout dir, an image tarball, or scratch)")
	}
	if f.push && len(f.tags) == 0 {
		return usageErrorf("--push needs at least one --tag REGISTRY/REPO:TAG")
	}
	tags, err := parseTags(f.tags)
	if err != nil {
		return err
	}
	opts, err := imageBuildOptions(ctx, stderr, f)
	if err != nil {
		return err
	}
	var signing *buildSigning
	if f.sign {
		if signing, err = newBuildSigning(ctx, &f.signing, tags, f.layoutDir, f.push); err != nil {
			return err
		}
	}

	// Step 0: the policies. --dir is compiled when policies/ is missing or
	// stale (deterministic, so a current policies/ is left byte-for-byte
	// alone); with --compile=false image.Build refuses stale policies.
	if f.compile {
		if err := compileIfStale(ctx, f.dir, stderr); err != nil {
			return err
		}
	}

	// Step 1: build. Nothing is written anywhere yet.
	res, err := image.Build(ctx, opts)
	if err != nil {
		return err
	}

	// Step 2: sign res.Digest, before any output is written or pushed.
	if signing != nil {
		params := map[string]any{"base": f.base, "platforms": f.platforms, "version": opts.Version}
		if err := signing.sign(ctx, res, tags, params); err != nil {
			return err
		}
	}

	// Step 3: outputs. Local files first, the registry last.
	report := imageBuildReport{
		Digest:         res.Digest.String(),
		MediaType:      string(res.MediaType),
		PoliciesDigest: "sha256:" + res.PoliciesDigest,
		Base:           imageBaseJSON{Kind: res.BaseKind, Name: res.BaseName},
	}
	if res.BaseDigest.Hex != "" {
		report.Base.Digest = res.BaseDigest.String()
	}
	for i, p := range res.Platforms {
		report.Platforms = append(report.Platforms, imagePlatformJSON{Platform: p.String(), Digest: res.PlatformDigest[i].String()})
	}
	if f.layoutDir != "" {
		refName := ""
		if len(tags) > 0 {
			refName = tags[0].TagStr()
		}
		if err := image.WriteLayout(res, f.layoutDir, refName); err != nil {
			return err
		}
		if signing != nil {
			if err := signing.writeLayout(f.layoutDir); err != nil {
				return err
			}
		}
		report.OCILayout = f.layoutDir
	}
	if f.tarball != "" {
		var ref name.Reference
		if len(tags) > 0 {
			ref = tags[0]
		} else if ref, err = name.NewTag("fullsend/agent-sandbox:" + tarballTag(opts.Version)); err != nil {
			return err
		}
		if err := image.WriteTarball(res, f.tarball, ref); err != nil {
			return err
		}
		report.Tarball = f.tarball
	}
	if f.push {
		po := image.PushOptions{
			Tags:        tags,
			AllowLatest: f.allowLatest,
			Remote:      image.RemoteConfig{Keychain: image.Keychain(os.Getenv)},
		}
		if imageIsTerminal(stderr) {
			po.Remote.Progress = stderr
		}
		if f.shaTag {
			po.ImmutableTags = shaTags(tags, image.ShaTag(opts.Revision, res.Digest))
		}
		if signing != nil {
			// Signatures go up after the image and before any tag, so a
			// tag never names an unsigned image.
			po.BeforeTag = func(ctx context.Context, _ []name.Digest) error {
				return signing.push(ctx, image.RemoteOptions(ctx, po.Remote)...)
			}
		}
		refs, err := image.Push(ctx, res, po)
		for _, r := range refs {
			report.Refs = append(report.Refs, r.String())
		}
		if err != nil {
			return err
		}
		for _, t := range append(po.Tags, po.ImmutableTags...) {
			report.Tags = append(report.Tags, t.String())
		}
	}
	if signing != nil {
		report.Signatures = signing.results()
	}
	if f.digestFile != "" {
		lines := report.Refs
		if len(lines) == 0 {
			lines = []string{report.Digest}
		}
		if err := atomicfile.Write(f.digestFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return fmt.Errorf("writing digest file: %w", err)
		}
	}
	if f.output == "json" {
		return writeJSON(stdout, report)
	}
	fmt.Fprintf(stdout, "%s\n", report.Digest)
	for _, r := range report.Refs {
		fmt.Fprintf(stdout, "pushed %s\n", r)
	}
	for _, t := range report.Tags {
		fmt.Fprintf(stdout, "tagged %s\n", t)
	}
	for _, sr := range report.Signatures {
		fmt.Fprintf(stdout, "signed %s (%s; attestations: %s)\n", sr.Ref, sr.Signer, strings.Join(sr.Attestations, ", "))
	}
	return nil
}

// imageBuildOptions turns flags (and git / CI defaults) into image.Options.
func imageBuildOptions(ctx context.Context, stderr io.Writer, f *imageBuildFlags) (image.Options, error) {
	platforms, err := image.ParsePlatforms(f.platforms)
	if err != nil {
		return image.Options{}, usageErrorf("--platform: %v", err)
	}
	info, err := os.Stat(f.dir)
	if err != nil || !info.IsDir() {
		return image.Options{}, usageErrorf("--dir %s: not a directory", f.dir)
	}
	created, source, err := image.ResolveEpoch(ctx, f.dir, os.Getenv)
	if err != nil {
		return image.Options{}, usageErrorf("%v", err)
	}
	fmt.Fprintf(stderr, "timestamps: %s (%s)\n", created.Format("2006-01-02T15:04:05Z"), source)
	o := image.Options{
		Base:        f.base,
		BaseName:    f.baseName,
		Platforms:   platforms,
		Project:     os.DirFS(f.dir),
		ProjectName: f.dir,
		Binaries:    map[string]string{},
		Version:     f.version,
		Revision:    f.revision,
		SourceURL:   f.sourceURL,
		Created:     created,
		Title:       f.title,
		Description: f.description,
		Remote:      image.RemoteOptions(ctx, image.RemoteConfig{Keychain: image.Keychain(os.Getenv)}),
		Log:         stderr,
	}
	for _, b := range f.binaries {
		plat, path, ok := strings.Cut(b, "=")
		p, perr := image.ParsePlatforms([]string{plat})
		if !ok || path == "" || perr != nil {
			return o, usageErrorf("--binary %q: want PLATFORM=PATH, e.g. linux/amd64=dist/fullsend", b)
		}
		o.Binaries[p[0].String()] = path
	}
	needSource := false
	wanted := map[string]bool{}
	for _, p := range platforms {
		wanted[p.String()] = true
		if _, ok := o.Binaries[p.String()]; !ok {
			needSource = true
		}
	}
	for p := range o.Binaries {
		if !wanted[p] {
			return o, usageErrorf("--binary %s: platform not in --platform %s", p, strings.Join(f.platforms, ","))
		}
	}
	if needSource {
		start := f.source
		if start == "" {
			start = "."
		}
		if o.Source, err = image.FindSource(start); err != nil {
			return o, err
		}
	}
	if o.Revision == "" {
		o.Revision = image.GitRevision(ctx, f.dir)
	}
	if o.SourceURL == "" {
		o.SourceURL = image.SourceURL(os.Getenv)
	}
	if o.Version == "" {
		o.Version = gitDescribe(ctx, f.dir)
	}
	if !f.noCache {
		o.CacheDir = f.cacheDir
		if o.CacheDir == "" {
			if dir, err := os.UserCacheDir(); err == nil {
				o.CacheDir = filepath.Join(dir, "fullsend", "layers")
			}
		}
	}
	return o, nil
}

func parseTags(specs []string) ([]name.Tag, error) {
	var tags []name.Tag
	for _, s := range specs {
		t, err := name.NewTag(s, name.StrictValidation)
		if err != nil {
			return nil, usageErrorf("--tag %q: %v (want REGISTRY/REPO:TAG)", s, err)
		}
		tags = append(tags, t)
	}
	return tags, nil
}

// shaTags returns the immutable tag in every repository named by tags.
func shaTags(tags []name.Tag, tag string) []name.Tag {
	var out []name.Tag
	seen := map[string]bool{}
	for _, t := range tags {
		repo := t.Context()
		if seen[repo.String()] {
			continue
		}
		seen[repo.String()] = true
		out = append(out, repo.Tag(tag))
	}
	return out
}

func gitDescribe(ctx context.Context, dir string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// tarballTag is the tag written into a tarball without --tag.
func tarballTag(version string) string {
	if _, err := name.NewTag("x:"+version, name.StrictValidation); version != "" && err == nil {
		return version
	}
	return "build"
}

func imageIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// newImageEntrypointCmd is the image's ENTRYPOINT (see image.Entrypoint): it
// runs fullsend when the first argument is a fullsend command or a flag,
// and otherwise execs the given command unchanged, so both
// `docker run IMAGE run AGENT` and a GitLab CI job's `sh -c SCRIPT` work.
func newImageEntrypointCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "entrypoint -- [COMMAND [ARG]...]",
		Short:              "The image entrypoint: run a fullsend command or exec any other command",
		Example:            "  fullsend image entrypoint -- run triage\n  fullsend image entrypoint -- sh -c 'echo hello'",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			argv0, argv, err := entrypointTarget(cmd.Root(), self, args, exec.LookPath)
			if err != nil {
				return err
			}
			return syscall.Exec(argv0, argv, os.Environ())
		},
	}
}

// errNotACommand reports an entrypoint argument that is neither a fullsend
// command nor an executable.
var errNotACommand = errors.New("neither a fullsend command nor an executable on PATH")

// entrypointTarget decides what the entrypoint execs for args.
func entrypointTarget(root *cobra.Command, self string, args []string, lookPath func(string) (string, error)) (string, []string, error) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return self, append([]string{"fullsend"}, args...), nil
	}
	if c, _, err := root.Find(args); err == nil && c != root {
		return self, append([]string{"fullsend"}, args...), nil
	}
	path, err := lookPath(args[0])
	if err != nil {
		return "", nil, usageErrorf("%s: %w (fullsend commands: run, verify, version, ...)", args[0], errNotACommand)
	}
	return path, args, nil
}
