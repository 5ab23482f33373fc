package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/suggest"
)

func TestPolicySuggestExitCodes(t *testing.T) {
	t.Chdir("../..")
	base := []string{"policy", "suggest", "duplicate-detector", "--dir", "testdata/triage"}
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"refusals only", []string{"--logs", "suggest/testdata/logs/refusals.log"}, 0},
		{"--fail-on refused", []string{"--logs", "suggest/testdata/logs/refusals.log", "--fail-on", "refused"}, 1},
		{"--fail-on suggestion", []string{"--logs", "suggest/testdata/logs/l4.log", "--fail-on", "suggestion"}, 1},
		{"--strict without events", []string{"--logs", "suggest/testdata/logs/audit.jsonl", "--logs", "README.md", "--strict"}, 0},
		{"--strict on a wrong file", []string{"--logs", "README.md", "--strict"}, 1},
		{"no --logs", nil, 2},
		{"bad output", []string{"--logs", "suggest/testdata/logs/l4.log", "-o", "yaml"}, 2},
		{"bad --fail-on", []string{"--logs", "suggest/testdata/logs/l4.log", "--fail-on", "x"}, 2},
		{"bad --set", []string{"--logs", "suggest/testdata/logs/l4.log", "--set", "OWNER=a/b"}, 2},
		{"missing log", []string{"--logs", "nope.log"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := runCLI(t, "", append(base, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, out)
			}
		})
	}
}

// --write applies the patch outside CI and refuses in CI before reading
// anything.
func TestPolicySuggestWrite(t *testing.T) {
	root, _ := filepath.Abs("../..")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "testdata/triage"))); err != nil {
		t.Fatal(err)
	}
	args := []string{"policy", "suggest", "duplicate-detector", dir, "--logs", filepath.Join(root, "suggest/testdata/logs/l4.log"), "--write", "-o", "json"}
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITLAB_CI", "")
	t.Setenv("CI", "true")
	out, code := runCLI(t, "", args...)
	orig, _ := os.ReadFile(filepath.Join(root, "testdata/triage/agents/duplicate-detector.md"))
	if code != 1 {
		t.Fatalf("in CI: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "agents/duplicate-detector.md")); string(b) != string(orig) || strings.Contains(out, "suggestions") {
		t.Fatal("in CI: the file changed or an analysis was printed")
	}
	t.Setenv("CI", "")
	out, code = runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var res struct {
		Suggestions []struct{ Value string } `json:"suggestions"`
	}
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &res); err != nil || len(res.Suggestions) != 1 {
		t.Fatalf("%v %+v\n%s", err, res, out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "agents/duplicate-detector.md"))
	if !strings.Contains(string(b), "- host: api.github.com  # provisional") {
		t.Errorf("the file was not patched:\n%s", b)
	}
}

// A complete analysis in which some denials need a human exits 3, not 1:
// --fail-on (1) wins when both hold.
func TestPolicySuggestNeedsHumanExit(t *testing.T) {
	unverified := &suggest.Result{Manual: []suggest.Finding{{Denial: "D1", Why: "failed its check", Unverified: true}}}
	manual := &suggest.Result{Manual: []suggest.Finding{{Denial: "D1", Why: "tunnel-protocol"}}}
	for _, tc := range []struct {
		name   string
		res    *suggest.Result
		failOn string
		code   int
	}{
		{"unverified", unverified, "none", 3},
		{"manual by kind", manual, "none", 0},
		{"unverified and --fail-on met", &suggest.Result{Manual: unverified.Manual, Refused: []suggest.Finding{{Denial: "D2"}}}, "refused", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := suggestFailOn(tc.failOn, tc.res)
			if err == nil {
				err = suggestNeedsHuman(tc.res)
			}
			if code := map[bool]int{true: 0, false: exitCode(err)}[err == nil]; code != tc.code {
				t.Errorf("exit %d (%v), want %d", code, err, tc.code)
			}
		})
	}
}

// --only with an id the analysis does not have is a usage error.
func TestPolicySuggestOnlyUnknown(t *testing.T) {
	t.Chdir("../..")
	out, code := runCLI(t, "", "policy", "suggest", "duplicate-detector", "testdata/triage", "--logs", "suggest/testdata/logs/l4.log", "--only", "S4")
	if code != 2 {
		t.Errorf("exit %d\n%s", code, out)
	}
}
