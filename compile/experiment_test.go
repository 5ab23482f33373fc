package compile

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
)

// TestExperiment0005 compiles experiment-0005 (experimentDir: the shape of
// fullsend-ai/experiments 0005-agent-scoped-tools-triage, TLD wildcards
// removed) for Vertex; CompileDir runs its *.policytest.yaml, which hold
// every request the hand-written policies allowed: forge server routes,
// agent runner, regional Vertex.
func TestExperiment0005(t *testing.T) {
	for _, version := range []string{"v0.0.83", "v0.0.111"} {
		t.Run(version, func(t *testing.T) {
			out, err := CompileDir(context.Background(), experimentDir(t), ProjectOptions{Provider: "vertex", OpenShellVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(out.AgentNames(), ","); got != "completeness-assessor,duplicate-detector,reproducibility-verifier,triage" {
				t.Errorf("agents = %s", got)
			}
			if out.Agents["triage"].Tier != "full" || out.Agents["duplicate-detector"].Tier != "network" {
				t.Errorf("tiers: triage %s, duplicate-detector %s", out.Agents["triage"].Tier, out.Agents["duplicate-detector"].Tier)
			}
		})
	}
}

// TestExperiment0005AsPublished: the published readonly-with-web.yaml
// grants *.io, *.com, *.org and *.dev, which OpenShell refuses at load
// (TLD wildcards, from v0.0.27); each is an error at its line in the
// fragment.
func TestExperiment0005AsPublished(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(experimentDir(t))); err != nil {
		t.Fatal(err)
	}
	published := fixture.ReadFile(t, "from-project/compile/testdata/experiment-0005-published/readonly-with-web.yaml")
	if err := os.WriteFile(filepath.Join(dir, "policies", "readonly-with-web.yaml"), published, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := CompileDir(context.Background(), dir, ProjectOptions{Provider: "vertex"})
	if err == nil {
		t.Fatal("compiled")
	}
	lines := strings.Split(string(published), "\n")
	for _, tld := range []string{"*.io", "*.com", "*.org", "*.dev"} {
		line := 0
		for i, l := range lines {
			if strings.Contains(l, `"`+tld+`"`) {
				line = i + 1
			}
		}
		want := "policies/readonly-with-web.yaml:" + strconv.Itoa(line) + ":"
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tld) {
			t.Errorf("no error for %s at %s in:\n%v", tld, want, err)
		}
	}
	if strings.Contains(err.Error(), "policies/completeness-assessor.yaml:") {
		t.Errorf("errors positioned in the compiled output, not the fragment:\n%v", err)
	}
}

// experimentDir is fullsend-ai's experiment 0005 as the project carried it,
// read in ../shared/fixtures (its README says what was changed).
func experimentDir(t testing.TB) string {
	t.Helper()
	return fixture.Path(t, "from-project/testdata/experiment-0005")
}
