package lint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// TestContextValue checks that the context's value, built directly, equals
// the value of its JSON (what conftest and opa see with --data).
func TestContextValue(t *testing.T) {
	tests := []struct {
		name string
		c    Context
	}{
		{"agent only", Context{Agent: "triage"}},
		{"tier and runtime", Context{Tier: "network", Runtime: true}},
		{"empty slices", Context{Agent: "a", Spawns: []string{}, Skills: []string{}}},
		{"no placeholders allowed", Context{Agent: "a", Placeholders: []string{}}},
		{"placeholders", Context{Placeholders: []string{"OWNER", "REPO"}}},
		{"full", Context{
			Agent: "triage", Tier: "full", Runtime: true,
			Spawns: []string{"review"}, Skills: []string{"gh", "git"}, Placeholders: []string{"X"},
			Provenance: map[string][]bundle.Source{
				"network_policies.forge":      {{File: "agents/triage.md", Line: 3, Column: 5, Reason: "tools: gh"}},
				"filesystem_policy.read_only": {{File: "a.md", Reason: "default"}, {File: "b.md", Line: -1, Reason: ""}},
				"empty":                       {},
				"nil":                         nil,
			},
			Env:    map[string]string{"A": "1", "B": "", "ü": "é\u2028"},
			Agents: map[string]AgentInfo{"review": {Tier: "read-only", Spawns: []string{"x"}, Writes: true}, "x": {}},
		}},
		{"empty maps", Context{Agent: "a", Provenance: map[string][]bundle.Source{}, Env: map[string]string{}, Agents: map[string]AgentInfo{}}},
		{"invalid utf-8", Context{Agent: "a\xff\xfeb", Env: map[string]string{"k": "\xc3"}}},
		{"invalid utf-8 agents", Context{Agent: "a", Agents: map[string]AgentInfo{"b\xff": {Spawns: []string{"\xfe"}}}}},
		{"invalid utf-8 source", Context{Agent: "a", Provenance: map[string][]bundle.Source{
			"p": {{File: "a.md", Reason: "default"}, {File: "c\xff.md", Reason: "r"}},
		}}},
		{"valid again after invalid", Context{Agent: "a", Provenance: map[string][]bundle.Source{
			"p": {{File: "a.md", Reason: "default"}},
		}}},
	}
	// One memo for all cases, as a Lint worker keeps one for all its
	// inputs: terms built for one context must read the same in the next.
	memo := newTermMemo()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := tt.c.value(), tt.c.jsonValue()
			if got.Compare(want) != 0 {
				t.Errorf("value:\n%v\nJSON value:\n%v", got, want)
			}
			// Lint shares the agents' value among the inputs holding the
			// same map; the context must read the same.
			if shared := tt.c.valueWith(shareAgents([]Input{{Context: tt.c}}), nil); shared.Compare(want) != 0 {
				t.Errorf("value with shared agents:\n%v\nJSON value:\n%v", shared, want)
			}
			// Each worker memoizes the terms of strings and sources.
			for range 2 {
				if memoized := tt.c.valueWith(nil, memo); memoized.Compare(want) != 0 {
					t.Errorf("value with a term memo:\n%v\nJSON value:\n%v", memoized, want)
				}
			}
		})
	}
}

// A Lint worker builds every policy's document with one term memo: each
// document must equal the one built without it.
func TestDocumentValueMemo(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/*.yaml")
	files = append(files, "../openshell/decide/testdata/policy.yaml")
	memo := newTermMemo()
	n := 0
	for range 2 {
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := openshell.Unmarshal(raw)
			if err != nil {
				continue // the corpus holds policies that do not decode
			}
			n++
			if got, want := documentValue(p, memo), DocumentValue(p); got.Compare(want) != 0 {
				t.Errorf("%s: with a memo:\n%v\nwithout:\n%v", f, got, want)
			}
		}
	}
	if n < 20 || len(memo.strs) == 0 {
		t.Fatalf("%d policies decoded, %d strings memoized: the corpus moved?", n, len(memo.strs))
	}
}
