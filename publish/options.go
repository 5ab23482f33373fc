package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/fullsend-ai/agent-sandbox/image"
)

// Options are the inputs of Run, one field per flag of `fullsend image
// build`. Empty fields take the defaults documented on them.
type Options struct {
	// Base is the base image: a registry reference (resolved to a digest),
	// an OCI layout directory, an image tarball, or "scratch". Required.
	Base string
	// BaseName is the base.name annotation (default: Base for a registry
	// base).
	BaseName string
	// Platforms are the target platforms as given ("linux/amd64"); several
	// build an index. They are recorded as given in the provenance.
	Platforms []string
	// Dir is the project directory holding agents/, skills/, templates/ and
	// the compiled policies/.
	Dir string
	// Source is the fullsend module root to compile every binary from
	// (development); "": a platform without a Binaries entry takes the
	// running fullsend when it serves that platform, else the source
	// module found from the current directory, else the fullsend module
	// at the running binary's version (go install, see image.Executable).
	Source string
	// Self is the installed fullsend; nil: image.CurrentExecutable().
	// Ignored when Source is set.
	Self *image.Executable
	// Binaries are prebuilt fullsend binaries as PLATFORM=PATH.
	Binaries []string
	// Version is stamped into the image and the compiled binary; "":
	// DefaultVersion (git describe of Dir).
	Version string
	// Revision is the source revision annotation; "": git HEAD of Dir.
	Revision string
	// SourceURL is the source repository annotation; "": from the CI
	// environment (image.SourceURL).
	SourceURL string
	// Title and Description fill the matching annotations.
	Title, Description string
	// CacheDir is the compressed-layer cache; "": DefaultCacheDir. NoCache
	// neither reads nor writes a cache.
	CacheDir string
	NoCache  bool

	// Tags name the image as REGISTRY/REPO:TAG; the first one names the
	// image in the OCI layout and the tarball, and every repository named
	// gets its own signature.
	Tags []string
	// Push uploads to the registries of Tags: by digest, then the
	// signatures, then the tags.
	Push bool
	// AllowLatest permits the mutable "latest" tag.
	AllowLatest bool
	// ShaTag, with Push, also writes the immutable sha-<commit> tag (see
	// image.ShaTag) in every repository of Tags.
	ShaTag bool
	// OCILayout and Tarball are local outputs ("": none).
	OCILayout string
	Tarball   string
	// DigestFile receives the pushed repo@sha256:... references, one per
	// line, or the digest when nothing was pushed ("": none).
	DigestFile string

	// Sign, when set, signs the built digest (with the attestations it
	// asks for) before any output is written; the signatures are stored
	// with every output that can hold them.
	Sign *SignOptions

	// Prepare, when set, runs once the inputs are resolved and the signer
	// is ready, right before the build: the CLI compiles stale policies
	// there, so a wrong key password fails before anything is written.
	Prepare func(ctx context.Context) error
	// Getenv reads SOURCE_DATE_EPOCH, the CI variables and the registry
	// tokens; nil means os.Getenv.
	Getenv func(string) string
	// Log receives progress lines (timestamps, base resolution, cache
	// use); nil discards them.
	Log io.Writer
	// Progress, when set (a terminal), shows a live status line while the
	// base resolves, the binaries build and the layers push; nil: silent.
	Progress io.Writer
}

// SignOptions are the signing inputs of `fullsend image build --sign` and
// `fullsend image sign`, one field per flag.
type SignOptions struct {
	// Key is a cosign private key file or a KMS URI; Keyless signs with a
	// Fulcio certificate for the CI's OIDC identity instead. Exactly one
	// of them is required.
	Key     string
	Keyless bool
	// Password returns the private key's password (nil: empty). It is
	// called once, when the signer is made.
	Password func() ([]byte, error)
	// FulcioURL and RekorURL are the Sigstore instances (defaults:
	// sign.DefaultFulcioURL, sign.DefaultRekorURL).
	FulcioURL string
	RekorURL  string
	// TlogUpload records a keyed signature in Rekor too (keyless signatures
	// always are, unless InsecureSkipTlogUpload).
	TlogUpload             bool
	InsecureSkipTlogUpload bool
	// IDToken returns the OIDC token for keyless signing; nil, or "", means
	// discovery from the CI environment (sign.DiscoverIDToken).
	IDToken func() (string, error)
	// Annotations are extra signed claims as KEY=VALUE.
	Annotations []string
	// GitRevision is the revision claim; "": the image's revision
	// annotation, else the CI's commit.
	GitRevision string
	// SBOM attaches an SPDX SBOM of the files under SBOMPaths (nil:
	// sign.DefaultSBOMPaths) of the layers fullsend added, or of every
	// layer with SBOMAllLayers.
	SBOM          bool
	SBOMPaths     []string
	SBOMAllLayers bool
	// Provenance attaches a SLSA provenance v1 attestation; its builder is
	// BuilderID, else the CI workflow or runner.
	Provenance bool
	BuilderID  string
}

// Sentinel kinds of OptionError. Each names one invalid input; the CLI
// maps them to its own wording and flag names.
var (
	// ErrNoBase: Options.Base is empty.
	ErrNoBase = errors.New("no base image given")
	// ErrPushNeedsTag: Options.Push without Options.Tags.
	ErrPushNeedsTag = errors.New("pushing needs at least one tag")
	// ErrTag: a tag is not REGISTRY/REPO:TAG.
	ErrTag = errors.New("invalid tag")
	// ErrPlatform: a platform does not parse.
	ErrPlatform = errors.New("invalid platform")
	// ErrNotDir: Options.Dir is not a directory.
	ErrNotDir = errors.New("not a directory")
	// ErrEpoch: SOURCE_DATE_EPOCH is invalid.
	ErrEpoch = errors.New("invalid build timestamp")
	// ErrBinarySpec: a binary is not PLATFORM=PATH.
	ErrBinarySpec = errors.New("invalid binary: want PLATFORM=PATH")
	// ErrBinaryPlatform: a binary is for a platform that is not built.
	ErrBinaryPlatform = errors.New("binary for a platform that is not built")
	// ErrSignNeedsTag: signing without a tag (the signature names the
	// repository).
	ErrSignNeedsTag = errors.New("signing needs a tag: the signature names the repository")
	// ErrSignNeedsOutput: signing without an output that stores the
	// signature (a push or an OCI layout).
	ErrSignNeedsOutput = errors.New("signing needs a push or an OCI layout to store the signature")
	// ErrNoSigner: neither a key nor keyless signing was chosen.
	ErrNoSigner = errors.New("no signer: choose a key or keyless signing")
	// ErrKeyAndKeyless: both a key and keyless signing were chosen.
	ErrKeyAndKeyless = errors.New("a key and keyless signing are exclusive")
	// ErrTlogUploadKeyless: TlogUpload with keyless signing (which always
	// uploads).
	ErrTlogUploadKeyless = errors.New("transparency-log upload is an option of keyed signing; keyless always uploads")
	// ErrSkipTlogKeyed: InsecureSkipTlogUpload with a key.
	ErrSkipTlogKeyed = errors.New("skipping the transparency-log upload is an option of keyless signing")
	// ErrAnnotation: a signed annotation is not KEY=VALUE.
	ErrAnnotation = errors.New("invalid annotation: want KEY=VALUE")
	// ErrImageRef: the image to sign is not a reference.
	ErrImageRef = errors.New("invalid image reference")
	// ErrLayoutRepository: the repository a layout's signature is for is
	// not a repository name.
	ErrLayoutRepository = errors.New("invalid repository for the OCI layout's signature")
)

// OptionError reports invalid options: Kind is one of this package's
// sentinels (or sign.ErrNoBuilderID), Value the offending input when there
// is one, Err the underlying cause when there is one. errors.Is matches
// Kind and Err.
type OptionError struct {
	Kind  error
	Value string
	Err   error
}

func (e *OptionError) Error() string {
	msg := e.Kind.Error()
	if e.Value != "" {
		msg += fmt.Sprintf(" %q", e.Value)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *OptionError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func invalid(kind error, value string, err error) error {
	return &OptionError{Kind: kind, Value: value, Err: err}
}

func (o *Options) getenv(k string) string { return orEnv(o.Getenv)(k) }

func (o *Options) log() io.Writer { return orDiscard(o.Log) }

// orEnv is getenv, or os.Getenv when nil.
func orEnv(getenv func(string) string) func(string) string {
	if getenv == nil {
		return os.Getenv
	}
	return getenv
}

// orDiscard is w, or io.Discard when nil.
func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
