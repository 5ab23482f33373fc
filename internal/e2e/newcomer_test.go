package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/fullsend-ai/agent-sandbox/internal/testregistry"
)

const (
	modulePath = "github.com/fullsend-ai/agent-sandbox"
	// e2eVersion is the version the file:// module proxy serves the
	// working tree as: a "release" only this test knows.
	e2eVersion = "v0.0.1-e2e"
	localID    = "urn:fullsend:builder:local:v1"
)

// repoRoot is the module root (this file is internal/e2e/newcomer_test.go).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestNewcomer is issue 13's acceptance test: a user with an installed
// fullsend, in an empty directory outside this module, runs init, compile,
// a two-platform image build pushed to a (loopback) registry and signed
// with a fresh key, and verify, with neither --source nor --builder-id.
//
// Two installs, both with CGO_ENABLED=0:
//
//   - `go install ./cmd/fullsend` from the checkout is a development build
//     (version "(devel)" under -buildvcs=false, or a VCS pseudo-version):
//     it serves its own platform, and for the other one fails saying why
//     (there is no release of this checkout to build).
//   - The same working tree served as module version v0.0.1-e2e by a
//     file:// module proxy (GOPROXY) and installed with `go install
//     MODULE/cmd/fullsend@v0.0.1-e2e` is what a user of a release has: the
//     non-native platform is built through the module-at-version path (go
//     install through that same proxy). Its dependencies come from the
//     module cache's download directory (a second file:// proxy), so
//     nothing is fetched from the network.
func TestNewcomer(t *testing.T) {
	if testing.Short() {
		t.Skip("installs fullsend twice and cross-compiles it (minutes)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain")
	}
	reg := testregistry.Start(t, testregistry.PlainHTTP())
	root := repoRoot(t)
	tmp := t.TempDir()
	realCache := strings.TrimSpace(string(must(t, exec.Command(goBin, "env", "GOMODCACHE").Output)))

	native := "linux/" + runtime.GOARCH
	other := "linux/arm64"
	if runtime.GOARCH == "arm64" {
		other = "linux/amd64"
	}
	if runtime.GOOS != "linux" {
		t.Skip("image build serves its own platform only on linux")
	}

	// A private module cache (the test's module version must not linger
	// in the user's) fed from the real cache's download directory.
	modcache := filepath.Join(tmp, "modcache")
	t.Cleanup(func() {
		cmd := exec.Command(goBin, "clean", "-modcache")
		cmd.Env = append(os.Environ(), "GOMODCACHE="+modcache)
		_ = cmd.Run() // the cache is read-only; go clean makes it removable
	})
	proxy := filepath.Join(tmp, "proxy")
	writeProxy(t, root, proxy)
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin",
		"HOME=" + home,
		"GOCACHE=" + strings.TrimSpace(string(must(t, exec.Command(goBin, "env", "GOCACHE").Output))),
		"GOMODCACHE=" + modcache,
		"GOPROXY=file://" + proxy + ",file://" + filepath.Join(realCache, "cache", "download"),
		"GONOSUMDB=" + modulePath,
		"GOSUMDB=off",
		// -trimpath: the private module cache's paths do not reach the
		// build cache keys, so dependencies compiled before are reused.
		"GOFLAGS=-trimpath",
		"GOTOOLCHAIN=local",
		"COSIGN_PASSWORD=newcomer-test",
	}

	// The development install.
	devBin := filepath.Join(tmp, "dev-bin")
	install := exec.Command(goBin, "install", "./cmd/fullsend")
	install.Dir = root
	install.Env = append(os.Environ(), "CGO_ENABLED=0", "GOBIN="+devBin)
	run(t, install)
	dev := filepath.Join(devBin, "fullsend")

	// The "released" install.
	relBin := filepath.Join(tmp, "rel-bin")
	install = exec.Command(goBin, "install", modulePath+"/cmd/fullsend@"+e2eVersion)
	install.Dir = tmp
	install.Env = append(env, "CGO_ENABLED=0", "GOBIN="+relBin)
	run(t, install)
	rel := filepath.Join(relBin, "fullsend")
	if out := run(t, fullsend(rel, tmp, env, "version")); !strings.Contains(out, e2eVersion) {
		t.Errorf("fullsend version of the module install: %q, want %s", out, e2eVersion)
	}

	// The newcomer's path, with the released install.
	work := filepath.Join(tmp, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	out := run(t, fullsend(rel, work, env, "init", "-o", "json"))
	var initRep struct {
		Written, Skipped, Agents, Next []string
	}
	if err := json.Unmarshal([]byte(out), &initRep); err != nil || len(initRep.Written) < 8 || len(initRep.Agents) != 1 || len(initRep.Next) != 3 {
		t.Fatalf("init: %v\n%s", err, out)
	}
	run(t, fullsend(rel, work, env, "policy", "compile", "."))
	run(t, fullsend(rel, work, env, "policy", "test", "."))
	run(t, fullsend(rel, work, env, "image", "keygen", "--output-prefix", "cosign"))

	tag := reg.Ref("newcomer/agents:v1")
	build := fullsend(rel, work, env, "image", "build", "--base", "scratch", "--platform", native+","+other,
		"--tag", tag, "--push", "--sign", "--key", "cosign.key", "--digest-file", "out/pushed.txt", "-o", "json")
	var stderr bytes.Buffer
	build.Stderr = &stderr
	start := time.Now()
	stdout, err := build.Output()
	if err != nil {
		t.Fatalf("image build: %v\n%s\n%s", err, stdout, stderr.String())
	}
	t.Logf("two-platform build, sign and push: %s", time.Since(start).Round(time.Second))
	var rep struct {
		Digest     string `json:"digest"`
		Platforms  []struct{ Platform, Digest string }
		Refs       []string
		Signatures []json.RawMessage
	}
	if err := json.Unmarshal(stdout, &rep); err != nil {
		t.Fatalf("image build output: %v\n%s", err, stdout)
	}
	if len(rep.Platforms) != 2 || len(rep.Refs) != 1 || len(rep.Signatures) != 1 {
		t.Errorf("image build: %d platforms, refs %v, %d signatures", len(rep.Platforms), rep.Refs, len(rep.Signatures))
	}
	for _, want := range []string{
		"fullsend binary for " + native + ": the running fullsend",
		"fullsend binary for " + other + ": go install " + modulePath + "/cmd/fullsend@" + e2eVersion,
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("build log lacks %q:\n%s", want, stderr.String())
		}
	}

	ref := strings.TrimSpace(string(must(t, func() ([]byte, error) { return os.ReadFile(filepath.Join(work, "out", "pushed.txt")) })))
	out = run(t, fullsend(rel, work, env, "verify", "--key", "cosign.pub", "--provenance-builder-id", localID,
		"--require-sbom", "--github-output=false", ref))
	if !strings.Contains(out, "builder:       "+localID) {
		t.Errorf("verify output lacks the local builder:\n%s", out)
	}
	// Local provenance never passes a gate that does not name it.
	gate := fullsend(rel, work, env, "verify", "--key", "cosign.pub", "--require-provenance", "--github-output=false", ref)
	if b, err := gate.CombinedOutput(); err == nil || !strings.Contains(string(b), "local build") {
		t.Errorf("verify --require-provenance of a local build: %v\n%s", err, b)
	}

	// The development install serves its own platform and explains why it
	// cannot build the other one (GOPROXY=off: no network either way).
	devWork := filepath.Join(tmp, "dev-work")
	if err := os.MkdirAll(devWork, 0o755); err != nil {
		t.Fatal(err)
	}
	devEnv := append(append([]string{}, env...), "GOPROXY=off")
	run(t, fullsend(dev, devWork, devEnv, "init"))
	run(t, fullsend(dev, devWork, devEnv, "image", "build", "--base", "scratch", "--platform", native, "--oci-layout", "out/image"))
	b, err := fullsend(dev, devWork, devEnv, "image", "build", "--base", "scratch", "--platform", native+","+other, "--oci-layout", "out/image2").CombinedOutput()
	if err == nil || !strings.Contains(string(b), "--binary "+other+"=PATH") {
		t.Errorf("two platforms from a development build: %v\n%s", err, b)
	}
	t.Logf("development build, two platforms: %s", strings.TrimSpace(lastLine(string(b))))
}

func fullsend(bin, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	return cmd
}

func run(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s\n%s", strings.Join(cmd.Args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func must[T any](t *testing.T, f func() (T, error)) T {
	t.Helper()
	v, err := f()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

// writeProxy writes a file:// GOPROXY serving the working tree (tracked and
// untracked files git does not ignore) as modulePath@e2eVersion.
func writeProxy(t *testing.T, root, proxy string) {
	t.Helper()
	ls := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	listed, err := ls.Output()
	if err != nil {
		t.Skipf("git ls-files in %s: %v (the test serves a git work tree)", root, err)
	}
	var files []modzip.File
	for _, p := range strings.Split(string(listed), "\x00") {
		if p == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			continue // deleted in the work tree
		}
		files = append(files, treeFile{root: root, path: p})
	}
	dir := filepath.Join(proxy, modulePath, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(dir, e2eVersion+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	if err := modzip.Create(zf, module.Version{Path: modulePath, Version: e2eVersion}, files); err != nil {
		t.Fatal(err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info := `{"Version":"` + e2eVersion + `","Time":"2026-01-01T00:00:00Z"}`
	for name, data := range map[string][]byte{e2eVersion + ".mod": gomod, e2eVersion + ".info": []byte(info), "list": []byte(e2eVersion + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// treeFile is a file of the work tree for modzip.Create.
type treeFile struct{ root, path string }

func (f treeFile) Path() string                 { return f.path }
func (f treeFile) Lstat() (os.FileInfo, error)  { return os.Lstat(filepath.Join(f.root, f.path)) }
func (f treeFile) Open() (io.ReadCloser, error) { return os.Open(filepath.Join(f.root, f.path)) }
