package projectroot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFind lays out a tree, then looks for the root from a start in it.
func TestFind(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tree  []string // paths to create; a trailing / makes a directory
		start string   // relative to the tree
		want  string   // the root, relative to the tree; "" = ErrNotFound
	}{
		{"the start is the root", []string{"agents/a.md"}, ".", "."},
		{"from agents/", []string{"agents/a.md"}, "agents", "."},
		{"from a skill", []string{"skills/s/SKILL.md"}, "skills/s", "."},
		{"version file", []string{".fullsend-version", "docs/x/"}, "docs/x", "."},
		{"compiled bundle", []string{"policies/manifest.json", "policies/x/"}, "policies/x", "."},
		{"nearest wins", []string{"agents/", "sub/agents/", "sub/deep/"}, "sub/deep", "sub"},
		{"project in a repository", []string{".git/", "proj/agents/", "proj/sub/"}, "proj/sub", "proj"},
		{"the walk stops at the repository root", []string{"agents/", "repo/.git/", "repo/sub/"}, "repo/sub", ""},
		{".claude at the start", []string{".claude/agents/", "sub/"}, ".", "."},
		{".claude above the start is not a root", []string{".claude/agents/", "sub/"}, "sub", ""},
		{".opencode at the start", []string{".opencode/agent/"}, ".", "."},
		{"a file named agents is no marker", []string{"agents", "sub/"}, "sub", ""},
		{"a directory named .fullsend-version is no marker", []string{".fullsend-version/", "sub/"}, "sub", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			// The tree's parent is a repository of its own, so that no
			// marker above the temporary directory is found.
			base := filepath.Join(top, "t")
			mkTree(t, top, ".git/", "t/")
			mkTree(t, base, tc.tree...)
			got, err := Find(filepath.Join(base, tc.start))
			if tc.want == "" {
				if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "a project root holds .fullsend-version, policies/manifest.json, agents/") {
					t.Fatalf("got %q, %v; want ErrNotFound", got, err)
				}
				return
			}
			if err != nil || got != filepath.Join(base, tc.want) {
				t.Fatalf("got %q, %v; want %s", got, err, filepath.Join(base, tc.want))
			}
		})
	}
}

// A relative start gives a relative root, as the user would write it.
func TestFindRelative(t *testing.T) {
	top := t.TempDir()
	mkTree(t, top, ".git/", "agents/", "skills/s/")
	t.Chdir(filepath.Join(top, "skills", "s"))
	for start, want := range map[string]string{".": filepath.Join("..", ".."), "..": filepath.Join("..", "..")} {
		if got, err := Find(start); err != nil || got != want {
			t.Errorf("Find(%q) = %q, %v; want %q", start, got, err, want)
		}
	}
	t.Chdir(top)
	if got, err := Find("skills"); err != nil || got != "." {
		t.Errorf("Find(skills) = %q, %v; want .", got, err)
	}
}

// mkTree creates paths under dir: a trailing / makes a directory, else an
// empty file.
func mkTree(t *testing.T, dir string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
