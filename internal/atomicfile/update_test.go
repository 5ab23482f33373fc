//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestUpdateIn(t *testing.T) {
	want := []byte("policy: 1\n")
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) // what is at "p.yaml" before
		wrote bool
	}{
		{"missing", func(*testing.T, string) {}, true},
		{"identical", func(t *testing.T, dir string) { writeFile(t, dir, "p.yaml", want, 0o644) }, false},
		{"other bytes, same size", func(t *testing.T, dir string) { writeFile(t, dir, "p.yaml", []byte("policy: 2\n"), 0o644) }, true},
		{"longer", func(t *testing.T, dir string) { writeFile(t, dir, "p.yaml", append(want, 'x'), 0o644) }, true},
		{"shorter", func(t *testing.T, dir string) { writeFile(t, dir, "p.yaml", want[:3], 0o644) }, true},
		{"other mode", func(t *testing.T, dir string) { writeFile(t, dir, "p.yaml", want, 0o600) }, true},
		{"link to identical file", func(t *testing.T, dir string) {
			writeFile(t, dir, "target", want, 0o644)
			if err := os.Symlink("target", filepath.Join(dir, "p.yaml")); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"fifo", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "p.yaml"), 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, true},
		{"directory", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "p.yaml"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			before, _ := os.Lstat(filepath.Join(dir, "p.yaml"))
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			wrote, err := UpdateIn(root, "p.yaml", want, 0o644)
			if tt.name == "directory" {
				// A directory cannot be replaced by a rename; the error says so.
				if err == nil {
					t.Fatal("replacing a directory succeeded")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if wrote != tt.wrote {
				t.Errorf("wrote = %v, want %v", wrote, tt.wrote)
			}
			after, err := os.Lstat(filepath.Join(dir, "p.yaml"))
			if err != nil || !after.Mode().IsRegular() || after.Mode().Perm() != 0o644 {
				t.Fatalf("after: %v, %v", after, err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "p.yaml")); string(got) != string(want) {
				t.Errorf("contents %q", got)
			}
			if !tt.wrote && !os.SameFile(before, after) {
				t.Error("an identical file was replaced")
			}
			if tt.name == "link to identical file" {
				if got, _ := os.ReadFile(filepath.Join(dir, "target")); string(got) != string(want) {
					t.Errorf("the link's target changed: %q", got)
				}
			}
		})
	}
}

func writeFile(t *testing.T, dir, name string, data []byte, perm os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}
