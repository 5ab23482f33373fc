package compile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

// TestExpectationsOfABrokenAgent: an agent that does not parse (an unquoted
// ': ', an unclosed '[', a display name) next to its *.policytest.yaml used
// to hide every diagnostic behind `agent "X" has no compiled policy`. Now
// the run reports the agent's own error, the other agent's warning, and one
// note that the broken agent's expectations were skipped.
func TestExpectationsOfABrokenAgent(t *testing.T) {
	test := "agent: summarizer\ntests:\n  - request: GET https://api.github.com/zen from /usr/bin/gh\n    expect: deny\n"
	other := "---\nname: other\ndescription: d\ntools: Read\ncategory: misc\n---\nb\n"
	cases := []struct {
		name, agent, wantErr string
	}{
		{"unquoted colon", "---\nname: summarizer\ndescription: Summarize: an issue\ntools: [Read]\n---\nb\n", "unquoted ': '"},
		{"unclosed bracket", "---\nname: summarizer\ndescription: d\ntools: [Read\n---\nb\n", "invalid YAML"},
		{"display name", "---\nname: Release Notes\ndescription: d\ntools: Read\n---\nb\n", "invalid agent name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeProject(t, map[string]string{
				"agents/summarizer.md":              tc.agent,
				"agents/summarizer.policytest.yaml": test,
				"agents/other.md":                   other,
			})
			_, err := CompileDir(context.Background(), dir, ProjectOptions{})
			var f *Failure
			if !errors.As(err, &f) {
				t.Fatalf("err = %v, want a *Failure with every diagnostic", err)
			}
			var gotErr, gotWarn, gotNote bool
			for _, d := range f.Diagnostics {
				switch {
				case d.Pos.File == "agents/summarizer.md" && d.Severity == agentdef.SeverityError && strings.Contains(d.Message, tc.wantErr):
					gotErr = true
				case d.Pos.File == "agents/other.md" && d.Severity == agentdef.SeverityWarning:
					gotWarn = true
				case d.Pos.File == "agents/summarizer.policytest.yaml":
					if d.Severity != agentdef.SeverityNote || !strings.Contains(d.Message, "expectations skipped") {
						t.Errorf("expectation file: %v, want one note that it was skipped", d)
					}
					gotNote = true
				}
			}
			if !gotErr || !gotWarn || !gotNote {
				t.Errorf("agent error %v, other's warning %v, skip note %v; all:\n%v", gotErr, gotWarn, gotNote, f.Diagnostics)
			}
		})
	}
}

// TestExpectationsEveryFileJudged: a bad expectation file and one naming an
// agent nobody defined are errors at their own positions (with a
// did-you-mean), and the good file's expectations still run.
func TestExpectationsEveryFileJudged(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"agents/other.md":              "---\nname: other\ndescription: d\ntools: Read\n---\nb\n",
		"agents/typo.policytest.yaml":  "agent: othr\ntests:\n  - request: GET https://x.example/ from /usr/bin/gh\n    expect: deny\n",
		"agents/field.policytest.yaml": "agent: other\ntests:\n  - request: GET https://x.example/ from /usr/bin/gh\n    expct: deny\n",
		"agents/fails.policytest.yaml": "agent: other\ntests:\n  - request: GET https://x.example/ from /usr/bin/gh\n    expect: allow\n",
	})
	_, err := CompileDir(context.Background(), dir, ProjectOptions{})
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v, want a *Failure", err)
	}
	want := map[string]string{
		"agents/typo.policytest.yaml:1":  `did you mean "other"?`,
		"agents/field.policytest.yaml:4": `unknown field "expct": did you mean "expect"?`,
		"agents/fails.policytest.yaml:3": "does not hold",
	}
	for _, d := range f.Diagnostics {
		key := fmt.Sprintf("%s:%d", d.Pos.File, d.Pos.Line)
		if w, ok := want[key]; ok && strings.Contains(d.String(), w) {
			delete(want, key)
		}
		if strings.Contains(d.String(), "openshell.") {
			t.Errorf("Go type name in a user error: %v", d)
		}
	}
	for k, w := range want {
		t.Errorf("no diagnostic at %s containing %q; all:\n%v", k, w, f.Diagnostics)
	}
}
