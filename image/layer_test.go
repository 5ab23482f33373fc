package image

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func TestDeterministicTar(t *testing.T) {
	mtime := time.Unix(1700000000, 500).UTC()
	files := []file{
		{path: "/opt/fullsend/policies/b.yaml", data: []byte("b")},
		{path: "/usr/local/bin/fullsend", data: []byte("bin"), exec: true},
		{path: "/opt/fullsend/agents/a.md", data: []byte("a")},
		{path: "/opt/fullsend/empty", dir: true},
	}
	data, err := deterministicTar(files, mtime)
	if err != nil {
		t.Fatal(err)
	}
	reversed := []file{files[3], files[2], files[1], files[0]}
	again, err := deterministicTar(reversed, mtime)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Fatal("input order changes the tar")
	}
	want := []struct {
		name string
		mode int64
		dir  bool
	}{
		{"opt/", 0o755, true},
		{"opt/fullsend/", 0o755, true},
		{"opt/fullsend/agents/", 0o755, true},
		{"opt/fullsend/agents/a.md", 0o644, false},
		{"opt/fullsend/empty/", 0o755, true},
		{"opt/fullsend/policies/", 0o755, true},
		{"opt/fullsend/policies/b.yaml", 0o644, false},
		{"usr/", 0o755, true},
		{"usr/local/", 0o755, true},
		{"usr/local/bin/", 0o755, true},
		{"usr/local/bin/fullsend", 0o755, false},
	}
	tr := tar.NewReader(bytes.NewReader(data))
	for i := 0; ; i++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if i != len(want) {
				t.Fatalf("%d entries, want %d", i, len(want))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(want) {
			t.Fatalf("extra entry %s", h.Name)
		}
		w := want[i]
		if h.Name != w.name || h.Mode != w.mode || (h.Typeflag == tar.TypeDir) != w.dir {
			t.Errorf("entry %d: %s %o %c, want %s %o dir=%v", i, h.Name, h.Mode, h.Typeflag, w.name, w.mode, w.dir)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(mtime.Truncate(time.Second)) {
			t.Errorf("entry %s: uid %d gid %d uname %q gname %q mtime %v", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
		if !h.AccessTime.IsZero() || !h.ChangeTime.IsZero() {
			t.Errorf("entry %s carries atime/ctime", h.Name)
		}
	}
}

func TestDeterministicTarErrors(t *testing.T) {
	tests := []struct {
		name  string
		files []file
		want  string
	}{
		{"relative", []file{{path: "opt/x"}}, "absolute"},
		{"unclean", []file{{path: "/opt/../etc/passwd"}}, "clean"},
		{"root", []file{{path: "/"}}, "absolute"},
		{"duplicate", []file{{path: "/a"}, {path: "/a"}}, "twice"},
		{"file then dir", []file{{path: "/a"}, {path: "/a/b"}}, "both"},
		{"dir then file", []file{{path: "/a/b"}, {path: "/a"}}, "both"},
		{"explicit dir over file", []file{{path: "/a"}, {path: "/a", dir: true}}, "both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := deterministicTar(tt.files, time.Unix(0, 0))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// FuzzDeterministicTar feeds arbitrary project paths: the writer must
// either refuse them or produce a readable tar whose bytes do not depend on
// the input order, never panic.
func FuzzDeterministicTar(f *testing.F) {
	f.Add("/opt/fullsend/a", "/opt/fullsend/b/c", []byte("x"))
	f.Add("/a", "/a/b", []byte{})
	f.Add("/a/../b", "//c", []byte("y"))
	f.Fuzz(func(t *testing.T, p1, p2 string, data []byte) {
		files := []file{{path: p1, data: data}, {path: p2, data: data, exec: true}}
		a, errA := deterministicTar(files, time.Unix(1, 0))
		b, errB := deterministicTar([]file{files[1], files[0]}, time.Unix(1, 0))
		if (errA == nil) != (errB == nil) {
			t.Fatalf("order changes acceptance: %v vs %v", errA, errB)
		}
		if errA != nil {
			return
		}
		if !bytes.Equal(a, b) {
			t.Fatal("order changes the bytes")
		}
		tr := tar.NewReader(bytes.NewReader(a))
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("unreadable tar: %v", err)
			}
			if strings.HasPrefix(h.Name, "/") || strings.Contains("/"+h.Name, "/../") {
				t.Fatalf("entry %q escapes the root", h.Name)
			}
		}
	})
}

// FuzzParsePlatforms: user input from --platform and --binary.
func FuzzParsePlatforms(f *testing.F) {
	for _, s := range []string{"linux/amd64", "linux/arm/v7", "windows/amd64", "linux", "", "linux/amd64:10.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ParsePlatforms(strings.Split(s, ","))
		if err != nil {
			return
		}
		for _, p := range ps {
			if p.OS != "linux" || p.Architecture == "" {
				t.Fatalf("accepted %q as %v", s, p)
			}
		}
	})
}

func TestLayerCache(t *testing.T) {
	tarData, err := deterministicTar([]file{{path: "/a", data: bytes.Repeat([]byte("data"), 1000)}}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	c := layerCache{dir: t.TempDir()}
	plan, err := planTar([]file{{path: "/a", data: bytes.Repeat([]byte("data"), 1000)}}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.newLayer(plan)
	if err != nil {
		t.Fatal(err)
	}
	hit, ok := c.lookup(first.diffID)
	if !ok || hit.digest != first.digest || hit.size != first.size {
		t.Fatalf("cache miss after store: %+v %v", hit, ok)
	}
	blobPath, metaPath := c.paths(first.diffID)
	if info, err := os.Stat(filepath.Dir(blobPath)); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("cache dir mode %v (%v), want 0700", info.Mode().Perm(), err)
	}

	t.Run("corrupted blob is ignored and replaced", func(t *testing.T) {
		if err := os.WriteFile(blobPath, []byte("garbage"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok := c.lookup(first.diffID); ok {
			t.Fatal("corrupted blob served from the cache")
		}
		again, err := c.newLayer(plan)
		if err != nil || again.digest != first.digest {
			t.Fatalf("rebuild after corruption: %v %v", again, err)
		}
		if _, ok := c.lookup(first.diffID); !ok {
			t.Fatal("cache not repaired")
		}
	})
	t.Run("same-size corruption fails the read", func(t *testing.T) {
		good, err := os.ReadFile(blobPath)
		if err != nil {
			t.Fatal(err)
		}
		bad := bytes.Clone(good)
		bad[len(bad)/2] ^= 0xff
		if err := os.WriteFile(blobPath, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		l, ok := c.lookup(first.diffID)
		if !ok {
			t.Fatal("same-size entry not found")
		}
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(rc)
		rc.Close()
		if err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Fatalf("reading a corrupted entry: %v, want a corruption error", err)
		}
		if err := os.WriteFile(blobPath, good, 0o600); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("foreign metadata is ignored", func(t *testing.T) {
		if err := os.WriteFile(metaPath, []byte(`{"compression":"zstd"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok := c.lookup(first.diffID); ok {
			t.Fatal("entry of another compressor served")
		}
	})
	t.Run("uncompressed content round-trips", func(t *testing.T) {
		hit, ok := c.lookup(first.diffID)
		if !ok {
			hit = first
		}
		rc, err := hit.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		got, err := io.ReadAll(rc)
		if err != nil || !bytes.Equal(got, tarData) {
			t.Fatalf("uncompressed differs (%v)", err)
		}
	})
}

func TestResolveEpoch(t *testing.T) {
	tests := []struct {
		name, env, dir string
		want           time.Time
		source         string
		wantErr        bool
	}{
		{"env", "1700000000", t.TempDir(), time.Unix(1700000000, 0), EpochFromEnv, false},
		{"env invalid", "yesterday", t.TempDir(), time.Time{}, "", true},
		{"env negative", "-5", t.TempDir(), time.Time{}, "", true},
		{"no git", "", t.TempDir(), time.Unix(0, 0), EpochZero, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, source, err := ResolveEpoch(context.Background(), tt.dir, func(k string) string {
				if k == "SOURCE_DATE_EPOCH" {
					return tt.env
				}
				return ""
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v", err)
			}
			if err == nil && (!got.Equal(tt.want) || source != tt.source) {
				t.Errorf("got %v %q, want %v %q", got, source, tt.want, tt.source)
			}
		})
	}
}

func TestShaTag(t *testing.T) {
	d := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("f", 64)}
	if got := ShaTag("0123456789ABCDEF0123", d); got != "sha-0123456789ab" {
		t.Errorf("got %s", got)
	}
	if got := ShaTag("", d); got != "sha256-ffffffffffff" {
		t.Errorf("got %s", got)
	}
	if got := ShaTag("not-a-commit-hash", d); got != "sha256-ffffffffffff" {
		t.Errorf("got %s", got)
	}
}

// BenchmarkBuild measures a build of the example project with a 25 MiB
// binary per platform, cold (empty cache) and warm (nothing changed).
func BenchmarkBuild(b *testing.B) {
	for _, tc := range []struct {
		name      string
		platforms []v1.Platform
	}{{"1-platform", []v1.Platform{amd64}}, {"2-platforms", []v1.Platform{amd64, arm64}}} {
		o := fixedOptions(b, tc.platforms...)
		for p, path := range o.Binaries {
			if err := os.WriteFile(path, pseudoRandomBinary(25<<20, p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(tc.name+"/cold", func(b *testing.B) {
			b.SetBytes(int64(25<<20) * int64(len(tc.platforms)))
			for i := 0; i < b.N; i++ {
				o.CacheDir = b.TempDir()
				build(b, o)
			}
		})
		b.Run(tc.name+"/warm", func(b *testing.B) {
			o.CacheDir = b.TempDir()
			build(b, o)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				build(b, o)
			}
		})
	}
}

// pseudoRandomBinary returns n bytes that compress about as well as a Go
// binary does (roughly 2:1), deterministically from seed.
func pseudoRandomBinary(n int, seed string) []byte {
	out := make([]byte, n)
	x := uint64(len(seed)) + 0x9E3779B97F4A7C15
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if i%2 == 0 {
			out[i] = byte(x)
		} else {
			out[i] = byte(i / 64)
		}
	}
	return out
}

func TestFindSource(t *testing.T) {
	root, err := FindSource("testdata/project")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "fullsend")); err != nil {
		t.Errorf("FindSource returned %s, which has no cmd/fullsend: %v", root, err)
	}
	if _, err := FindSource(t.TempDir()); !errors.Is(err, ErrNoSource) {
		t.Errorf("outside the module: %v, want ErrNoSource", err)
	}
}
