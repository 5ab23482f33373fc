package gitrepo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

// An unknown revision names itself and the branches there are (git's
// --quiet message is empty), and a directory outside a repository says so.
func TestResolveCommitUnknown(t *testing.T) {
	git := testtool.Find(t, "git", ".ci/install.d/10-git.sh")
	repo := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command(git, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "master")
	run("commit", "-q", "--allow-empty", "-m", "base")
	run("branch", "more-access")
	for _, tc := range []struct {
		name, dir, rev, want string
	}{
		{"unknown branch", repo, "main", `unknown revision "main" (branches: master, more-access)`},
		{"known branch", repo, "more-access", ""},
		{"not a repository", t.TempDir(), "main", `unknown revision "main" (not a git repository, or its branches cannot be listed)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ResolveCommit(context.Background(), tc.dir, tc.rev)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != tc.want || !errors.Is(err, ErrRevision) {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
		})
	}
}

// More branches than an error lists are counted.
func TestBranchListBounded(t *testing.T) {
	git := testtool.Find(t, "git", ".ci/install.d/10-git.sh")
	repo := t.TempDir()
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	for _, args := range [][]string{{"init", "-q", "-b", "b00"}, {"commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	for i := 1; i < 13; i++ {
		cmd := exec.Command(git, "branch", "b"+string(rune('a'+i)))
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	got := branchList(context.Background(), repo)
	if !strings.HasSuffix(got, ", and 3 more") || strings.Count(got, ",") != 10 {
		t.Fatalf("got %q", got)
	}
}
