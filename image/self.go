package image

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// CommandPath is the import path of the fullsend command.
const CommandPath = ModulePath + "/cmd/fullsend"

// Executable describes an installed fullsend binary: the running one (see
// CurrentExecutable). It serves its own platform when it is statically
// linked; other platforms are built from Module at Version when that is a
// real module version (not "(devel)", not from a modified tree).
type Executable struct {
	// Path is the binary file (os.Executable, links resolved).
	Path string
	// Platform is the GOOS/GOARCH (and GOARM variant) it was built for.
	Platform v1.Platform
	// Module and Version are the main module of its build info.
	Module, Version string
	// Modified is the vcs.modified build setting: built from a dirty tree.
	Modified bool
	// Static is false for a dynamically linked binary (built with cgo),
	// which would not start on a base without the host's C library.
	Static bool
}

// CurrentExecutable describes the running program, or returns nil when it
// is not the fullsend command (a test binary, `go run` of another main).
func CurrentExecutable() *Executable {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	path, err := os.Executable()
	if err != nil {
		return nil
	}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	return executableFrom(bi, path, runtime.GOOS, runtime.GOARCH, isStatic)
}

// executableFrom is CurrentExecutable with its inputs given.
func executableFrom(bi *debug.BuildInfo, path, goos, goarch string, static func(string) bool) *Executable {
	if bi == nil || bi.Path != CommandPath {
		return nil
	}
	e := &Executable{
		Path:     path,
		Platform: v1.Platform{OS: goos, Architecture: goarch},
		Module:   bi.Main.Path,
		Version:  bi.Main.Version,
		Static:   static(path),
	}
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.modified":
			e.Modified = s.Value == "true"
		case s.Key == "GOARM" && goarch == "arm":
			e.Platform.Variant = "v" + strings.TrimSuffix(strings.TrimSuffix(s.Value, ",softfloat"), ",hardfloat")
		}
	}
	return e
}

// isStatic reports whether the ELF file at path has no program
// interpreter (no dynamic loader). A file that is not ELF is not static.
func isStatic(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// Serves reports whether e itself can go into the image for p.
func (e *Executable) Serves(p v1.Platform) bool {
	return e != nil && e.Static && e.Platform.OS == p.OS && e.Platform.Architecture == p.Architecture &&
		(p.Variant == "" || e.Platform.Variant == "" || p.Variant == e.Platform.Variant)
}

// Released reports whether e names a module version the Go toolchain can
// fetch again: a version, not "(devel)", not from a modified tree.
func (e *Executable) Released() bool {
	return e != nil && e.Module == ModulePath && e.Version != "" && e.Version != "(devel)" &&
		!e.Modified && !strings.HasSuffix(e.Version, "+dirty")
}

// why explains why e cannot provide the binary for p.
func (e *Executable) why(p v1.Platform) string {
	switch {
	case e == nil:
		return "the running program is not an installed fullsend command"
	case e.Platform.OS == p.OS && e.Platform.Architecture == p.Architecture && !e.Static:
		return fmt.Sprintf("%s is dynamically linked (built with cgo) and would not start in the image; reinstall it with CGO_ENABLED=0", e.Path)
	case e.Version == "" || e.Version == "(devel)":
		return fmt.Sprintf("this fullsend is a development build (version %s): it serves %s only, and there is no module version to build %s from", orDevel(e.Version), e.Platform, p)
	case e.Modified || strings.HasSuffix(e.Version, "+dirty"):
		return fmt.Sprintf("this fullsend was built from a modified tree (version %s, vcs.modified=true): it serves %s only, and %s cannot be rebuilt from the same source", e.Version, e.Platform, p)
	default:
		return fmt.Sprintf("module %s is not %s", e.Module, ModulePath)
	}
}

// moduleBuildNote is the one line logged before the binary for p is built
// with go install at e's version: why the running fullsend cannot be used,
// that it takes a while (the first time: the whole module graph is
// downloaded and compiled), and how to avoid it.
func moduleBuildNote(e *Executable, p v1.Platform) string {
	why := fmt.Sprintf("this fullsend is built for %s", e.Platform)
	if e.Platform.OS == p.OS && e.Platform.Architecture == p.Architecture && !e.Static {
		why = fmt.Sprintf("this fullsend (%s) is dynamically linked (built with cgo) and would not start in the image", e.Path)
	}
	how := "pass --binary " + p.String() + "=PATH to use a prebuilt one"
	if e.Platform.OS == p.OS && e.Platform.Architecture == p.Architecture {
		how = "install fullsend with CGO_ENABLED=0 go install " + CommandPath + "@" + e.Version + " to skip this"
	}
	return fmt.Sprintf("building fullsend %s for %s with go install (CGO_ENABLED=0): %s; the first build downloads and compiles the module and may take minutes (%s)",
		e.Version, p, why, how)
}

func orDevel(v string) string {
	if v == "" {
		return "(devel)"
	}
	return v
}

// Binary sources, as logged by Build for each platform.
const (
	FromBinary     = "--binary"
	FromExecutable = "the running fullsend"
	FromSource     = "source module"
	FromModule     = "module at version"
)

// binarySource says where the binary for p comes from, or why none can.
func (o *Options) binarySource(p v1.Platform) (string, error) {
	switch {
	case o.Binaries[p.String()] != "":
		return FromBinary, nil
	case o.Self.Serves(p):
		return FromExecutable, nil
	case o.Source != "":
		return FromSource, nil
	case o.Self.Released():
		return FromModule, nil
	}
	return "", fmt.Errorf("no fullsend binary for %s: %w", p, &BinaryError{Platform: p.String(), Err: ErrNoSource, Reason: o.Self.why(p)})
}

// CheckBinaries reports the first platform of o for which no binary can
// be had (none given, the running fullsend does not serve it, no source
// module, no released version to build), before anything is built.
func CheckBinaries(o Options) error {
	for _, p := range o.Platforms {
		if _, err := o.binarySource(p); err != nil {
			return err
		}
	}
	return nil
}

// NeedsSource reports whether some platform of o can only be compiled
// from a source module: no binary given, not served by the running
// fullsend, and no released version to build.
func NeedsSource(o Options) bool {
	for _, p := range o.Platforms {
		if o.Binaries[p.String()] == "" && !o.Self.Serves(p) && !o.Self.Released() {
			return true
		}
	}
	return false
}

// goInstall builds CommandPath at e's module version for p with the Go
// toolchain (through the module proxy of the environment), into a private
// GOPATH under tmp that shares the user's module cache, and returns the
// binary's path: CGO off, -trimpath, read-only module graph, no build ID,
// stripped, as goBuild compiles a checkout.
func goInstall(ctx context.Context, e *Executable, p v1.Platform, tmp string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building fullsend %s for %s: %w: %w", e.Version, p, &BinaryError{Platform: p.String(), Err: ErrNoToolchain}, err)
	}
	modcache, err := exec.CommandContext(ctx, goBin, "env", "GOMODCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	gopath := filepath.Join(tmp, "gopath-"+platformSlug(p))
	target := CommandPath + "@" + e.Version
	cmd := exec.CommandContext(ctx, goBin, "install", "-ldflags", "-s -w -buildid=", target)
	cmd.Dir = tmp // outside any module: go.mod of the current directory does not apply
	env := append(os.Environ(), "GOPATH="+gopath, "GOMODCACHE="+strings.TrimSpace(string(modcache)), "GOBIN=",
		"CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOFLAGS=-trimpath -mod=readonly")
	if p.Architecture == "arm" && p.Variant != "" {
		env = append(env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install %s for %s (GOOS=%s GOARCH=%s): %w\n%s", target, p, p.OS, p.Architecture, err, strings.TrimSpace(out.String()))
	}
	// go install puts a cross-compiled binary under bin/GOOS_GOARCH.
	for _, c := range []string{
		filepath.Join(gopath, "bin", p.OS+"_"+p.Architecture, "fullsend"),
		filepath.Join(gopath, "bin", "fullsend"),
	} {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	return "", errors.New("go install " + target + ": no fullsend binary under " + filepath.Join(gopath, "bin"))
}
