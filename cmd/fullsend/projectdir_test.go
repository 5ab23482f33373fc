package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/projectroot"
)

// initProject scaffolds a project in a repository of its own (a .git
// directory above it ends the root walk) and returns its directory.
func initProject(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(repo, "my-agents")
	if _, _, err := runFullsend(t, "init", dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Commands without DIR, run from a subdirectory of the project, work on
// the project root (as git and go do); outside any project they say where
// they looked.
func TestCommandsFindTheProjectRoot(t *testing.T) {
	dir := initProject(t)
	for _, tc := range []struct {
		name string
		from string // relative to the project
		args []string
		want string // in stdout
	}{
		{"policy test from agents/", "agents", []string{"policy", "test"}, "PASS"},
		{"policy compile from a skill", "skills/issue-summary", []string{"policy", "compile"}, "compiled 1 agents for OpenShell"},
		{"policy compile --check from agents/", "agents", []string{"policy", "compile", "--check"}, "is up to date"},
		{"policy explain from policies/", "policies", []string{"policy", "explain", "summarizer"}, "tier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(filepath.Join(dir, filepath.FromSlash(tc.from)))
			stdout, stderr, err := runFullsend(t, tc.args...)
			if err != nil || !strings.Contains(stdout, tc.want) {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
		})
	}
	t.Run("outside any project", func(t *testing.T) {
		empty := filepath.Join(filepath.Dir(dir), "elsewhere")
		if err := os.Mkdir(empty, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Chdir(empty)
		for _, args := range [][]string{{"policy", "test"}, {"policy", "compile"}, {"policy", "explain", "summarizer"}} {
			_, _, err := runFullsend(t, args...)
			if !errors.Is(err, projectroot.ErrNotFound) || !strings.Contains(err.Error(), empty) {
				t.Errorf("%v: %v, want ErrNotFound naming %s", args, err, empty)
			}
		}
	})
}

// catalogProject is a project whose agent runs tee, which only the
// organisation catalog org-catalog/ registers: compiled with and without
// it, the bundle differs.
func catalogProject(t *testing.T) string {
	t.Helper()
	dir := initProject(t)
	files := map[string]string{
		"org-catalog/tee.cue": "package catalog\n\nbinaries: tee: {paths: [\"/usr/bin/tee\"], description: \"tee\"}\n",
		"agents/notes.md":     "---\nname: notes\ndescription: Writes notes.\ntools: Bash(tee:*)\n---\n\nWrite notes.\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The catalog a project was compiled with is recorded in its bundle: later
// commands use it without --catalog, and the compile they advise names it.
func TestCatalogIsRecorded(t *testing.T) {
	dir := catalogProject(t)
	t.Chdir(dir)
	if _, stderr, err := runFullsend(t, "policy", "compile", "--catalog", "org-catalog"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "policies", "manifest.json"))
	if err != nil || !strings.Contains(string(data), `"catalog": "org-catalog"`) {
		t.Fatalf("manifest does not record the catalog: %v\n%s", err, data)
	}
	for _, tc := range []struct {
		name string
		from string
		args []string
		want string // in stdout
	}{
		{"--check", ".", []string{"policy", "compile", "--check"}, "is up to date"},
		{"--check from agents/", "agents", []string{"policy", "compile", "--check"}, "is up to date"},
		{"explain", ".", []string{"policy", "explain", "notes"}, "Bash(tee:*)"},
		{"compile again", ".", []string{"policy", "compile"}, "compiled 2 agents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(filepath.Join(dir, tc.from))
			stdout, stderr, err := runFullsend(t, tc.args...)
			if err != nil || !strings.Contains(stdout, tc.want) {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
		})
	}
	// A stale bundle's advice names the recorded catalog.
	t.Chdir(dir)
	if err := os.WriteFile(filepath.Join(dir, "agents", "notes.md"), []byte("---\nname: notes\ndescription: Writes other notes.\ntools: Bash(tee:*)\n---\n\nWrite notes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, _ := runFullsend(t, "policy", "test")
	if !strings.Contains(stderr, "fullsend policy compile --catalog org-catalog .") {
		t.Errorf("stale hint does not name the catalog:\n%s", stderr)
	}
	out, err := execCLI(t, "policy", "compile", "--check")
	if err == nil || !strings.Contains(err.Error(), "run `fullsend policy compile --catalog org-catalog .`") {
		t.Errorf("--check: %v\n%s", err, out)
	}
	// --catalog "" compiles without it, and records none.
	if _, stderr, err := runFullsend(t, "policy", "compile", "--catalog", ""); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "policies", "manifest.json")); strings.Contains(string(data), `"catalog"`) {
		t.Errorf("--catalog \"\" kept the catalog:\n%s", data)
	}
}

// A manifest cannot make a command read a catalog outside the project.
func TestRecordedCatalogStaysInTheProject(t *testing.T) {
	dir := catalogProject(t)
	if _, stderr, err := runFullsend(t, "policy", "compile", "--catalog", filepath.Join(dir, "org-catalog"), dir); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	outside := t.TempDir()
	if err := os.Rename(filepath.Join(dir, "org-catalog"), filepath.Join(outside, "cat")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "cat"), filepath.Join(dir, "org-catalog")); err != nil {
		t.Skip(err)
	}
	_, _, err := runFullsend(t, "policy", "compile", "--check", dir)
	if err == nil || !strings.Contains(err.Error(), "leads out of the project") {
		t.Fatalf("got %v, want the link refused", err)
	}
	// Outside the project, --catalog is not recorded, and says so.
	_, stderr, err := runFullsend(t, "policy", "compile", "--catalog", filepath.Join(outside, "cat"), dir)
	if err != nil || !strings.Contains(stderr, "the bundle does not record it") {
		t.Fatalf("%v\n%s", err, stderr)
	}
}

// A policy-test file with several problems reports each at its own line,
// from policy compile and policy test alike, in one run.
func TestPolicyTestFileEveryProblem(t *testing.T) {
	dir := initProject(t)
	bad := "agent: summarizer\ntests:\n  - name: n\n    reqest: GET https://api.github.com/ from /usr/bin/gh\n    expect: alow\n"
	if err := os.WriteFile(filepath.Join(dir, "agents", "bad.policytest.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runFullsend(t, "policy", "compile", dir)
	for _, want := range []string{
		"agents/bad.policytest.yaml:4: error: tests[0]: unknown field \"reqest\": did you mean \"request\"?",
		"agents/bad.policytest.yaml:5: error: tests[0]: expect \"alow\", want allow, deny or audit",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("compile: %v\nlacks %s", err, want)
		}
	}
	_, _, err = runFullsend(t, "policy", "test", dir)
	for _, want := range []string{"agents/bad.policytest.yaml:4: tests[0]: unknown field", "agents/bad.policytest.yaml:5: tests[0]: expect \"alow\""} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("policy test: %v\nlacks %s", err, want)
		}
	}
}
