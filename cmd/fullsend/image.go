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

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/publish"
	"github.com/fullsend-ai/agent-sandbox/sign"
)

// newImageCmd groups the image commands.
func newImageCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build the agent-sandbox image without a container daemon",
		Example: `  fullsend image build --base ghcr.io/fullsend-ai/agent-sandbox-base@sha256:... --oci-layout out/image .
  fullsend image build --base scratch --platform linux/amd64,linux/arm64 --tag ghcr.io/acme/agents:v1.2.0 --push .`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newImageBuildCmd(), newImageEntrypointCmd(), newImageSignCmd(), newImageKeygenCmd())
	return cmd
}

// imageBuildFlags are the flags of image build: the publish options
// themselves, plus what only the CLI decides (compiling stale policies,
// the output format, whether to sign).
type imageBuildFlags struct {
	opts    publish.Options
	compile bool
	output  outputFormat
	sign    bool
	signing signFlags
}

func newImageBuildCmd() *cobra.Command {
	var f imageBuildFlags
	cmd := &cobra.Command{
		Use:   "build [DIR]",
		Short: "Build the image: base by digest + fullsend binary + /opt/fullsend content",
		Long: `Build the agent-sandbox image with go-containerregistry, without a daemon.

Layers on top of --base: the fullsend binary for each platform
(/usr/local/bin/fullsend): --binary PLATFORM=PATH if given, else this fullsend
itself for its own platform (when statically linked), else compiled from the
fullsend checkout around the current directory, else go install of
github.com/fullsend-ai/agent-sandbox/cmd/fullsend at this binary's version
(needs go and the module proxy; a (devel) or modified build cannot do this:
pass --binary or --source). --source DIR compiles every platform from DIR. Then
agents/, skills/, templates/ and the compiled policies/ of DIR (default .) under
/opt/fullsend. The policies must match policies/manifest.json and their
sources; the manifest digest is recorded in the dev.fullsend.policies.digest
annotation. Builds are reproducible: timestamps come from SOURCE_DATE_EPOCH,
else the git commit time, else 0.

With --push the image is uploaded by digest first and tagged last, plus an
immutable sha-<commit> tag; "latest" is refused without --allow-latest.`,
		Example: `  # local OCI layout, host platform, binary compiled from this checkout
  fullsend image build --base ghcr.io/fullsend-ai/agent-sandbox-base@sha256:... --oci-layout out/image .

  # two platforms, pushed (auth: docker config, GITHUB_TOKEN, CI_REGISTRY_*)
  fullsend image build --base ghcr.io/fullsend-ai/agent-sandbox-base:v1 \
    --platform linux/amd64,linux/arm64 --tag ghcr.io/acme/agents:v1.2.0 --push -o json .

  # prebuilt binaries, tarball for docker load
  fullsend image build --base scratch --binary linux/amd64=dist/fullsend --tarball out/image.tar .`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := dirFromArgs(cmd, args, 0, "dir", &f.opts.Dir); err != nil {
				return err
			}
			return runImageBuild(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), &f)
		},
	}
	o := &f.opts
	fl := cmd.Flags()
	fl.StringVar(&o.Base, "base", "", "base image: registry reference (resolved to a digest), OCI layout dir, image tarball, or scratch (required)")
	fl.StringVar(&o.BaseName, "base-name", "", "value of the base.name annotation (default: the --base reference for a registry base)")
	fl.StringSliceVar(&o.Platforms, "platform", []string{"linux/" + runtime.GOARCH}, "target platforms, comma separated (several build an OCI index)")
	deprecatedDirFlag(fl, &o.Dir, "dir", ".", "project directory holding agents/, skills/, templates/ and policies/")
	fl.BoolVar(&f.compile, "compile", true, "outside CI, compile DIR first when its policies/ is missing or stale (false, and always in CI: refuse stale policies)")
	fl.StringVar(&o.Source, "source", "", "fullsend module root to compile every binary from (development; default: the running fullsend, a checkout around the current directory, or its module version)")
	fl.StringArrayVar(&o.Binaries, "binary", nil, "prebuilt fullsend binary as PLATFORM=PATH (repeatable)")
	fl.StringVar(&o.Version, "version", "", "version for the image annotation and the compiled binary (default: git describe)")
	fl.StringVar(&o.Revision, "revision", "", "source revision annotation (default: git HEAD of DIR)")
	fl.StringVar(&o.SourceURL, "source-url", "", "source repository annotation (default: from GITHUB_* or CI_PROJECT_URL)")
	fl.StringVar(&o.Title, "title", "", "title annotation")
	fl.StringVar(&o.Description, "description", "", "description annotation")
	fl.StringArrayVarP(&o.Tags, "tag", "t", nil, "image reference REGISTRY/REPO:TAG (repeatable; pushed with --push)")
	fl.BoolVar(&o.Push, "push", false, "push to the registries of --tag: by digest first, tags last")
	fl.BoolVar(&o.AllowLatest, "allow-latest", false, `permit the mutable "latest" tag`)
	fl.BoolVar(&o.ShaTag, "sha-tag", true, "with --push, also write the immutable sha-<commit> tag (never moved once written)")
	fl.StringVar(&o.OCILayout, "oci-layout", "", "write an OCI image layout to this directory")
	fl.StringVar(&o.Tarball, "tarball", "", "write a docker/OCI image tarball to this file (single platform)")
	fl.StringVar(&o.DigestFile, "digest-file", "", "write the resulting repo@sha256:... references (or the digest) to this file")
	fl.StringVar(&o.CacheDir, "cache-dir", "", "compressed-layer cache (default: the user cache dir)")
	fl.BoolVar(&o.NoCache, "no-cache", false, "do not read or write the compressed-layer cache")
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

// runImageBuild is flags -> publish.Options -> publish.Run -> print.
func runImageBuild(ctx context.Context, stdout, stderr io.Writer, f *imageBuildFlags) error {
	o := f.opts
	if !o.Push && o.OCILayout == "" && o.Tarball == "" {
		// A build that goes nowhere would print a digest of nothing
		// written (and drop --tag): say where it may go instead.
		return usageErrorf("image build writes nothing without an output: pass --push (with --tag), --oci-layout DIR or --tarball FILE")
	}
	o.Getenv, o.Log = os.Getenv, stderr
	if f.output != outputJSON && imageIsTerminal(stderr) {
		o.Progress = stderr
	}
	if f.sign {
		so := f.signing.options()
		o.Sign = &so
	}
	// DIR is compiled when policies/ is missing or stale (deterministic,
	// so a current policies/ is left byte-for-byte alone); with
	// --compile=false image.Build refuses stale policies.
	// The one staleness rule (bundle.StaleRule): in CI a stale bundle is
	// refused and nothing is compiled; elsewhere a warning, then the
	// compile (unless --compile=false, when image.Build refuses it).
	o.Prepare = prepareProject(o.Dir, o.Getenv, f.compile && !cienv.Detect(o.Getenv).IsCI(), stderr)
	res, err := publish.Run(ctx, o)
	if err != nil {
		return cliError(err, o.Platforms)
	}
	report := newImageBuildReport(res)
	if f.output == outputJSON {
		return writeJSON(stdout, report)
	}
	report.writeText(stdout)
	return nil
}

// prepareProject is the build's Prepare step for the project in dir: the
// staleness check, then, when compile is set, a compile if policies/ is
// missing or stale.
func prepareProject(dir string, getenv func(string) string, compile bool, stderr io.Writer) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, err := checkStale(dir, filepath.Join(dir, "policies"), getenv, stderr); err != nil {
			return err
		}
		if compile {
			return compileIfStale(ctx, dir, stderr)
		}
		return nil
	}
}

// writeText prints the image's digest, then what was pushed, tagged and
// signed.
func (report imageBuildReport) writeText(stdout io.Writer) {
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
}

func newImageBuildReport(res *publish.Result) imageBuildReport {
	img := res.Image
	report := imageBuildReport{
		Digest:         img.Digest.String(),
		MediaType:      string(img.MediaType),
		PoliciesDigest: "sha256:" + img.PoliciesDigest,
		Base:           imageBaseJSON{Kind: img.BaseKind, Name: img.BaseName},
		Refs:           res.Refs,
		Tags:           res.Tags,
		OCILayout:      res.OCILayout,
		Tarball:        res.Tarball,
		Signatures:     res.Signatures,
	}
	if img.BaseDigest.Hex != "" {
		report.Base.Digest = img.BaseDigest.String()
	}
	for i, p := range img.Platforms {
		report.Platforms = append(report.Platforms, imagePlatformJSON{Platform: p.String(), Digest: img.PlatformDigest[i].String()})
	}
	return report
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
		Example:            "  fullsend image entrypoint -- run summarizer\n  fullsend image entrypoint -- sh -c 'echo hello'",
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
