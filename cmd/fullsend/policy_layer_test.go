package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exfilTest expects gh to be kept from another repository's pull requests;
// providers (a test-file providers: line, or "") composes a layer that
// allows it.
func exfilTest(providers string) string {
	return "agent: triage\n" + providers +
		"set: {GCP_PROJECT: acme-ci, GCP_REGION: global, OWNER: acme, REPO_NAME: widgets, ISSUE_NUMBER: \"5\", HOST_IP: 172.17.0.1}\n" +
		"tests:\n  - name: other repositories stay closed\n" +
		"    request: GET https://api.github.com/repos/evil/exfil/pulls from /usr/bin/gh\n    expect: deny\n"
}

// TestPolicyTestCitesLayer: a failing expectation a provider layer decided
// names the layer, its provider and profile and where in the profile the
// grant is (profile.Layer.Cite), in text and JSON, for a built-in layer a
// test file composes; --request cites the same way
// (testdata/policy-test/layer.golden).
func TestPolicyTestCitesLayer(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, "../../testdata/triage/policies", filepath.Join(dir, "policies"))
	if err := os.WriteFile(filepath.Join(dir, "exfil.policytest.yaml"), []byte(exfilTest("providers: [github]\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	out, code := runCLI(t, "", "policy", "test", dir)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	got.WriteString("$ fullsend policy test DIR\n" + out)
	out, _ = runCLI(t, "", "policy", "test", "-o", "json", dir)
	if !strings.Contains(out, `"layer": "provider layer _provider_github (provider github, profile github from openshell:v0.0.111/providers/github.yaml endpoints[0]`) {
		t.Errorf("json names no layer:\n%s", out)
	}
	req := "GET https://api.github.com/repos/evil/exfil/pulls from /usr/bin/gh"
	out, _ = runCLI(t, "", "policy", "test", "--policy", filepath.Join(dir, "policies/triage.yaml"), "--set", "OWNER=acme", "--set", "REPO_NAME=widgets",
		"--set", "ISSUE_NUMBER=5", "--set", "GCP_PROJECT=acme-ci", "--set", "GCP_REGION=global", "--set", "HOST_IP=172.17.0.1",
		"--provider-profile", "github", "--request", req)
	got.WriteString("$ fullsend policy test --policy triage.yaml --provider-profile github --request ...\n" + out)
	checkCLIGolden(t, filepath.Join("testdata", "policy-test", "layer.golden"), strings.ReplaceAll(got.String(), dir, "DIR"))
}

// checkCLIGolden compares got with a golden file (go test -update rewrites it).
func checkCLIGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *updateValidateGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update):\n%s", golden, got)
	}
}

// TestExplainWithFailingExpectations: when only an agent's expectations
// fail, policy compile still fails, and policy explain explains the
// compiled policy and lists each failing expectation with its line and
// reason, citing the provider layer that granted it.
func TestExplainWithFailingExpectations(t *testing.T) {
	dir := t.TempDir()
	agent := "---\nname: triage\ndescription: d\ntools: Read, Bash(gh pr list:*)\nmodel: claude-opus-4-1@20250805\nsandbox:\n  providers: [github]\n---\n\nbody\n"
	for name, data := range map[string]string{"agents/triage.md": agent, "agents/triage.policytest.yaml": exfilTest("")} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, code := runCLIErr(t, "policy", "compile", dir); code == 0 || !strings.Contains(out, "in provider layer _provider_github") {
		t.Errorf("compile: exit %d, want a failure citing the layer:\n%s", code, out)
	}
	out, code := runCLIErr(t, "policy", "explain", "triage", dir)
	for _, want := range []string{
		"failing expectations (policy compile fails until they hold)\n  agents/triage.policytest.yaml:4: error: tests: expectation \"other repositories stay closed\" does not hold",
		"in provider layer _provider_github (provider github, profile github from openshell:v0.0.111/providers/github.yaml endpoints[0].access",
		"\nnetwork\n",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("explain: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
}
