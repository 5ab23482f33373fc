package agentdef

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// TestSymlinksOnDisk checks that links are reported, not followed, on a
// real directory opened through os.Root.
func TestSymlinksOnDisk(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	if err := os.WriteFile(secret, []byte("---\nname: s\ndescription: d\ntools: Read\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		setup func(root string) error
		want  string
	}{
		{"linked agent file", func(root string) error {
			if err := os.MkdirAll(filepath.Join(root, "agents"), 0o755); err != nil {
				return err
			}
			return os.Symlink(secret, filepath.Join(root, "agents", "s.md"))
		}, "agents/s.md:1:1"},
		{"linked layout directory", func(root string) error {
			if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
				return err
			}
			return os.Symlink(outside, filepath.Join(root, ".claude", "agents"))
		}, ".claude/agents:1:1"},
		{"linked skill directory", func(root string) error {
			if err := os.MkdirAll(filepath.Join(root, "skills"), 0o755); err != nil {
				return err
			}
			return os.Symlink(outside, filepath.Join(root, "skills", "s"))
		}, "skills/s:1:1"},
		{"relative link escaping the project", func(root string) error {
			if err := os.MkdirAll(filepath.Join(root, "agents"), 0o755); err != nil {
				return err
			}
			return os.Symlink("../../x.md", filepath.Join(root, "agents", "x.md"))
		}, "agents/x.md:1:1"},
		{"link to an unscanned directory", func(root string) error {
			if err := os.MkdirAll(filepath.Join(root, "agents"), 0o755); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(root, "drafts"), 0o755); err != nil {
				return err
			}
			return os.Symlink("../drafts", filepath.Join(root, "agents", "drafts"))
		}, "agents/drafts:1:1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.setup(dir); err != nil {
				t.Skipf("cannot create symlinks here: %v", err)
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			_, err = Load(root.FS())
			var ds Diagnostics
			if !errors.As(err, &ds) || len(ds) != 1 || ds[0].Pos.String() != tc.want || !strings.Contains(ds[0].Message, "symbolic link") {
				t.Fatalf("got %v, want one symlink error at %s", err, tc.want)
			}
		})
	}
}

func TestExcluded(t *testing.T) {
	for rel, want := range map[string]bool{
		"a.md": false, "sub/a.md": false, "_draft.md": true, "sub/_x/a.md": true,
		".hidden/a.md": true, "README.md": true, "sub/readme.md": true, "READMEx.md": false,
	} {
		if got := excluded(rel); got != want {
			t.Errorf("excluded(%q) = %v", rel, got)
		}
	}
}

// TestInProjectAliasLinks accepts the common `.claude/skills -> ../skills`
// layout: the skills are read once, through their real path.
func TestInProjectAliasLinks(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"skills/labels", "agents", ".claude/agents"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "skills/labels/SKILL.md"), []byte("---\nname: labels\ndescription: d\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents/a.md"), []byte("---\nname: a\ndescription: d\ntools: Read\nskills: [labels]\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../skills", filepath.Join(dir, ".claude/skills")); err != nil {
		t.Skipf("cannot create symlinks here: %v", err)
	}
	if err := os.Symlink("../../agents/a.md", filepath.Join(dir, ".claude/agents/a.md")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	proj, err := Load(root.FS())
	if err != nil {
		t.Fatal(err)
	}
	if len(proj.Agents) != 1 || len(proj.Skills) != 1 || proj.Skills["labels"].File != "skills/labels/SKILL.md" || len(proj.Files) != 2 {
		t.Errorf("skills = %v, files = %v", proj.Skills, proj.Files)
	}
}

func TestNestedSkillVariantsWarn(t *testing.T) {
	proj := loadOne(t, map[string]string{
		"skills/labels/SKILL.md":             "---\nname: labels\ndescription: d\n---\n",
		"skills/labels/github/SKILL.md":      "---\nname: labels\ndescription: github variant\n---\n",
		"skills/labels/scripts/run.sh":       "#!/bin/sh\n",
		"skills/labels/github/deep/SKILL.md": "not read",
	})
	w := warnings(proj)
	if w != "skills/labels/github/SKILL.md:1:1 : nested SKILL.md (a skill variant) is not compiled; agents get skills/labels/SKILL.md" {
		t.Errorf("warnings = %q", w)
	}
	if len(proj.Files) != 1 {
		t.Errorf("files = %v", proj.Files)
	}
}

func TestMissingSkillWithVariants(t *testing.T) {
	proj, err := Load(fstest.MapFS{
		"agents/a.md":                   {Data: []byte("---\nname: a\ndescription: d\ntools: Read\nskills: [labels]\n---\n")},
		"skills/labels/github/SKILL.md": {Data: []byte("---\nname: labels\ndescription: d\n---\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range proj.Warnings {
		if w.Field == "skills[0]" && strings.Contains(w.Hint, "only variants exist (skills/labels/github/SKILL.md); copy the one your agents run with to skills/labels/SKILL.md") {
			return
		}
	}
	t.Fatalf("no variant hint among the warnings: %v", proj.Warnings)
}
