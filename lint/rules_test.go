package lint

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/tester"
)

// TestRegoUnitTests runs every *_test.rego of the embedded rule set through
// OPA's test runner, as `opa test lint/rules` does.
func TestRegoUnitTests(t *testing.T) {
	modules := map[string]*ast.Module{}
	err := fs.WalkDir(BuiltinRules(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := fs.ReadFile(BuiltinRules(), p)
		if err != nil {
			return err
		}
		m, err := ast.ParseModuleWithOpts(p, string(src), ast.ParserOptions{ProcessAnnotation: true, RegoVersion: ast.RegoV1})
		if err != nil {
			return err
		}
		modules[p] = m
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := tester.NewRunner().SetModules(modules).Run(context.Background(), modules)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r := range ch {
		n++
		if r.Error != nil || r.Fail {
			t.Errorf("%s.%s: fail=%v err=%v", r.Package, r.Name, r.Fail, r.Error)
		}
	}
	if n < 2*len(testEngine(t).Rules()) {
		t.Errorf("ran %d rego tests for %d rules, want at least two per rule", n, len(testEngine(t).Rules()))
	}
}

// TestEveryRuleHasPositiveAndNegativeTests requires, per rule id, at least
// two test_fsNNN_* rules in the rego tests: one that fires, one that does not.
func TestEveryRuleHasPositiveAndNegativeTests(t *testing.T) {
	counts := map[string]int{}
	re := regexp.MustCompile(`(?m)^test_(fs\d{3})_`)
	_ = fs.WalkDir(BuiltinRules(), ".", func(p string, d fs.DirEntry, _ error) error {
		if strings.HasSuffix(p, "_test.rego") {
			src, _ := fs.ReadFile(BuiltinRules(), p)
			for _, m := range re.FindAllStringSubmatch(string(src), -1) {
				counts[strings.ToUpper(m[1])]++
			}
		}
		return nil
	})
	for _, r := range testEngine(t).Rules() {
		if counts[r.ID] < 2 {
			t.Errorf("rule %s (%s) has %d rego tests, want a positive and a negative", r.ID, r.Name, counts[r.ID])
		}
	}
}

// TestRuleMetadata checks every builtin rule declares a unique custom id, a
// title, a description and a severity matching its name prefix.
func TestRuleMetadata(t *testing.T) {
	seen := map[string]string{}
	rules := testEngine(t).Rules()
	if len(rules) < 27 {
		t.Fatalf("%d builtin rules, want at least 27", len(rules))
	}
	for _, r := range rules {
		ref := r.Namespace + "." + r.Name
		if !regexp.MustCompile(`^FS\d{3}$`).MatchString(r.ID) {
			t.Errorf("%s: id %q, want FSnnn in # METADATA custom.id", ref, r.ID)
		}
		if prev, ok := seen[r.ID]; ok {
			t.Errorf("%s: id %s already used by %s", ref, r.ID, prev)
		}
		seen[r.ID] = ref
		if r.Title == "" || r.Description == "" {
			t.Errorf("%s: missing title or description", ref)
		}
	}
	// Severity in metadata must match the prefix conftest uses.
	for name, src := range ruleSources(t) {
		for _, m := range regexp.MustCompile(`(?s)severity: (\w+)\n(deny|warn)_\w+ contains`).FindAllStringSubmatch(src, -1) {
			if m[1] != m[2] {
				t.Errorf("%s: severity %s on a %s_ rule", name, m[1], m[2])
			}
		}
	}
}

func ruleSources(t *testing.T) map[string]string {
	out := map[string]string{}
	entries, err := fs.ReadDir(BuiltinRules(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		src, err := fs.ReadFile(BuiltinRules(), e.Name())
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(src)
	}
	return out
}

// TestWritesMatchesRego keeps the Go Writes/EndpointWrites equal to the Rego
// lib.writes on every endpoint of the corpus and the decision fixture.
func TestWritesMatchesRego(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/*.yaml")
	pq, err := rego.New(
		rego.Query(`w := {[k, i] | some k, np in input.network_policies; some i, ep in np.endpoints; data.fullsend.lib.writes(ep)}`),
		rego.ParsedModule(mustParse(t, "lib.rego")),
	).PrepareForEval(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, file := range files {
		data, _ := os.ReadFile(file)
		p, err := openshell.Unmarshal(data)
		if err != nil {
			continue // not a policy (or deliberately undecodable)
		}
		rs, err := pq.Eval(context.Background(), rego.EvalParsedInput(DocumentValue(p)))
		if err != nil {
			t.Fatal(err)
		}
		regoWrites := map[string]bool{}
		for _, pair := range rs[0].Bindings["w"].([]any) {
			pr := pair.([]any)
			regoWrites[fmt.Sprintf("%s/%v", pr[0], pr[1])] = true
		}
		for key, np := range p.NetworkPolicies {
			for i := range np.Endpoints {
				checked++
				k := fmt.Sprintf("%s/%d", key, i)
				if got := EndpointWrites(&np.Endpoints[i]); got != regoWrites[k] {
					t.Errorf("%s %s: Go EndpointWrites=%v, rego lib.writes=%v", file, k, got, regoWrites[k])
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d endpoints", checked)
	}
}

func mustParse(t *testing.T, name string) *ast.Module {
	src, err := fs.ReadFile(BuiltinRules(), name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ast.ParseModuleWithOpts(name, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBuiltinRulesPassEveryCheck compiles the embedded rules with every
// compiler stage, strict: New skips the checking stages for them
// (builtinCheckStages), so this is where they are checked.
func TestBuiltinRulesPassEveryCheck(t *testing.T) {
	modules, err := loadModules(Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := ast.NewCompiler().WithEnablePrintStatements(false).WithStrict(true)
	if c.Compile(modules); c.Failed() {
		t.Fatalf("embedded rules: %v", c.Errors)
	}
	// The skipped stages are what would catch a type error.
	bad := map[string]*ast.Module{"bad.rego": ast.MustParseModuleWithOpts(
		"package x\nf(a) := a + 1\ndeny contains f(\"s\") if true\n", ast.ParserOptions{RegoVersion: ast.RegoV1})}
	full := ast.NewCompiler()
	if full.Compile(bad); !full.Failed() {
		t.Fatal("a type error compiled cleanly with every stage")
	}
	skipped := ast.NewCompiler().WithSkipStages(builtinCheckStages...)
	if skipped.Compile(bad); skipped.Failed() {
		t.Fatalf("the type error is caught without the checking stages (%v): builtinCheckStages is stale", skipped.Errors)
	}
}
