package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunErrorText: run prints each error once, its lines as lines (it
// used to print the runner's error line with literal \n and then the same
// error again), and a directory without a compiled project says where run
// looked.
func TestRunErrorText(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITLAB_CI", "")
	t.Setenv("FULLSEND_POLICIES_DIGEST", "")
	dir := filepath.Join(t.TempDir(), "agents-repo")
	if _, _, err := runFullsend(t, "init", dir); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	_, stderr, err := runFullsend(t, "run", "summarizer", dir, "--prompt", "hi")
	if err == nil {
		t.Fatal("ran with unresolved placeholders")
	}
	all := stderr + "\nfullsend: " + err.Error()
	if strings.Contains(all, `\n`) {
		t.Errorf("literal \\n in the output:\n%s", all)
	}
	if n := strings.Count(all, "{{OWNER}} is not set"); n != 1 {
		t.Errorf("the error is printed %d times, want once:\n%s", n, all)
	}
	_, _, err = runFullsend(t, "run", "summarizer", filepath.Join(dir, "nope"))
	want := filepath.Join(dir, "nope", "policies", "manifest.json")
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "/opt/fullsend") {
		t.Errorf("missing project: %v, want where it looked (%s) and the default", err, want)
	}
}
