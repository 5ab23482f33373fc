package stage

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestIsDotGit(t *testing.T) {
	for name, want := range map[string]bool{
		".git": true, ".GIT": true, ".Git": true, ".git.": true, ".git ": true, ".git. .": true,
		".git::$INDEX_ALLOCATION": true, "git~1": true, "GIT~1": true, ".g\u200cit": true, "\ufeff.git": true,
		"git": false, ".gitattributes": false, ".gitmodules": false, ".github": false, "x.git": false,
		".git2": false, "..git": false, "": false,
	} {
		if got := IsDotGit(name); got != want {
			t.Errorf("IsDotGit(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestSanitizeRemoves pins what goes and what stays, one layout per row.
func TestSanitizeRemoves(t *testing.T) {
	for _, tc := range []struct {
		name    string
		root    string // the output's own name
		files   map[string]string
		dirs    []string
		want    []string // removed, sorted
		survive []string
	}{
		{name: "every spelling of .git", root: "out",
			files: map[string]string{".GIT/config": "", "a/.git./config": "", "b/git~1/HEAD": "", "c/.g\u200cit/config": "", "d/.git": "gitdir: ../x\n"},
			want:  []string{".GIT", "a/.git.", "b/git~1", "c/.g\u200cit", "d/.git"}, survive: []string{"a", "b", "c", "d"}},
		{name: "repository layouts anywhere", root: "out",
			files: map[string]string{"x/HEAD": "ref: refs/heads/main\n", "y/head": "0000\n", "y/commondir": "../x\n",
				"z/HEAD": "not a repository without objects or refs\n"},
			dirs: []string{"x/objects", "x/refs"},
			want: []string{"x", "y"}, survive: []string{"z/HEAD"}},
		{name: "data about git stays", root: "out",
			files: map[string]string{".gitattributes": "* filter=x\n", ".gitmodules": "[submodule \"m\"]\n", "hooks/post-checkout": "#!/bin/sh\n",
				"config": "[core]\n\tfsmonitor = x\n", "repo.bundle": "# v2 git bundle\n"},
			survive: []string{".gitattributes", ".gitmodules", "hooks/post-checkout", "config", "repo.bundle"}},
		{name: "the output itself named .git", root: ".git", files: map[string]string{"config": ""}, want: []string{"."}},
		{name: "the output itself a bare repository", root: "x.git", files: map[string]string{"HEAD": "ref: refs/heads/main\n"},
			dirs: []string{"refs"}, want: []string{"."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), tc.root)
			writeFiles(t, root, tc.files)
			for _, d := range tc.dirs {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Sanitize(root)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				want[i] = filepath.FromSlash(w)
			}
			if !slices.Equal(got, want) {
				t.Errorf("removed %q, want %q", got, want)
			}
			for _, s := range tc.survive {
				if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(s))); err != nil {
					t.Errorf("%s did not survive: %v", s, err)
				}
			}
			assertInert(t, root)
		})
	}
}

// TestSanitizeModes: no setuid, setgid, sticky or world write stays, and a
// directory the agent left unreadable is walked (and its .git removed).
func TestSanitizeModes(t *testing.T) {
	root := filepath.Join(t.TempDir(), "out")
	writeFiles(t, root, map[string]string{"locked/.git/config": "", "locked/ok": "x", "tool": "#!/bin/sh\n"})
	for p, mode := range map[string]os.FileMode{"tool": 0o777 | os.ModeSetuid | os.ModeSetgid, "locked": 0o000, ".": 0o777 | os.ModeSticky} {
		if err := os.Chmod(filepath.Join(root, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Sanitize(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{filepath.Join("locked", ".git")}) {
		t.Errorf("removed %q", got)
	}
	for p, want := range map[string]os.FileMode{"tool": 0o775, "locked": 0o700, ".": 0o775 | os.ModeDir} {
		info, err := os.Stat(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode() &^ os.ModeDir; got != want&^os.ModeDir {
			t.Errorf("%s: mode %v, want %v", p, info.Mode(), want)
		}
	}
	assertInert(t, root)
}

// TestSanitizeFileModes: an output that is one regular file keeps its
// place and loses its set-id and world-write bits.
func TestSanitizeFileModes(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tool")
	writeFiles(t, filepath.Dir(root), map[string]string{"tool": "#!/bin/sh\n"})
	if err := os.Chmod(root, 0o777|os.ModeSetuid|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	got, err := SanitizeReport(root)
	if err != nil || got != nil {
		t.Fatalf("SanitizeReport = %v, %v; want nothing removed", got, err)
	}
	info, err := os.Stat(root)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode() != 0o775 {
		t.Errorf("mode %v, want %v", info.Mode(), os.FileMode(0o775))
	}
}

// TestRemoveTreeLockedDirs: a failed download is removed even when the
// agent left directories without write or search permission in it (the
// retry matters only when not running as root).
func TestRemoveTreeLockedDirs(t *testing.T) {
	stage := filepath.Join(t.TempDir(), ".fullsend-download-1")
	writeFiles(t, stage, map[string]string{"out/a/b/file": "x", "out/c/file": "y"})
	for _, d := range []string{"out/a/b", "out/a", "out/c"} {
		if err := os.Chmod(filepath.Join(stage, filepath.FromSlash(d)), 0o000); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveTree(stage); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(stage); !os.IsNotExist(err) {
		t.Errorf("%s left: %v", stage, err)
	}
}

func TestSanitize(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "repo", ".git", "hooks"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "repo", ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "repo", "file"), []byte("ok"), 0o644))
	must(os.Symlink("/etc/shadow", filepath.Join(dir, "repo", "abs")))
	must(os.Symlink("file", filepath.Join(dir, "repo", "rel")))
	must(os.Symlink("..", filepath.Join(dir, "repo", "up")))
	must(os.WriteFile(filepath.Join(dir, "repo", "suid"), []byte("x"), 0o755))
	must(os.Chmod(filepath.Join(dir, "repo", "suid"), 0o4777|os.ModeSetuid))
	removed, err := Sanitize(dir)
	must(err)
	if len(removed) != 4 {
		t.Errorf("removed %v, want 3 symlinks and the .git dir", removed)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "repo", "file")); err != nil || string(b) != "ok" {
		t.Error("regular file lost")
	}
	if info, err := os.Stat(filepath.Join(dir, "repo", "suid")); err != nil || info.Mode()&os.ModeSetuid != 0 || info.Mode().Perm() != 0o775 {
		t.Errorf("setuid/world-write bits survived: %v %v", info.Mode(), err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "repo", ".git")); !os.IsNotExist(err) {
		t.Errorf(".git must go, hooks or not: %v", err)
	}
	// A symlink as the output root is removed too.
	link := filepath.Join(t.TempDir(), "out")
	must(os.Symlink("/", link))
	if r, err := Sanitize(link); err != nil || len(r) != 1 {
		t.Errorf("root symlink: %v %v", r, err)
	}
}
