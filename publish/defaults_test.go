package publish

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

// git runs git in dir with a fixed identity and no user configuration.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestDefaultVersion(t *testing.T) {
	testtool.Find(t, "git", ".ci/install.d/00-apt.sh git")
	repo := func(t *testing.T, steps ...func(dir string)) string {
		dir := t.TempDir()
		git(t, dir, "init", "-q")
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte("1"), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "add", "f")
		git(t, dir, "commit", "-q", "-m", "one")
		for _, s := range steps {
			s(dir)
		}
		return dir
	}
	tests := []struct {
		name string
		dir  func(t *testing.T) string
		want *regexp.Regexp
	}{
		{"not a git work tree", func(t *testing.T) string { return t.TempDir() }, regexp.MustCompile(`^$`)},
		{"untagged commit: short hash", func(t *testing.T) string { return repo(t) }, regexp.MustCompile(`^[0-9a-f]{7,}$`)},
		{"tagged commit: the tag", func(t *testing.T) string {
			return repo(t, func(dir string) { git(t, dir, "tag", "v1.2.0") })
		}, regexp.MustCompile(`^v1\.2\.0$`)},
		{"after the tag: tag, distance, hash", func(t *testing.T) string {
			return repo(t, func(dir string) {
				git(t, dir, "tag", "v1.2.0")
				git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
			})
		}, regexp.MustCompile(`^v1\.2\.0-1-g[0-9a-f]{7,}$`)},
		{"modified work tree: dirty", func(t *testing.T) string {
			return repo(t, func(dir string) {
				git(t, dir, "tag", "v1.2.0")
				if err := os.WriteFile(filepath.Join(dir, "f"), []byte("2"), 0o644); err != nil {
					t.Fatal(err)
				}
			})
		}, regexp.MustCompile(`^v1\.2\.0-dirty$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultVersion(context.Background(), tt.dir(t)); !tt.want.MatchString(got) {
				t.Errorf("DefaultVersion = %q, want %s", got, tt.want)
			}
		})
	}
}

func TestCacheDir(t *testing.T) {
	home := func() (string, error) { return "/home/u/.cache", nil }
	broken := func() (string, error) { return "", errors.New("no home") }
	tests := []struct {
		name    string
		dir     string
		noCache bool
		user    func() (string, error)
		want    string
	}{
		{"default: under the user cache dir", "", false, home, filepath.Join("/home/u/.cache", "fullsend", "layers")},
		{"explicit dir", "/tmp/layers", false, home, "/tmp/layers"},
		{"no cache wins over a dir", "/tmp/layers", true, home, ""},
		{"no cache", "", true, home, ""},
		{"no user cache dir: no cache", "", false, broken, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CacheDir(tt.dir, tt.noCache, tt.user); got != tt.want {
				t.Errorf("CacheDir = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTarballTag pins today's behaviour: the strict check of "x:VERSION"
// fails for want of a registry, so every version falls back to "build"
// (the refactor that moved this function out of the CLI kept it so; using
// the version is a behaviour change of its own).
func TestTarballTag(t *testing.T) {
	for _, tt := range []struct{ version, want string }{
		{"v1.2.3", "build"},
		{"v1.2.0-3-gabcdef0-dirty", "build"},
		{"", "build"},
		{"not/a tag", "build"},
		{strings.Repeat("x", 129), "build"},
	} {
		if got := TarballTag(tt.version); got != tt.want {
			t.Errorf("TarballTag(%q) = %q, want %q", tt.version, got, tt.want)
		}
	}
}

func TestShaTags(t *testing.T) {
	tags := mustTags(t, "r.example/a:v1", "r.example/a:v1.0", "r.example/b:v1", "other.example/a:v1")
	var got []string
	for _, tag := range ShaTags(tags, "sha-0123456789ab") {
		got = append(got, tag.String())
	}
	want := []string{"r.example/a:sha-0123456789ab", "r.example/b:sha-0123456789ab", "other.example/a:sha-0123456789ab"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ShaTags = %v, want %v (one per repository, in order)", got, want)
	}
}

func TestBaseRef(t *testing.T) {
	const d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tt := range []struct{ name, digest, want string }{
		{"ghcr.io/acme/base:v1", d, "ghcr.io/acme/base@" + d},
		{"ghcr.io/acme/base@" + d, d, "ghcr.io/acme/base@" + d},
		{"ubuntu", d, "index.docker.io/library/ubuntu@" + d},
		{"", d, ""},
		{"ghcr.io/acme/base:v1", "", ""},
		{"NOT A REF", d, ""},
	} {
		if got := BaseRef(tt.name, tt.digest); got != tt.want {
			t.Errorf("BaseRef(%q, %q) = %q, want %q", tt.name, tt.digest, got, tt.want)
		}
	}
}
