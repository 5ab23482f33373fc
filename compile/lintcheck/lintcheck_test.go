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
	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/lint"
)

// liftingProject is a read-only agent that can start an agent that writes:
// lint's deny_privilege_lifting, which only the injected lint check sees.
// The lead declares the widening, so that the compile's containment proof
// (compile/spawns.go) lets the project through to the lint stage.
var liftingProject = fstest.MapFS{
	"agents/lead.md": {Data: []byte("---\nname: lead\ndescription: d\ntools: Read, Agent(worker)\nsandbox:\n  spawn-widening:\n" +
		"    - agent: worker\n      hosts: [api.example.com]\n      process: true\n---\nb\n")},
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

// TestLintsTheComposedPolicy: the lint check sees an agent's provider
// layers. fullsend-ai/agents' fullsend-vertex-ai profile (fixture from
// fullsend-ai/agents profiles/ at d021f80a) lets **/node write to every
// Google API once composed, which FS016 denies at the profile's line.
func TestLintsTheComposedPolicy(t *testing.T) {
	vertex := fixture.ReadFile(t, "from-project/openshell/profile/testdata/agents/profiles/fullsend-vertex-ai.yaml")
	dir := writeMapFS(t, fstest.MapFS{
		"agents/a.md": {Data: []byte("---\nname: a\ndescription: d\ntools: Read, Bash(gh pr view:*)\nmodel: claude-opus-4-1@20250805\n" +
			"sandbox:\n  providers: [fullsend-vertex-ai]\n---\n\nbody\n")},
		"profiles/fullsend-vertex-ai.yaml": {Data: vertex},
	})
	ctx := context.Background()
	if _, err := compile.CompileDir(ctx, dir, compile.ProjectOptions{}); err != nil {
		t.Fatalf("without the lint check: %v", err)
	}
	_, err := compile.CompileDir(ctx, dir, compile.ProjectOptions{Lint: lintcheck.Start(lint.Options{})})
	var f *compile.Failure
	if !errors.As(err, &f) {
		t.Fatalf("with the lint check: want a *compile.Failure, got %v", err)
	}
	for _, d := range f.Diagnostics.Errors() {
		if d.Pos.String() == "profiles/fullsend-vertex-ai.yaml:14:5" && strings.Contains(d.Message, "[FS016] binary **/node may write to *.googleapis.com (agent a)") {
			return
		}
	}
	t.Errorf("no FS016 error at profiles/fullsend-vertex-ai.yaml:14:5 in\n%v", f.Diagnostics)
}
