package lintcheck_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/compile/lintcheck"
	"github.com/fullsend-ai/agent-sandbox/lint"
)

// liftingProject is a read-only agent that can start an agent that writes:
// lint's deny_privilege_lifting, which only the injected lint check sees.
var liftingProject = fstest.MapFS{
	"agents/lead.md": {Data: []byte("---\nname: lead\ndescription: d\ntools: Read, Agent(worker)\n---\nb\n")},
	"agents/worker.md": {Data: []byte("---\nname: worker\ndescription: d\ntools: Read, Bash(curl *)\nsandbox:\n  tier: full\n" +
		"  endpoints:\n    - host: api.example.com\n      rules:\n        - POST /v1/items\n---\nb\n")},
}

// TestStartInjectsTheLintCheck: CompileDir lints only through the injected
// check. Without it the project compiles and no lint stage runs (compile
// links no rule engine); with it, the deny finding fails the compile, at the
// policy (a spawn has no source line in provenance).
func TestStartInjectsTheLintCheck(t *testing.T) {
	dir := writeMapFS(t, liftingProject)
	ctx := context.Background()
	out, err := compile.CompileDir(ctx, dir, compile.ProjectOptions{})
	if err != nil {
		t.Fatalf("without the lint check: %v", err)
	}
	if slices.ContainsFunc(out.Stages, func(s compile.Stage) bool { return s.Name == "lint-rules" || s.Name == "lint" }) {
		t.Errorf("stages without the lint check: %v", out.Stages)
	}
	_, err = compile.CompileDir(ctx, dir, compile.ProjectOptions{Lint: lintcheck.Start(lint.Options{})})
	var f *compile.Failure
	if !errors.As(err, &f) {
		t.Fatalf("with the lint check: want a *compile.Failure, got %v", err)
	}
	var found bool
	for _, d := range f.Diagnostics.Errors() {
		if strings.Contains(d.Message, "[FS027]") && d.Pos.File == "policies/lead.yaml" {
			found = true
		}
	}
	if !found {
		t.Errorf("no FS027 error at policies/lead.yaml in %v", f.Diagnostics)
	}
}

// TestNewMatchesStart: the check New returns, passed through Options.Checks,
// reports what the started one reports through CompileDir.
func TestNewMatchesStart(t *testing.T) {
	ctx := context.Background()
	proj, err := agentdef.Load(liftingProject)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := options()
	if err != nil {
		t.Fatal(err)
	}
	opts.Checks = []compile.Check{lintcheck.New(lint.Options{})}
	_, err = compile.Compile(ctx, proj, liftingProject, opts)
	var f *compile.Failure
	if !errors.As(err, &f) || !strings.Contains(f.Diagnostics.Errors().Error(), "[FS027]") {
		t.Fatalf("want the privilege-lifting error, got %v", err)
	}
}
