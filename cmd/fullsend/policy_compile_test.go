package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
)

func execCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// copyTree copies a directory of the repository into a temporary one.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestPolicyCompileCLI(t *testing.T) {
	dir := copyTree(t, filepath.Join("..", "..", "testdata", "production"))
	out, err := execCLI(t, "policy", "compile", dir, "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var summary struct {
		Agents map[string]struct {
			Tier   string `json:"tier"`
			Policy string `json:"policy"`
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(out), &summary); err != nil {
		t.Fatalf("json output: %v\n%s", err, out)
	}
	if summary.Agents["triage"].Policy != "triage.yaml" {
		t.Fatalf("summary = %+v", summary)
	}
	if out, err := execCLI(t, "policy", "compile", "--check", dir); err != nil {
		t.Fatalf("fresh output reported stale: %v\n%s", err, out)
	}
	// Change the agent: --check must fail and show the diff, and write nothing.
	agent := filepath.Join(dir, "agents", "triage.md")
	data, _ := os.ReadFile(agent)
	if err := os.WriteFile(agent, []byte(strings.Replace(string(data), "Bash(gh,curl,jq)", "Bash(gh,jq)", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "policies", "manifest.json"))
	out, err = execCLI(t, "policy", "compile", "--check", dir)
	if err == nil || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("--check on stale output: err = %v\n%s", err, out)
	}
	if !strings.Contains(out, "manifest.json: modified") {
		t.Errorf("--check output lacks the diff:\n%s", out)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "policies", "manifest.json"))
	if !bytes.Equal(before, after) {
		t.Error("--check wrote output")
	}
}

func TestPolicyCompileCLIErrors(t *testing.T) {
	dir := copyTree(t, filepath.Join("..", "..", "testdata", "production"))
	out := filepath.Join(t.TempDir(), "out")
	tests := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"bad set", []string{"policy", "compile", "--out", out, "--set", "OWNER=*", dir}, "invalid placeholder value", 1},
		// The library names no flag; the CLI names its own (moved from
		// compile TestCompileDirOptionErrors).
		{"bad set names the flag", []string{"policy", "compile", "--out", out, "--set", "OWNER=*", dir}, "--set OWNER: invalid placeholder value for {{OWNER}}", 1},
		{"not an assignment", []string{"policy", "compile", "--out", out, "--set", "OWNER", dir}, `--set "OWNER": want KEY=VALUE, for example --set ISSUE_NUMBER=42`, 1},
		{"bad version", []string{"policy", "compile", "--out", out, "--openshell-version", "latest", dir}, `--openshell-version: unsupported OpenShell version "latest"`, 1},
		{"unsupported version", []string{"policy", "compile", "--out", out, "--openshell-version", "v0.0.1", dir}, "--openshell-version: unsupported OpenShell version v0.0.1", 1},
		{"missing catalog", []string{"policy", "compile", "--out", out, "--catalog", filepath.Join(dir, "nope"), dir}, "--catalog: ", 1},
		{"explain missing catalog", []string{"policy", "explain", "triage", dir, "--catalog", filepath.Join(dir, "nope")}, "--catalog: ", 1},
		{"explain bad set", []string{"policy", "explain", "triage", dir, "--set", "ISSUE_NUMBER=0"}, "--set ISSUE_NUMBER: invalid placeholder value", 1},
		{"policy test bad set", []string{"policy", "test", "--set", "=x", dir}, `--set "=x": want KEY=VALUE, for example --set ISSUE_NUMBER=42`, 2},
		{"bad output", []string{"policy", "compile", "--out", out, "-o", "yaml", dir}, "unknown output format", 2},
		{"missing dir", []string{"policy", "compile", "--out", out, filepath.Join(dir, "nope")}, "nope", 1},
		{"explain unknown agent", []string{"policy", "explain", "nobody", dir}, "no such agent", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := execCLI(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if got := exitCode(err); got != tt.code {
				t.Errorf("exit code %d, want %d", got, tt.code)
			}
			if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
				t.Error("a failed compile wrote output")
			}
		})
	}
}

func TestPolicyExplainCLI(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "triage")
	out, err := execCLI(t, "policy", "explain", "triage", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"allow POST /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/comments",
		"<- agents/triage.md:",
		"may spawn: completeness-assessor, duplicate-detector, reproducibility-verifier",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
}

// TestImageBuildCompilesStalePolicies: image build compiles a project whose
// policies/ is missing, and with --compile=false refuses to build it.
func TestImageBuildCompilesStalePolicies(t *testing.T) {
	dir := copyTree(t, filepath.Join("..", "..", "testdata", "production"))
	if err := os.RemoveAll(filepath.Join(dir, "policies")); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "fullsend")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"image", "build", "--base", "scratch", "--platform", "linux/amd64", "--binary", "linux/amd64=" + bin,
		dir, "--version", "v0.0.0", "--revision", "0123456789abcdef0123456789abcdef01234567", "--no-cache",
		"--oci-layout", filepath.Join(t.TempDir(), "layout")}
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	t.Setenv("GITHUB_ACTIONS", "") // outside CI: in CI a stale bundle is refused (TestStaleRuleEveryCommand)
	t.Setenv("GITLAB_CI", "")
	if out, err := execCLI(t, append(args, "--compile=false")...); err == nil {
		t.Fatalf("--compile=false built a project without policies:\n%s", out)
	}
	if out, err := execCLI(t, args...); err != nil {
		t.Fatalf("image build: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "policies", "manifest.json")); err != nil {
		t.Fatalf("policies were not compiled: %v", err)
	}
	if out, err := execCLI(t, "policy", "compile", "--check", dir); err != nil {
		t.Fatalf("compiled policies are not current: %v\n%s", err, out)
	}
}

// TestPolicyCompileStrict: a project with warnings (an extra metadata key)
// compiles, and fails under --strict with the warning as an error.
func TestPolicyCompileStrict(t *testing.T) {
	dir := copyTree(t, fixture.Path(t, "from-project/agentdef/testdata/realworld/wshobson-teensy-expert"))
	out, err := execCLI(t, "policy", "compile", dir)
	if err != nil || !strings.Contains(out, `unknown field "triggers" is ignored`) {
		t.Fatalf("without --strict: %v\n%s", err, out)
	}
	out, err = execCLI(t, "policy", "compile", "--strict", "--out", t.TempDir(), dir)
	if err == nil || !strings.Contains(err.Error(), `triggers: unknown field "triggers" is ignored (strict: warnings are errors)`) {
		t.Fatalf("with --strict: want an error on triggers, got %v\n%s", err, out)
	}
}

// TestPolicyCompileTimings: --timings prints every stage of the compile and
// the write to stderr, and leaves the -o json document on stdout alone.
func TestPolicyCompileTimings(t *testing.T) {
	dir := copyTree(t, filepath.Join("..", "..", "testdata", "triage"))
	root := newRootCmd()
	var stdout, stderr bytes.Buffer
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs([]string{"policy", "compile", "--timings", "-o", "json", dir})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !json.Valid(stdout.Bytes()) {
		t.Errorf("stdout is not one JSON document:\n%s", stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	stages := map[string]bool{}
	for _, l := range lines[1:] {
		stages[strings.Fields(l)[0]] = true
	}
	for _, want := range []string{"catalog", "lint-rules", "lint", "load", "compile", "emit", "validate", "expectations", "write"} {
		if !stages[want] {
			t.Errorf("stage %s missing from --timings:\n%s", want, stderr.String())
		}
	}
	if !strings.HasPrefix(lines[0], "stage") || !strings.HasPrefix(lines[len(lines)-1], "write") {
		t.Errorf("want a header first and write last:\n%s", stderr.String())
	}
}

// TestPolicyCompileCIOutputIsInert: names from the project reach a CI log
// only escaped. A directory under agents/ named with a line break and a
// workflow command, and a stale generated policy file named so in the output
// directory, start no GitHub workflow command in what compile, --check and
// the final error print.
func TestPolicyCompileCIOutputIsInert(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITLAB_CI", "")
	const evil = "x\n::error title=pwned::injected\r::warning::cr\u2028::notice::ls"
	dir := copyTree(t, filepath.Join("..", "..", "testdata", "triage"))
	if _, err := execCLI(t, "policy", "compile", dir); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "policies", evil+".yaml")
	if err := os.WriteFile(stale, []byte("# Generated by fullsend policy compile\nversion: 1\n"), 0o644); err != nil {
		t.Skipf("this filesystem refuses the name: %v", err)
	}
	var log bytes.Buffer
	out, err := execCLI(t, "policy", "compile", dir, "--check")
	log.WriteString(out)
	if err == nil {
		t.Fatal("--check passed with a stale file")
	}
	printError(&log, err)
	if err := os.MkdirAll(filepath.Join(dir, "agents", evil), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents", evil, "a.md"), []byte("---\nname: a\ndescription: d\ntools: Read\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = execCLI(t, "policy", "compile", dir)
	log.WriteString(out)
	if err == nil {
		t.Fatal("compile accepted an unprintable directory name")
	}
	printError(&log, err)
	if !strings.Contains(log.String(), "not printable text") {
		t.Errorf("the refusal is not in the log:\n%s", log.String())
	}
	for _, line := range strings.FieldsFunc(log.String(), func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.HasPrefix(strings.TrimSpace(line), "::") {
			t.Errorf("a log line reads as a workflow command: %q", line)
		}
		if strings.ContainsAny(line, "\u2028\u2029\u0085") {
			t.Errorf("a log line holds a raw line separator: %q", line)
		}
	}
}
