package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const lintFixtures = "../../lint/testdata"

func TestPolicyLintCLI(t *testing.T) {
	out, code := runCLI(t, "", "policy", "lint", filepath.Join(lintFixtures, "good/triage.yaml"))
	if code != 0 || !strings.Contains(out, "1 policies: 0 deny, 1 warn, 0 waived") {
		t.Fatalf("good policy: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, "", "policy", "lint", "--fail-on", "warn", filepath.Join(lintFixtures, "good/triage.yaml"))
	if code != 1 {
		t.Fatalf("--fail-on warn: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, "", "policy", "lint", "-o", "json", filepath.Join(lintFixtures, "bad/access-full.yaml"))
	if code != 1 || !strings.Contains(out, `"rule_id": "FS012"`) {
		t.Fatalf("bad policy: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, "", "policy", "lint", "--waive", "FS012=accepted for the test", "--waive", "FS002=ok",
		filepath.Join(lintFixtures, "bad/access-full.yaml"))
	if code != 0 || !strings.Contains(out, "waived: accepted for the test") {
		t.Fatalf("waived: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"policy", "lint", "-o", "xml", "x.yaml"},
		{"policy", "lint", "--fail-on", "info", "x.yaml"},
		{"policy", "lint", "--waive", "FS001", "x.yaml"},
		{"policy", "lint"},
		{"policy", "lint", "does-not-exist.yaml"},
	} {
		if _, code := runCLI(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", args, code)
		}
	}
	out, code = runCLI(t, "", "policy", "lint", "--list-rules", "-o", "json")
	var rules []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rules) != nil || len(rules) < 27 {
		t.Fatalf("--list-rules: exit %d\n%s", code, out)
	}
}

// TestPolicyLintAndTestCompiledProject compiles the triage example, then
// lints the policies directory (manifest, provenance) and runs the
// expectation files against it, as CI would.
func TestPolicyLintAndTestCompiledProject(t *testing.T) {
	pol := t.TempDir()
	if out, code := runCLI(t, "", "policy", "compile", "--set", "HOST_IP=172.17.0.1", "--out", pol, "../../testdata/triage"); code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, out)
	}
	out, code := runCLI(t, "", "policy", "lint", "-o", "sarif", pol)
	if code != 0 || !strings.Contains(out, `"version": "2.1.0"`) {
		t.Fatalf("lint: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, "", "policy", "test", "--policies", pol, "../../testdata/triage")
	if code != 0 || !strings.Contains(out, "0 failed") {
		t.Fatalf("test: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, "", "policy", "test", "--policies", pol, "--set", "ISSUE_NUMBER=6", "../../testdata/triage")
	if code != 1 || !strings.Contains(out, "FAIL agents/triage.policytest.yaml") {
		t.Fatalf("test with another issue number: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, "", "policy", "test", "--policy", filepath.Join(pol, "triage.yaml"),
		"--set", "OWNER=acme", "--set", "REPO_NAME=widgets", "--set", "ISSUE_NUMBER=5",
		"--set", "GCP_PROJECT=acme-ci", "--set", "GCP_REGION=global", "-o", "json",
		"--request", "POST http://host.docker.internal:8081/repos/acme/widgets/issues/5/comments from /usr/bin/curl at 172.17.0.1",
		"--request", "CONNECT 169.254.169.254:80 from /usr/bin/curl")
	var res []struct {
		Decision struct{ Allowed bool } `json:"decision"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res) != 2 || !res[0].Decision.Allowed || res[1].Decision.Allowed {
		t.Fatalf("ad hoc: exit %d\n%s", code, out)
	}
	if _, code := runCLI(t, "", "policy", "test", "--policy", filepath.Join(pol, "triage.yaml"), "--request", "GET https://x.com/ from /b"); code != 2 {
		t.Errorf("open placeholders: exit %d, want 2", code)
	}
}

func TestPolicyLintWriteContext(t *testing.T) {
	pol, ctx := t.TempDir(), t.TempDir()
	if out, code := runCLI(t, "", "policy", "compile", "--set", "HOST_IP=172.17.0.1", "--out", pol, "../../testdata/triage"); code != 0 {
		t.Fatalf("compile: exit %d\n%s", code, out)
	}
	out, code := runCLI(t, "", "policy", "lint", "--write-context", ctx, pol)
	if code != 0 || strings.Count(out, ".context.json") != 4 {
		t.Fatalf("write-context: exit %d\n%s", code, out)
	}
	raw, err := os.ReadFile(filepath.Join(ctx, "triage.context.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Fullsend struct {
			Context struct {
				Agent      string                     `json:"agent"`
				Tier       string                     `json:"tier"`
				Provenance map[string]json.RawMessage `json:"provenance"`
				Agents     map[string]json.RawMessage `json:"agents"`
			} `json:"context"`
		} `json:"fullsend"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Fullsend.Context
	if c.Agent != "triage" || c.Tier != "full" || len(c.Provenance) == 0 || len(c.Agents) != 4 {
		t.Fatalf("context %+v", c)
	}
}

// TestPolicyLintProjectDirHint: a project directory given where a policies
// directory is wanted is a usage error that names the bundle to lint.
func TestPolicyLintProjectDirHint(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "triage")
	out, code := runCLIErr(t, "policy", "lint", dir)
	if want := "fullsend policy lint " + filepath.Join(dir, "policies"); code != 2 || !strings.Contains(out, want) {
		t.Fatalf("exit %d, want 2 and %q in:\n%s", code, want, out)
	}
	empty := t.TempDir()
	if out, code := runCLIErr(t, "policy", "lint", empty); code != 2 || strings.Contains(out, "hint: it is a project") {
		t.Fatalf("empty directory: exit %d\n%s", code, out)
	}
}
