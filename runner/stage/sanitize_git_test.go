package stage

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

// gitTool runs the real git in a hermetic environment: no system or global
// configuration, no pager or editor from the caller, and repository
// discovery stopped at ceiling, so only what the output tree holds counts.
type gitTool struct {
	t      *testing.T
	bin    string
	env    []string
	clones int
	root   string
}

func newGitTool(t *testing.T, root string) *gitTool {
	t.Helper()
	bin := testtool.Find(t, "git", ".ci/install.d/00-apt.sh git")
	home := filepath.Join(root, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C", "TERM=dumb",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
		"GIT_CEILING_DIRECTORIES=" + root, "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=red team", "GIT_AUTHOR_EMAIL=red@example.invalid",
		"GIT_COMMITTER_NAME=red team", "GIT_COMMITTER_EMAIL=red@example.invalid",
	}
	return &gitTool{t: t, bin: bin, env: env, root: root}
}

// must runs git in dir and fails the test when it fails: building the
// hostile trees.
func (g *gitTool) must(dir string, args ...string) {
	g.t.Helper()
	if out, err := g.cmd(dir, args...).CombinedOutput(); err != nil {
		g.t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}

func (g *gitTool) cmd(dir string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	g.t.Cleanup(cancel)
	c := exec.CommandContext(ctx, g.bin, args...)
	c.Dir, c.Env = dir, g.env
	return c
}

// repo makes a repository with one commit in dir: f.txt and sub/g.txt.
func (g *gitTool) repo(dir string) {
	g.t.Helper()
	writeFiles(g.t, dir, map[string]string{"f.txt": "a\n", "sub/g.txt": "b\n"})
	g.must(dir, "init", "-q")
	g.must(dir, "add", ".")
	g.must(dir, "commit", "-q", "-m", "init")
}

// probe runs the git commands a later CI step plausibly runs in dir, with
// a terminal when script(1) is there (the pager needs one), and returns
// those after which marker existed. Failures are expected once the output
// is data: only side effects count.
func (g *gitTool) probe(dir, marker string) []string {
	g.t.Helper()
	g.clones++
	clone := filepath.Join(g.root, "clones", fmt.Sprint(g.clones))
	var fired []string
	run := func(c *exec.Cmd, what string) {
		_ = c.Run()
		if _, err := os.Lstat(marker); err == nil {
			rel, _ := filepath.Rel(g.root, dir)
			fired = append(fired, what+" in "+rel)
			_ = os.Remove(marker)
		}
	}
	for _, args := range [][]string{
		{"status"},
		{"-C", "sub", "status"},
		{"diff"},
		{"log", "-1"},
		{"checkout", "-q", "-b", "fullsend-probe"},
		{"checkout", "-q", "HEAD", "--", "."},
		{"add", "-A"},
		{"submodule", "update", "--init"},
		{"ls-remote", "origin"},
		{"commit", "-q", "--allow-empty"},
		{"clone", "-q", "--no-local", ".", clone},
	} {
		run(g.cmd(dir, args...), "git "+strings.Join(args, " "))
	}
	if script, err := exec.LookPath("script"); err == nil {
		c := g.cmd(dir)
		c.Path, c.Args = script, []string{"script", "-qec", g.bin + " log -1", "/dev/null"}
		run(c, "git log -1 (on a terminal)")
	}
	return fired
}

// writeFiles writes name → content under dir, making parents; a name
// ending in .sh or under hooks/ is executable.
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

// TestSanitizeGitOutputsRunNothing is the red team's finding 1, one row per
// attack: an agent leaves a repository in its output whose configuration,
// gitdir indirection or bare layout makes the next git command on the runner
// run the agent's code. After Sanitize, real git commands run in the output
// and in each of its directories, and nothing may have executed.
func TestSanitizeGitOutputsRunNothing(t *testing.T) {
	hook := func(payload string) string { return "#!/bin/sh\n" + payload + "\n" }
	for _, tc := range []struct {
		name  string
		build func(g *gitTool, out, payload string)
		// inCheckout puts the output inside the job's own (trusted)
		// repository, as fullsend-out/ lands in $CI_PROJECT_DIR.
		inCheckout bool
	}{
		{"core.fsmonitor runs on git status", func(g *gitTool, out, payload string) {
			g.repo(out)
			g.must(out, "config", "core.fsmonitor", payload+"; false")
		}, false},
		{"core.hooksPath points at hooks outside .git", func(g *gitTool, out, payload string) {
			g.repo(out)
			writeFiles(g.t, out, map[string]string{"githooks/post-checkout": hook(payload),
				"githooks/pre-commit": hook(payload), "githooks/reference-transaction": hook(payload)})
			g.must(out, "config", "core.hooksPath", "githooks")
		}, false},
		{"core.pager runs on git log", func(g *gitTool, out, payload string) {
			// git starts a pager only on a terminal, which script(1) gives it.
			testtool.Find(g.t, "script", ".ci/install.d/00-apt.sh bsdutils")
			g.repo(out)
			g.must(out, "config", "core.pager", payload+"; cat")
		}, false},
		{"core.editor runs on git commit", func(g *gitTool, out, payload string) {
			g.repo(out)
			g.must(out, "config", "core.editor", payload+"; true")
		}, false},
		{"core.sshCommand runs on git ls-remote", func(g *gitTool, out, payload string) {
			g.repo(out)
			g.must(out, "remote", "add", "origin", "ssh://git.example.invalid/x.git")
			g.must(out, "config", "core.sshCommand", payload+"; false")
		}, false},
		{"diff.external runs on git diff", func(g *gitTool, out, payload string) {
			g.repo(out)
			g.must(out, "config", "diff.external", payload+"; true")
			writeFiles(g.t, out, map[string]string{"f.txt": "changed\n"})
		}, false},
		{"filter clean and smudge with .gitattributes", func(g *gitTool, out, payload string) {
			g.repo(out)
			writeFiles(g.t, out, map[string]string{".gitattributes": "* filter=x\n"})
			g.must(out, "config", "filter.x.clean", payload+"; cat")
			g.must(out, "config", "filter.x.smudge", payload+"; cat")
			if err := os.Remove(filepath.Join(out, "f.txt")); err != nil { // checkout restores it: smudge
				g.t.Fatal(err)
			}
		}, false},
		{"include.path pulls config from outside .git", func(g *gitTool, out, payload string) {
			g.repo(out)
			writeFiles(g.t, out, map[string]string{"evil.config": "[core]\n\tfsmonitor = \"" + payload + "; false\"\n"})
			g.must(out, "config", "include.path", "../evil.config")
		}, false},
		{"includeIf pulls config from outside .git", func(g *gitTool, out, payload string) {
			g.repo(out)
			writeFiles(g.t, out, map[string]string{"sub/evil.config": "[core]\n\tfsmonitor = \"" + payload + "; false\"\n"})
			g.must(out, "config", "includeIf.gitdir:/.path", "../sub/evil.config")
		}, false},
		// git 2.39 honours uploadpack.packObjectsHook only from protected
		// (system, global, command-line) configuration, so this row does
		// not execute even on a tree that keeps .git: it guards the class.
		{"uploadpack.packObjectsHook runs on a clone of the output", func(g *gitTool, out, payload string) {
			g.repo(out)
			g.must(out, "config", "uploadpack.packObjectsHook", payload+"; exit 1;")
		}, false},
		{"a .git file points at a gitdir whose hooks are outside any .git directory", func(g *gitTool, out, payload string) {
			g.repo(out)
			if err := os.Rename(filepath.Join(out, ".git"), filepath.Join(out, "gd")); err != nil {
				g.t.Fatal(err)
			}
			writeFiles(g.t, out, map[string]string{".git": "gitdir: gd\n", "gd/hooks/post-checkout": hook(payload),
				"gd/hooks/pre-commit": hook(payload)})
			g.must(out, "config", "core.fsmonitor", payload+"; false")
		}, false},
		{"an embedded bare repository is used when cwd is inside it", func(g *gitTool, out, payload string) {
			src := filepath.Join(g.root, "src")
			g.repo(src)
			emb := filepath.Join(out, "data", "emb")
			g.must(g.root, "clone", "-q", "--bare", src, emb)
			// core.bare=false with a worktree: git status inside the bare
			// directory runs fsmonitor; its hooks/ run on checkout.
			g.must(emb, "config", "core.bare", "false")
			g.must(emb, "config", "core.worktree", "..")
			g.must(emb, "config", "core.fsmonitor", payload+"; false")
			writeFiles(g.t, emb, map[string]string{"hooks/post-checkout": hook(payload), "hooks/pre-commit": hook(payload)})
			writeFiles(g.t, out, map[string]string{"f.txt": "a\n", "sub/g.txt": "b\n"})
		}, false},
		// .gitattributes and .gitmodules stay as data: attributes only
		// name drivers, which only configuration defines, and git takes no
		// command from .gitmodules; inside the job's checkout too.
		{name: "filter, diff and merge drivers and submodule commands from .gitattributes and .gitmodules", inCheckout: true, build: func(g *gitTool, out, payload string) {
			g.repo(out)
			writeFiles(g.t, out, map[string]string{
				".gitattributes": "* filter=x diff=x merge=x\n",
				".gitmodules":    "[submodule \"m\"]\n\tpath = m\n\turl = ./m\n\tupdate = !" + payload + "\n",
			})
			for _, kv := range [][2]string{{"filter.x.clean", payload + "; cat"}, {"filter.x.smudge", payload + "; cat"},
				{"filter.x.process", payload}, {"diff.x.command", payload}, {"diff.x.textconv", payload + "; cat"},
				{"merge.x.driver", payload}} {
				g.must(out, "config", kv[0], kv[1])
			}
			writeFiles(g.t, out, map[string]string{"f.txt": "changed\n"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			g := newGitTool(t, root)
			out := filepath.Join(root, "out")
			if tc.inCheckout {
				checkout := filepath.Join(root, "checkout")
				g.repo(checkout)
				out = filepath.Join(checkout, "fullsend-out", "out")
			}
			marks := filepath.Join(root, "marks")
			if err := os.MkdirAll(marks, 0o755); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(marks, "executed")
			tc.build(g, out, "touch '"+marker+"'")
			if _, err := Sanitize(out); err != nil {
				t.Fatalf("Sanitize: %v", err)
			}
			var fired []string
			for _, dir := range probeDirs(t, out) {
				fired = append(fired, g.probe(dir, marker)...)
			}
			if len(fired) != 0 {
				t.Errorf("the agent's code ran on the runner after Sanitize, %d time(s):\n  %s", len(fired), strings.Join(fired, "\n  "))
			}
			assertInert(t, out)
		})
	}
}

// probeDirs lists out and every directory under it, but not the insides
// of object stores and reflogs (many directories, nothing to discover).
func probeDirs(t *testing.T, out string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		dirs = append(dirs, p)
		if n := d.Name(); p != out && (n == "objects" || n == "logs") {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return dirs
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
		case IsDotGit(d.Name()):
			t.Errorf(".git left: %s", p)
		case mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 || mode.Perm()&0o002 != 0:
			t.Errorf("unsafe mode left: %s (%v)", p, mode)
		}
		if mode.IsDir() && looksLikeGitDir(t, p) {
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
func looksLikeGitDir(t testing.TB, dir string) bool {
	t.Helper()
	has := func(name string) bool { _, err := os.Lstat(filepath.Join(dir, name)); return err == nil }
	return has("HEAD") && (has("objects") && has("refs") || has("commondir"))
}
