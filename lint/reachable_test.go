package lint

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

// TestReachableFactMatchesRego keeps contextFacts' reachable_agents equal to
// the spawn graph agents.rego builds without it: FS027's findings must not
// depend on whether the engine or conftest runs the rule.
func TestReachableFactMatchesRego(t *testing.T) {
	mods := []*ast.Module{mustParse(t, "lib.rego"), mustParse(t, "agents.rego")}
	query := `f := {x.msg | some x in data.fullsend.rules.agents.deny_privilege_lifting}`
	for _, tc := range []struct {
		name, context string
		findings      int // FS027 findings either way
	}{
		{"direct", `{"agent": "r", "tier": "read-only", "spawns": ["w"],
			"agents": {"r": {"tier": "read-only", "spawns": ["w"], "writes": false}, "w": {"writes": true}}}`, 1},
		{"through a reader", `{"agent": "r", "tier": "read-only", "spawns": ["m"],
			"agents": {"r": {"spawns": ["m"], "writes": false}, "m": {"spawns": ["w"], "writes": false},
			"w": {"writes": true}, "x": {"writes": true}}}`, 1},
		{"cycle back to itself", `{"agent": "r", "tier": "read-only", "spawns": ["m"],
			"agents": {"r": {"spawns": ["w"], "writes": false}, "m": {"spawns": ["r", "m"], "writes": false},
			"w": {"writes": true}, "v": {"writes": true}}}`, 0},
		{"context spawns differ from its entry", `{"agent": "r", "tier": "read-only", "spawns": [],
			"agents": {"r": {"spawns": ["w"], "writes": false}, "w": {"writes": true}}}`, 0},
		{"not in agents", `{"agent": "r", "tier": "read-only", "spawns": ["w", "ghost"],
			"agents": {"w": {"spawns": ["ghost2"], "writes": true}}}`, 1},
		{"spawns null or a string", `{"agent": "r", "tier": "read-only", "spawns": ["a", "b"],
			"agents": {"a": {"spawns": null, "writes": true}, "b": {"spawns": "w", "writes": true}, "w": {"writes": true}}}`, 2},
		{"entry not an object", `{"agent": "r", "tier": "read-only", "spawns": ["a"],
			"agents": {"a": "odd", "w": {"writes": true}}}`, 0},
		{"agents not an object", `{"agent": "r", "tier": "read-only", "spawns": ["a"], "agents": ["a"]}`, 0},
		{"no agents", `{"agent": "r", "tier": "read-only", "spawns": ["a"]}`, 0},
		{"no agent", `{"tier": "read-only", "spawns": ["w"], "agents": {"w": {"writes": true}}}`, 0},
		{"numeric agent", `{"agent": 1, "tier": "read-only", "spawns": ["w"], "agents": {"w": {"writes": true}}}`, 1},
		{"writer tier", `{"agent": "r", "tier": "full", "spawns": ["w"], "agents": {"w": {"writes": true}}}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctxVal := ast.MustParseTerm(tc.context).Value
			facts := ast.NewObject()
			contextFacts(facts, ctxVal)
			eval := func(data ast.Object) ast.Value {
				t.Helper()
				raw, err := ast.JSON(data)
				if err != nil {
					t.Fatal(err)
				}
				store := inmem.NewFromObject(raw.(map[string]any))
				opts := []func(*rego.Rego){rego.Query(query), rego.Store(store), rego.ParsedInput(ast.NewObject())}
				for _, m := range mods {
					opts = append(opts, rego.ParsedModule(m))
				}
				rs, err := rego.New(opts...).Eval(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				v, err := ast.InterfaceToValue(rs[0].Bindings["f"])
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			fullsend := func(withFacts bool) ast.Object {
				fs := ast.NewObject(ast.Item(ast.StringTerm("context"), ast.NewTerm(ctxVal)))
				if withFacts {
					fs.Insert(ast.StringTerm("facts"), ast.NewTerm(facts))
				}
				return ast.NewObject(ast.Item(ast.StringTerm("fullsend"), ast.NewTerm(fs)))
			}
			want, got := eval(fullsend(false)), eval(fullsend(true))
			if n := want.(*ast.Array).Len(); n != tc.findings {
				t.Errorf("the Rego spawn graph finds %d: %v; want %d", n, want, tc.findings)
			}
			if want.Compare(got) != 0 {
				t.Errorf("FS027 with reachable_agents %v: %v; the Rego spawn graph finds %v", facts, got, want)
			}
		})
	}
}
