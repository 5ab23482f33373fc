package main

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
)

// TestBundleProvidersComposed: `policy test` and `policy lint` on a
// compiled bundle whose agents name provider profiles judge the composed
// policies, as the compile did: the policy tests that hold only with the
// layers pass, and lint findings on a layer point at the profile's lines.
func TestBundleProvidersComposed(t *testing.T) {
	// Our project with fullsend-ai/agents' profiles, which the repository
	// does not carry, laid over from ../shared/fixtures.
	project := fixture.Overlay(t, "../../testdata/fullsend-providers", "from-project/testdata/fullsend-providers", "profiles", "policies/profiles")
	t.Setenv("CI", "") // a stale check warns instead of failing
	out, code := runCLIErr(t, "policy", "test", project)
	if code != 0 || !strings.Contains(out, "(via _provider_github_ro)") || !strings.Contains(out, "13 passed, 0 failed") {
		t.Errorf("policy test: exit %d:\n%s", code, out)
	}
	out, code = runCLIErr(t, "policy", "lint", project+"/policies")
	if code != 0 || !strings.Contains(out, "network_policies._provider_github_ro.binaries[1]") || !strings.Contains(out, "from profiles/fullsend-github-ro.yaml:27:5") {
		t.Errorf("policy lint: exit %d:\n%s", code, out)
	}
}

// TestCompileEmitFlag: --emit takes policies or profiles.
func TestCompileEmitFlag(t *testing.T) {
	out, code := runCLIErr(t, "policy", "compile", "--emit", "layers", "../../testdata/fullsend-providers")
	if code != 2 || !strings.Contains(out, `--emit "layers": want policies or profiles`) {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
