package lint

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/report"
)

func TestUserRulesAndNoBuiltin(t *testing.T) {
	e, err := New(context.Background(), Options{RuleDirs: []fs.FS{os.DirFS("testdata/userrules")}, NoBuiltin: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Rules(); len(got) != 2 || got[0].ID != "ORG001" || got[1].ID != "main.deny" {
		t.Fatalf("rules %+v", got)
	}
	in, _ := corpusInput(t, "testdata/good/triage.yaml")
	in.Policy.Version = 2
	rep, err := e.Lint(context.Background(), []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(rep.Findings); !slices.Equal(got, []string{"ORG001", "main.deny"}) {
		t.Fatalf("findings %v", got)
	}
	for _, f := range rep.Findings {
		if f.RuleID == "main.deny" && (f.Severity != report.SeverityDeny || f.Message != "policy version must be 1") {
			t.Errorf("string message finding %+v", f)
		}
		if f.RuleID == "ORG001" && (f.Severity != report.SeverityWarn || f.Title != "Network policy without an owning team") {
			t.Errorf("object message finding %+v", f)
		}
	}
}

func TestDataFileWaiversAndContext(t *testing.T) {
	e, err := New(context.Background(), Options{DataPaths: []string{"testdata/data/waivers.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := corpusInput(t, "testdata/bad/access-full.yaml")
	rep, err := e.Lint(context.Background(), []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	var sawWaived, sawTier bool
	for _, f := range rep.Findings {
		if f.RuleID == "FS002" {
			sawWaived = f.Waived == "Vertex AI serves from regional hosts"
		}
		// The data file's context (tier read-only) applies to inputs without one.
		sawTier = sawTier || f.RuleID == "FS014"
	}
	if !sawWaived || !sawTier {
		t.Fatalf("waived=%v tier-from-data=%v in %+v", sawWaived, sawTier, rep.Findings)
	}
	// An input's own context wins over the data file's.
	in.Context = Context{Agent: "x", Tier: "full"}
	rep, _ = e.Lint(context.Background(), []Input{in})
	if slices.Contains(ids(rep.Findings), "FS014") {
		t.Error("data-file context overrode the input's context")
	}
}

func TestWaivers(t *testing.T) {
	f := report.Finding{RuleID: "FS003", Rule: "fullsend.rules.network.warn_l4_only", Agent: "triage", PolicyPath: "network_policies.git.endpoints[0]"}
	for spec, want := range map[string]bool{
		"FS003=ok":                                   true,
		"fullsend.rules.network.warn_l4_only=ok":     true,
		"FS003@triage=ok":                            true,
		"FS003@other=ok":                             false,
		"FS003:network_policies.git=ok":              true,
		"FS003:network_policies.gi=ok":               false,
		"FS003:network_policies.git.endpoints[0]=ok": true,
		"FS003:network_policies.git.endpoints[1]=ok": false,
		"FS004=ok": false,
	} {
		w, err := ParseWaiver(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.matches(&f); got != want {
			t.Errorf("%s matches=%v, want %v", spec, got, want)
		}
	}
	for _, bad := range []string{"FS003", "FS003=", "=reason", "FS 003=x"} {
		if _, err := ParseWaiver(bad); !errors.Is(err, ErrBadWaiver) {
			t.Errorf("ParseWaiver(%q) err=%v, want ErrBadWaiver", bad, err)
		}
	}
}

func TestExceptionInProcess(t *testing.T) {
	e, err := New(context.Background(), Options{RuleDirs: []fs.FS{os.DirFS("testdata/exceptions")}})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := corpusInput(t, "testdata/good/triage.yaml")
	rep, err := e.Lint(context.Background(), []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Waived != "exception in fullsend.rules.network" || rep.Failed(report.SeverityWarn) {
		t.Fatalf("findings %+v", rep.Findings)
	}
}

func TestNewErrors(t *testing.T) {
	for name, c := range map[string]struct {
		opts Options
		want string
	}{
		"syntax":     {Options{RuleDirs: []fs.FS{fstest.MapFS{"x.rego": {Data: []byte("package p\ndeny contains x if {")}}}}, "parsing lint rule x.rego"},
		"compile":    {Options{RuleDirs: []fs.FS{fstest.MapFS{"x.rego": {Data: []byte("package p\ndeny contains x if { x := y }")}}}}, "compiling lint rules"},
		"no rules":   {Options{NoBuiltin: true}, "no lint rules"},
		"data":       {Options{DataPaths: []string{"testdata/nope.json"}}, "loading lint data"},
		"bad waiver": {Options{DataPaths: []string{"testdata/bad-waivers"}}, "needs an id and a reason"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(context.Background(), c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New err=%v, want %q", err, c.want)
			}
		})
	}
}

func TestProjectInputs(t *testing.T) {
	pol, err := os.ReadFile("testdata/good/triage.yaml")
	if err != nil {
		t.Fatal(err)
	}
	writer, _ := os.ReadFile("testdata/bad/access-full.yaml")
	fsys := fstest.MapFS{
		"lead.yaml":   {Data: pol},
		"reader.yaml": {Data: pol},
		"writer.yaml": {Data: writer},
		"provenance.json": {Data: []byte(`{"schema": "` + bundle.ProvenanceSchema + `", "agents": {"reader": {
			"network_policies.forge": [{"file": "agents/reader.md", "line": 9, "reason": "sandbox: endpoint"}]}}}`)},
	}
	inputs, err := ProjectInputs(fsys, "policies", &bundle.Bundle{Manifest: &bundle.Manifest{Agents: map[string]bundle.ManifestAgent{
		"writer": {Policy: "writer.yaml", Tier: "full"},
		"reader": {Policy: "reader.yaml", Tier: "read-only", Spawns: []string{"writer"}, Placeholders: []string{"OWNER", "REPO_NAME", "ISSUE_NUMBER", "HOST_IP"}},
		"lead":   {Policy: "lead.yaml", Tier: "full", Spawns: []string{"reader"}},
	}}, Policies: map[string][]byte{"writer": writer, "reader": pol, "lead": pol}})
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != 3 || inputs[1].Name != "reader" || inputs[1].File != "policies/reader.yaml" || !inputs[1].Context.Agents["writer"].Writes {
		t.Fatalf("inputs %+v", inputs)
	}
	rep, err := testEngine(t).Lint(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	byAgent := map[string][]string{}
	for _, f := range rep.Findings {
		byAgent[f.Agent] = append(byAgent[f.Agent], f.RuleID)
		if f.Agent == "reader" && f.RuleID == "FS014" && strings.HasPrefix(f.PolicyPath, "network_policies.forge") && (f.Source == nil || f.Source.File != "agents/reader.md" || f.Source.Line != 9) {
			t.Errorf("FS014 source %+v, want agents/reader.md:9 from provenance.json", f.Source)
		}
	}
	if !slices.Contains(byAgent["reader"], "FS027") || !slices.Contains(byAgent["reader"], "FS024") {
		t.Errorf("reader findings %v, want privilege lifting and missing provenance", byAgent["reader"])
	}
	// lead declares no placeholders: the policy's {{OWNER}} is undeclared.
	if !slices.Contains(byAgent["lead"], "FS023") {
		t.Errorf("lead findings %v, want FS023", byAgent["lead"])
	}
	if _, err := ProjectInputs(fsys, "p", &bundle.Bundle{Manifest: &bundle.Manifest{Agents: map[string]bundle.ManifestAgent{"x": {Policy: "../x.yaml"}}}}); err == nil {
		t.Error("policy outside the directory accepted")
	}
}

// TestWaiversFromDataErrors: a bad entry of data.fullsend.waivers is named
// by index and field, the first bad field by name, the same on every run.
func TestWaiversFromDataErrors(t *testing.T) {
	tests := []struct {
		name    string
		waivers any
		want    string
	}{
		{"not a list", "FS003", "data.fullsend.waivers must be a list"},
		{"not a string", []any{map[string]any{"id": 3, "reason": "r"}}, "data.fullsend.waivers[0].id must be a string"},
		{"unknown field", []any{map[string]any{"id": "FS003", "reason": "r", "rule": "x"}}, `data.fullsend.waivers[0]: unknown field "rule"`},
		{"two bad fields", []any{map[string]any{"zone": "x", "agent": 1, "id": "FS003", "reason": "r"}}, "data.fullsend.waivers[0].agent must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 20 { // map order differs between runs: the error must not
				_, err := waiversFromData(map[string]any{"fullsend": map[string]any{"waivers": tt.waivers}})
				if !errors.Is(err, ErrBadWaiver) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want ErrBadWaiver naming %q", err, tt.want)
				}
			}
		})
	}
}
