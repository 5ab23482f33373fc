package lint_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/compile/lintcheck"
	"github.com/fullsend-ai/agent-sandbox/lint"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/report"
)

// TestExampleSystems compiles the example agent systems under testdata/ with
// the real compiler, runs their *.policytest.yaml expectations against the
// compiled policies, and lints the compiled policies directory the way
// `fullsend policy lint DIR` does.
func TestExampleSystems(t *testing.T) {
	for _, c := range []struct {
		dir string
		set []string
	}{
		{"../testdata/triage", []string{"HOST_IP=172.17.0.1"}},
		{"../testdata/production", nil},
	} {
		t.Run(c.dir, func(t *testing.T) {
			out, err := compile.CompileDir(context.Background(), c.dir, compile.ProjectOptions{Set: c.set, Lint: lintcheck.Start(lint.Options{})})
			if err != nil {
				t.Fatalf("compiling %s: %v", c.dir, err)
			}
			policies := map[string]*openshell.Policy{}
			for name, a := range out.Agents {
				policies[name] = a.Policy
			}
			project := os.DirFS(c.dir)
			files, err := decide.FindExpectations(project)
			if err != nil || len(files) == 0 {
				t.Fatalf("expectation files: %v, %v", files, err)
			}
			rep, err := decide.RunExpectations(project, files, policies, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				if !r.Pass {
					t.Errorf("%s:%d %s: expected %s, got %s: %s %s", r.File, r.Line, r.Name, r.Expect, r.Decision.Verdict(), r.Decision.Reason, r.Problem)
				}
			}

			// The same checks through the compiled files on disk.
			fsys := fstest.MapFS{}
			for name, data := range out.Files {
				fsys[name] = &fstest.MapFile{Data: data}
			}
			b, err := bundle.Open(fsys, ".")
			if err != nil {
				t.Fatalf("compiled output does not match its own manifest: %v", err)
			}
			inputs, err := lint.ProjectInputs(fsys, "policies", b)
			if err != nil {
				t.Fatal(err)
			}
			e, err := lint.New(context.Background(), lint.Options{})
			if err != nil {
				t.Fatal(err)
			}
			lrep, err := e.Lint(context.Background(), inputs)
			if err != nil {
				t.Fatal(err)
			}
			if lrep.Failed(report.SeverityDeny) {
				t.Errorf("compiled policies have deny findings: %+v", lrep.Findings)
			}
			for _, f := range lrep.Findings {
				if f.Source == nil && f.PolicyPath != "" && strings.HasPrefix(f.PolicyPath, "network_policies") {
					t.Errorf("finding %s at %s has no source line from provenance.json", f.RuleID, f.PolicyPath)
				}
			}
		})
	}
}

// TestExpectationsCatchAWrongPolicy flips one expectation of the triage
// system: the run must report exactly that case as failed.
func TestExpectationsCatchAWrongPolicy(t *testing.T) {
	out, err := compile.CompileDir(context.Background(), "../testdata/triage", compile.ProjectOptions{Set: []string{"HOST_IP=172.17.0.1"}, Lint: lintcheck.Start(lint.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../testdata/triage/agents/duplicate-detector.policytest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	flipped := strings.Replace(string(src), "  - name: subagents cannot comment\n    request: POST http://host.docker.internal:8081/repos/acme/widgets/issues/5/comments from /usr/bin/curl at 172.17.0.1\n    expect: deny",
		"  - name: subagents cannot comment\n    request: POST http://host.docker.internal:8081/repos/acme/widgets/issues/5/comments from /usr/bin/curl at 172.17.0.1\n    expect: allow", 1)
	if flipped == string(src) {
		t.Fatal("fixture changed: could not flip the expectation")
	}
	fsys := fstest.MapFS{"d.policytest.yaml": {Data: []byte(flipped)}}
	policies := map[string]*openshell.Policy{"duplicate-detector": out.Agents["duplicate-detector"].Policy}
	rep, err := decide.RunExpectations(fsys, []string{"d.policytest.yaml"}, policies, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() != 1 {
		t.Fatalf("%d failures, want 1", rep.Failed())
	}
}
