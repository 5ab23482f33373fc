package stage

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

// TestStageWorkspace checks the staged copy: work tree and symlinks as
// they are, runtime config left out at any depth, git hooks and outside
// .git links dropped, every git config (submodules too) rewritten, the
// checkout untouched.
func TestStageWorkspace(t *testing.T) {
	ws := checkout(t, map[string]string{
		"src/main.go": "package main\n", ".gitignore": "bin/\n",
		".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n\tbare = false\n[credential]\n\thelper = store\n",
		".git/hooks/post-checkout": "#!/bin/sh\n", ".git/refs/heads/main": "0000\n",
		".git/modules/lib/HEAD": "ref: refs/heads/main\n", ".git/modules/lib/config": "[core]\n\tfsmonitor = x\n",
		".git/modules/lib/hooks/pre-commit": "#!/bin/sh\n", ".git/refs/heads/hooks/config": "0000\n",
		"lib/.git": "gitdir: ../.git/modules/lib\n", "vendor/x/.git": "gitdir: /home/runner/elsewhere/.git\n",
		"pkg/.claude/settings.json": "{}", "pkg/sub/CLAUDE.md": "x", ".agents/skills/s/SKILL.md": "x", ".agents/README": "kept",
	})
	os.Symlink("src/main.go", filepath.Join(ws, "link"))
	os.Symlink("/etc", filepath.Join(ws, ".opencode"))
	syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o600)
	before := treeSnapshot(t, ws)
	w, err := Copy(ws, filepath.Join(t.TempDir(), "stage"), NewScanner(noEnv, nil))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(w.Dir) != "repo" {
		t.Errorf("staged as %s, want the workspace's basename", w.Dir)
	}
	got := treeSnapshot(t, w.Dir)
	for _, want := range []string{"src/main.go", ".gitignore", ".git/HEAD", ".git/config", ".git/refs/heads/main",
		".git/modules/lib/config", "lib/.git", ".agents/README", ".git/refs/heads/hooks/config", "link -> src/main.go"} {
		if _, ok := got[want]; !ok && !slices.Contains(keys(got), want) {
			t.Errorf("staged copy lacks %s: %v", want, keys(got))
		}
	}
	for _, gone := range []string{".git/hooks/post-checkout", ".git/modules/lib/hooks/pre-commit", "vendor/x/.git",
		"pkg/.claude/settings.json", "pkg/sub/CLAUDE.md", ".agents/skills/s/SKILL.md", ".opencode -> /etc", "fifo"} {
		if slices.Contains(keys(got), gone) {
			t.Errorf("staged copy holds %s", gone)
		}
	}
	for _, cfg := range []string{".git/config", ".git/modules/lib/config"} {
		if c := got[cfg]; strings.Contains(c, "helper") || strings.Contains(c, "fsmonitor") || !strings.HasPrefix(c, gitConfigHeader) {
			t.Errorf("%s not rewritten:\n%s", cfg, c)
		}
	}
	if got[".git/refs/heads/hooks/config"] != "0000\n" {
		t.Error("a ref named like a config file was rewritten")
	}
	if after := treeSnapshot(t, ws); !mapsEqual(before, after) {
		t.Error("staging changed the checkout")
	}
	if len(w.Blocking) != 0 {
		t.Errorf("findings in a clean workspace: %v", w.Blocking)
	}
}

// TestStageWorkspaceCommittedFixtures: a token shape in a committed file
// (a scanner's test fixture) is the repository's own content and does not
// stop the run; the same shape in a modified or untracked file does. Both
// index formats git writes (v2, v4) are read.
func TestStageWorkspaceCommittedFixtures(t *testing.T) {
	git := testtool.Find(t, "git", ".ci/install.d/00-apt.sh")
	fixture := "ghp_" + strings.Repeat("F", 36)
	for _, version := range []string{"2", "4"} {
		t.Run("index v"+version, func(t *testing.T) {
			ws := checkout(t, map[string]string{"testdata/fixture.txt": "token: " + fixture + "\n", "edited.txt": "ok\n"})
			run := func(args ...string) {
				cmd := exec.Command(git, append([]string{"-C", ws, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, b)
				}
			}
			run("init", "-q")
			run("add", ".")
			run("commit", "-q", "-m", "x")
			run("update-index", "--index-version", version)
			os.WriteFile(filepath.Join(ws, "edited.txt"), []byte("ok "+fixture+"\n"), 0o644)
			os.WriteFile(filepath.Join(ws, "untracked.txt"), []byte(fixture), 0o644)
			w, err := Copy(ws, filepath.Join(t.TempDir(), "stage"), NewScanner(noEnv, nil))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := w.Committed["testdata/fixture.txt"]; !ok || len(w.Committed) != 1 {
				t.Errorf("committed: %v, want the committed fixture only", w.Committed)
			}
			if len(w.Blocking) != 2 || w.Blocking["edited.txt"] == nil || w.Blocking["untracked.txt"] == nil {
				t.Errorf("blocking: %v, want the edited and the untracked file", w.Blocking)
			}
			if err := w.Refusal(); err == "" || strings.Contains(err, fixture) {
				t.Errorf("refusal %v", err)
			}
			// The staged repository still works for the agent.
			cmd := exec.Command(git, "-C", w.Dir, "log", "--oneline")
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("git log in the staged copy: %v\n%s", err, b)
			}
		})
	}
}

// treeSnapshot maps every entry under dir to its content (files), its target
// (symlinks, as "name -> target") or "" (directories).
func treeSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel+" -> "+target] = ""
		case info.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			out[rel] = string(b)
		case !info.IsDir():
			out[rel] = "special"
		}
		return nil
	})
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
