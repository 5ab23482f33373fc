package lint

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/report"
)

var update = flag.Bool("update", false, "rewrite ../report/testdata/lint-report.json")

// reportFixture is where lint's output for two corpus policies is kept as
// the input of report's format tests, so those tests render a real report
// without linking the rule engine.
var reportFixture = filepath.Join("..", "report", "testdata", "lint-report.json")

// formatReport lints two corpus policies: one with provenance (findings point
// at agent source lines) and a waiver, one plain file with raw bytes (findings
// point at policy lines).
func formatReport(t *testing.T) *report.Report {
	t.Helper()
	e, err := New(context.Background(), Options{Waivers: []Waiver{
		{ID: "FS002", Agent: "triage", Path: "network_policies.model", Reason: "Vertex AI serves from regional hosts"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	withProv, _ := corpusInput(t, "testdata/bad/access-full.yaml")
	withProv.Name, withProv.File = "triage", "policies/triage.yaml"
	withProv.Context = Context{Agent: "triage", Tier: "network", Provenance: map[string][]bundle.Source{
		"network_policies.model":              {{File: "agents/triage.md", Line: 4, Reason: "runtime baseline claude/vertex"}},
		"network_policies.model.endpoints[0]": {{File: "agents/triage.md", Line: 12, Column: 5, Reason: "sandbox: endpoint"}},
		"network_policies.forge":              {{File: "skills/forge/SKILL.md", Line: 3, Reason: "tool Bash(gh issue view:*)"}},
	}}
	raw, err := os.ReadFile("testdata/bad/tls-skip.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := corpusInput(t, "testdata/bad/tls-skip.yaml")
	plain.File, plain.Raw = "policies/tls-skip.yaml", raw
	rep, err := e.Lint(context.Background(), []Input{withProv, plain})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestReportFixtureIsCurrent keeps report's test input equal to what lint
// reports today (findings, waiver, provenance and the rule metadata SARIF
// lists); `go test ./lint -run TestReportFixtureIsCurrent -update`
// rewrites it after a rule change, then `go test ./report -update` the
// rendered goldens.
func TestReportFixtureIsCurrent(t *testing.T) {
	rep := formatReport(t)
	got, err := json.MarshalIndent(struct {
		*report.Report
		Rules []report.Rule `json:"rules"`
	}{rep, rep.Rules}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(reportFixture, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(reportFixture)
	if err != nil {
		t.Fatalf("%v (run go test ./lint -run TestReportFixtureIsCurrent -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what lint reports today; run go test ./lint -run TestReportFixtureIsCurrent -update, then go test ./report -update", reportFixture)
	}
}
