package image

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/mod/modfile"
)

// ModulePath is the Go module that provides the fullsend binary.
const ModulePath = "github.com/fullsend-ai/agent-sandbox"

// mainPackage is the fullsend command inside ModulePath.
const mainPackage = "./cmd/fullsend"

// versionVar is the linker variable that carries the version string.
const versionVar = ModulePath + "/internal/version.Version"

// ErrNoSource reports that no fullsend source module was found to compile
// the binary from.
var ErrNoSource = errors.New("fullsend source module not found")

// ErrNoToolchain reports that the go toolchain needed to compile the
// fullsend binary is not on PATH.
var ErrNoToolchain = errors.New("the go toolchain is not on PATH")

// BinaryError reports why there is no fullsend binary for Platform: Err is
// ErrNoSource or ErrNoToolchain, Reason (when set) says why the running
// fullsend could not serve it. Its text is Err's and Reason's; callers that
// know how binaries are supplied add their hint after it.
type BinaryError struct {
	Platform string
	Err      error
	Reason   string
}

func (e *BinaryError) Error() string {
	if e.Reason == "" {
		return e.Err.Error()
	}
	if errors.Is(e.Err, ErrNoSource) {
		return e.Reason + "; and no fullsend checkout around the current directory"
	}
	return e.Err.Error() + " (" + e.Reason + ")"
}
func (e *BinaryError) Unwrap() error { return e.Err }

// FindSource returns the root of the fullsend module containing dir or one
// of its parents: the module the running binary was built from.
func FindSource(dir string) (string, error) {
	want := ModulePath
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path != "" && bi.Main.Path != "command-line-arguments" && !strings.HasSuffix(bi.Main.Path, ".test") {
		want = bi.Main.Path
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && modfile.ModulePath(data) == want {
			return d, nil
		}
		if parent := filepath.Dir(d); parent == d {
			break
		}
	}
	return "", fmt.Errorf("no go.mod for module %s in %s or its parents: %w", want, abs, ErrNoSource)
}

// goBuild cross-compiles the fullsend binary for p from the module at src
// into out: CGO off, -trimpath, no build ID, stripped, version stamped, so
// the same toolchain and source give the same bytes.
func goBuild(ctx context.Context, src string, p v1.Platform, version, out string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("building fullsend for %s: %w: %w", p, &BinaryError{Platform: p.String(), Err: ErrNoToolchain}, err)
	}
	data, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return fmt.Errorf("building fullsend for %s: %w", p, err)
	}
	if mp := modfile.ModulePath(data); mp != ModulePath {
		return fmt.Errorf("building fullsend for %s: %s/go.mod declares module %q, want %q", p, src, mp, ModulePath)
	}
	ldflags := "-s -w -buildid="
	if version != "" {
		if strings.ContainsAny(version, " \t\n'\"") {
			return fmt.Errorf("version %q must not contain spaces or quotes", version)
		}
		ldflags += " -X " + versionVar + "=" + version
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-ldflags", ldflags, "-o", out, mainPackage)
	cmd.Dir = src
	env := append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOFLAGS=-mod=readonly")
	if p.Architecture == "arm" && p.Variant != "" {
		env = append(env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s in %s: %w\n%s", p, src, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
