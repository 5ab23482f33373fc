package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/compile"
)

// execCLISplit runs the CLI with stdout and stderr apart.
func execCLISplit(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errb.String(), err
}

// brokenTriage is testdata/triage (the shape of fullsend-ai/agents' triage
// family) plus a file that is not YAML and an agent whose tier cap its own
// tools exceed: two problems in two files.
func brokenTriage(t *testing.T) string {
	t.Helper()
	dir := copyTree(t, filepath.Join("..", "..", "testdata", "triage"))
	files := map[string]string{
		"agents/broken.md": "---\nname: broken\ndescription: a: b\ntools: [Read]\n---\nbody\n",
		"agents/capped.md": "---\nname: capped\ndescription: d\ntools: Read, WebFetch(domain:docs.example.com)\nsandbox:\n  tier: read-only\n---\nbody\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCompileJSONOnFailure: -o json prints a result with every diagnostic
// when the compile fails, and the exit is still an error; both broken files
// are reported in the one run.
func TestCompileJSONOnFailure(t *testing.T) {
	dir := brokenTriage(t)
	stdout, _, err := execCLISplit(t, "policy", "compile", dir, "-o", "json")
	if err == nil || !errors.Is(err, compile.ErrCompile) {
		t.Fatalf("err = %v, want a compile failure", err)
	}
	var res struct {
		OK       bool                 `json:"ok"`
		Errors   agentdef.Diagnostics `json:"errors"`
		Warnings agentdef.Diagnostics `json:"warnings"`
	}
	if jerr := json.Unmarshal([]byte(stdout), &res); jerr != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", jerr, stdout)
	}
	if res.OK {
		t.Error("ok = true on failure")
	}
	files := map[string]bool{}
	for _, d := range res.Errors {
		files[d.Pos.File] = true
	}
	if !files["agents/broken.md"] || !files["agents/capped.md"] {
		t.Errorf("errors name %v, want agents/broken.md and agents/capped.md in one run", files)
	}
	if _, err := os.Stat(filepath.Join(dir, "policies", "broken.yaml")); err == nil {
		t.Error("a failed compile wrote a policy")
	}
}

// TestCompileJSONOptionError: a failure that is not diagnostics (an unknown
// --agent) still prints a JSON result.
func TestCompileJSONOptionError(t *testing.T) {
	dir := copyTree(t, filepath.Join("..", "..", "testdata", "triage"))
	stdout, _, err := execCLISplit(t, "policy", "compile", dir, "-o", "json", "--agent", "triag")
	if err == nil || !strings.Contains(err.Error(), "--agent") || !strings.Contains(err.Error(), `did you mean "triage"`) {
		t.Fatalf("err = %v, want an --agent error with did-you-mean", err)
	}
	var res struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if jerr := json.Unmarshal([]byte(stdout), &res); jerr != nil || res.OK || res.Error == "" {
		t.Fatalf("stdout %q (%v): want ok false and the error", stdout, jerr)
	}
}

// TestCompileAgentSelection: --agent triage compiles triage and the
// subagents it spawns although other files are broken, and writes nothing.
func TestCompileAgentSelection(t *testing.T) {
	dir := brokenTriage(t)
	stdout, stderr, err := execCLISplit(t, "policy", "compile", dir, "-o", "json", "--agent", "triage")
	if err != nil {
		t.Fatalf("%v\n%s%s", err, stdout, stderr)
	}
	var res struct {
		OK     bool                      `json:"ok"`
		Agents map[string]map[string]any `json:"agents"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	var got []string
	for n := range res.Agents {
		got = append(got, n)
	}
	if !res.OK || len(res.Agents) != 4 || res.Agents["triage"] == nil || res.Agents["duplicate-detector"] == nil || res.Agents["capped"] != nil {
		t.Errorf("agents %v, want triage and its three subagents only", got)
	}
	// The selection writes nothing: the bundle is always the whole project.
	if _, err := os.Stat(filepath.Join(dir, "policies", "capped.yaml")); err == nil {
		t.Error("--agent wrote the bundle")
	}
	// The broken agent itself, selected, fails at its own line.
	_, _, err = execCLISplit(t, "policy", "compile", dir, "--agent", "capped")
	if err == nil || !strings.Contains(err.Error(), "agents/capped.md") || strings.Contains(err.Error(), "broken.md") {
		t.Errorf("--agent capped: %v, want only capped.md's error", err)
	}
}

// TestExplainStartsWithTier: policy explain's first line is the tier and
// the line that decided it, even when another file of the project is
// broken.
func TestExplainStartsWithTier(t *testing.T) {
	dir := brokenTriage(t)
	stdout, _, err := execCLISplit(t, "policy", "explain", "duplicate-detector", dir)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(stdout, "\n")
	if !strings.HasPrefix(first, "tier ") || !strings.Contains(first, "decided by agents/duplicate-detector.md:") {
		t.Errorf("first line %q: want the tier and the deciding line", first)
	}
}
