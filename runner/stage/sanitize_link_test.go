//go:build unix

package stage

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSanitizeHardLinks is the regression test of "hard links in downloads
// are not detected": a regular file with another name was kept, and its
// mode cleared through it, which changed the file under its other name,
// outside the output. Every name of a file with more than one goes, like a
// symbolic link, and the file under its other name is left as it was.
func TestSanitizeHardLinks(t *testing.T) {
	for _, tc := range []struct {
		name string
		// link makes the output under dir (output at dir/out) and returns
		// the file outside the output that the output aliases, if any.
		link        func(t *testing.T, dir string) string
		root        string // the output, relative to dir
		wantRemoved []string
		wantKept    []string
	}{
		{name: "alias of a file outside the output", root: "out",
			link: func(t *testing.T, dir string) string {
				writeFiles(t, dir, map[string]string{"outside/config": "trusted\n", "out/report.md": "ok\n"})
				mustT(t, os.Chmod(filepath.Join(dir, "outside/config"), 0o666))
				mustT(t, os.Link(filepath.Join(dir, "outside/config"), filepath.Join(dir, "out/notes.txt")))
				return filepath.Join(dir, "outside/config")
			},
			wantRemoved: []string{"notes.txt"}, wantKept: []string{"report.md"}},
		{name: "every name of a file linked inside the output", root: "out",
			link: func(t *testing.T, dir string) string {
				writeFiles(t, dir, map[string]string{"out/a.txt": "x\n", "out/plain.txt": "y\n"})
				mustT(t, os.MkdirAll(filepath.Join(dir, "out/sub"), 0o755))
				mustT(t, os.Link(filepath.Join(dir, "out/a.txt"), filepath.Join(dir, "out/sub/b.txt")))
				return ""
			},
			wantRemoved: []string{"a.txt", filepath.Join("sub", "b.txt")}, wantKept: []string{"plain.txt", "sub"}},
		{name: "an output that is itself a hard link", root: "report",
			link: func(t *testing.T, dir string) string {
				writeFiles(t, dir, map[string]string{"outside/key": "k\n"})
				mustT(t, os.Chmod(filepath.Join(dir, "outside/key"), 0o777|os.ModeSetuid))
				mustT(t, os.Link(filepath.Join(dir, "outside/key"), filepath.Join(dir, "report")))
				return filepath.Join(dir, "outside/key")
			},
			wantRemoved: []string{"."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			outside := tc.link(t, dir)
			var before os.FileInfo
			if outside != "" {
				var err error
				if before, err = os.Lstat(outside); err != nil {
					t.Fatal(err)
				}
			}
			root := filepath.Join(dir, tc.root)
			removed, err := Sanitize(root)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(removed)
			if !slices.Equal(removed, tc.wantRemoved) {
				t.Errorf("removed %q, want %q", removed, tc.wantRemoved)
			}
			for _, r := range tc.wantRemoved {
				if _, err := os.Lstat(filepath.Join(root, r)); !os.IsNotExist(err) {
					t.Errorf("%s is still there: %v", r, err)
				}
			}
			for _, k := range tc.wantKept {
				if _, err := os.Lstat(filepath.Join(root, k)); err != nil {
					t.Errorf("%s was removed: %v", k, err)
				}
			}
			if outside != "" {
				after, err := os.Lstat(outside)
				if err != nil {
					t.Fatalf("the file outside the output is gone: %v", err)
				}
				if after.Mode() != before.Mode() {
					t.Errorf("the file outside the output changed mode: %v, was %v", after.Mode(), before.Mode())
				}
			}
		})
	}
}

func mustT(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
