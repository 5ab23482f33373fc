package runner

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/runner/stage"
)

// The output tests of a whole run check what package stage's own tests
// check of stage.Sanitize: these helpers are the same as there.

// writeFiles writes name → content under dir, making parents; a file
// whose content starts with #! is executable.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(content, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// assertInert checks the invariant of a sanitized output: no symbolic
// link, no special file, no .git entry, no directory git would take for a
// repository, no setuid/setgid/sticky bit and nothing world-writable.
func assertInert(t testing.TB, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := info.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			t.Errorf("symlink left: %s", p)
		case !mode.IsDir() && !mode.IsRegular():
			t.Errorf("special file left: %s (%v)", p, mode)
		case stage.IsDotGit(d.Name()):
			t.Errorf(".git left: %s", p)
		case mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 || mode.Perm()&0o002 != 0:
			t.Errorf("unsafe mode left: %s (%v)", p, mode)
		}
		if mode.IsDir() && looksLikeGitDir(p) {
			t.Errorf("repository-shaped directory left: %s", p)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// looksLikeGitDir is git's own test (setup.c is_git_directory), loosely:
// HEAD next to objects/ and refs/, or HEAD with a commondir file.
func looksLikeGitDir(dir string) bool {
	has := func(name string) bool { _, err := os.Lstat(filepath.Join(dir, name)); return err == nil }
	return has("HEAD") && (has("objects") && has("refs") || has("commondir"))
}
