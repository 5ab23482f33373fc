package decide

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/openshell"

	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

const expectOK = `agent: triage
set:
  OWNER: acme
  REPO_NAME: widgets
  ISSUE_NUMBER: 5
tests:
  - name: reads
    request: GET https://api.github.com/repos/acme/widgets/issues/5 from /usr/bin/gh
    expect: allow
  - request: POST https://api.github.com/repos/acme/widgets/issues/6/comments from /usr/bin/gh
    expect: deny
    reason: no rule
`

func TestParseExpectFile(t *testing.T) {
	ef, err := ParseExpectFile("agents/triage.policytest.yaml", []byte(expectOK))
	if err != nil {
		t.Fatal(err)
	}
	if ef.Agent != "triage" || len(ef.Tests) != 2 || ef.Set["ISSUE_NUMBER"] != "5" {
		t.Fatalf("parsed %+v", ef)
	}
	if ef.Tests[0].Line != 7 || ef.Tests[1].Line != 10 || ef.Tests[1].Reason != "no rule" {
		t.Errorf("lines/reason: %+v", ef.Tests)
	}
}

func TestParseExpectFileErrors(t *testing.T) {
	for name, c := range map[string]struct{ src, want string }{
		"empty":          {"", ":1: file is empty"},
		"no agent":       {"tests: [{request: 'GET https://x.com/ from /b', expect: allow}]", "missing agent"},
		"no tests":       {"agent: a\n", "no tests"},
		"unknown key":    {"agent: a\nfoo: 1\ntests: []\n", `:2: unknown field "foo" (want agent, set, providers and tests)`},
		"unknown case":   {"agent: a\ntests:\n  - request: GET https://x.com/ from /b\n    expect: allow\n    verdict: x\n", `:5: tests[0]: unknown field "verdict"`},
		"near key":       {"agent: a\ntests:\n  - request: GET https://x.com/ from /b\n    expects: allow\n", `:4: tests[0]: unknown field "expects": did you mean "expect"?`},
		"near top key":   {"agnt: a\ntests: []\n", `:1: unknown field "agnt": did you mean "agent"?`},
		"wrong type":     {"agent: [a]\ntests: []\n", "want a string"},
		"not a list":     {"agent: a\nproviders: p\ntests: []\n", "want a list, got a string"},
		"not a mapping":  {"agent: a\nset: [x]\ntests: []\n", "want a mapping, got a list"},
		"repeated key":   {"agent: a\nagent: b\ntests: []\n", `:2: field "agent" given twice`},
		"bad verdict":    {"agent: a\ntests:\n  - request: GET https://x.com/ from /b\n    expect: maybe\n", ":4: tests[0]: expect \"maybe\""},
		"bad request":    {"agent: a\ntests:\n  - request: GET https://x.com/\n    expect: allow\n", ":3: tests[0]: bad request"},
		"no request":     {"agent: a\ntests:\n  - expect: allow\n", "missing request"},
		"scalar case":    {"agent: a\ntests:\n  - GET x\n", ":3: tests[0]: want a mapping"},
		"bad set":        {"agent: a\nset: {OWNER: 'a/b'}\ntests:\n  - request: GET https://x.com/ from /b\n    expect: allow\n", "set.OWNER"},
		"two documents":  {expectOK + "---\nagent: b\n", "more than one YAML document"},
		"not yaml":       {"agent: [\n", "did not find expected"},
		"unknown holder": {"agent: a\nset: {NOPE: x}\ntests:\n  - request: GET https://x.com/ from /b\n    expect: allow\n", "set.NOPE"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseExpectFile("x.policytest.yaml", []byte(c.src))
			if err == nil {
				t.Fatal("parsed, want an error")
			}
			if !errors.Is(err, ErrExpectFile) || !strings.Contains(err.Error(), "x.policytest.yaml") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want ErrExpectFile naming the file and containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), "openshell.") || strings.Contains(err.Error(), "yaml.Node") {
				t.Errorf("error %q names a Go type", err)
			}
		})
	}
}

func TestRunExpectations(t *testing.T) {
	p := decidePolicy(t)
	withHolder := p.Clone()
	np := withHolder.NetworkPolicies["github"]
	np.Endpoints[0].Rules[1].Allow.Path = "/repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/comments"
	withHolder.NetworkPolicies["github"] = np
	policies := map[string]*openshell.Policy{"triage": withHolder}
	failing := strings.Replace(expectOK, "expect: deny", "expect: allow", 1)
	fsys := fstest.MapFS{
		"agents/triage.policytest.yaml":  {Data: []byte(expectOK)},
		"agents/failing.policytest.yaml": {Data: []byte(failing)},
		".hidden/x.policytest.yaml":      {Data: []byte("junk")},
	}
	files, err := FindExpectations(fsys)
	if err != nil || len(files) != 2 {
		t.Fatalf("FindExpectations = %v, %v", files, err)
	}
	rep, err := RunExpectations(fsys, files, policies, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files != 2 || len(rep.Results) != 4 || rep.Failed() != 1 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Results {
		if !r.Pass && (r.File != "agents/failing.policytest.yaml" || r.Line != 10) {
			t.Errorf("unexpected failure %+v", r)
		}
	}
	// --set overrides the file's values: issue 6 is now the agent's own.
	rep, err = RunExpectations(fsys, []string{"agents/triage.policytest.yaml"}, policies, placeholder.Values{"ISSUE_NUMBER": "6"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() != 1 {
		t.Errorf("with --set ISSUE_NUMBER=6: %d failures, want 1", rep.Failed())
	}
	// The original policy keeps its placeholders.
	if !strings.Contains(policies["triage"].NetworkPolicies["github"].Endpoints[0].Rules[1].Allow.Path, "{{ISSUE_NUMBER}}") {
		t.Error("RunExpectations substituted into the caller's policy")
	}
}

func TestRunExpectationsErrors(t *testing.T) {
	p := decidePolicy(t)
	holder := p.Clone()
	np := holder.NetworkPolicies["github"]
	np.Endpoints[0].Rules[0].Allow.Path = "/repos/{{OWNER}}/x"
	holder.NetworkPolicies["github"] = np
	noSet := "agent: triage\ntests:\n  - request: GET https://x.com/ from /b\n    expect: deny\n"
	for name, c := range map[string]struct {
		policies map[string]*openshell.Policy
		src      string
		want     string
	}{
		"unknown agent": {map[string]*openshell.Policy{"other": p}, expectOK, `agent "triage" has no compiled policy (have other)`},
		"open holder":   {map[string]*openshell.Policy{"triage": holder}, noSet, "still has placeholders OWNER"},
		"no compose":    {map[string]*openshell.Policy{"triage": p}, "providers: [github]\n" + noSet, "a.policytest.yaml: providers: needs provider profile composition"},
	} {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{"a.policytest.yaml": {Data: []byte(c.src)}}
			_, err := RunExpectations(fsys, []string{"a.policytest.yaml"}, c.policies, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestRunExpectationsCompose checks that the compose function sees each
// file and its agent's resolved policy, and that its error names the file.
func TestRunExpectationsCompose(t *testing.T) {
	p := decidePolicy(t)
	src := "agent: triage\nproviders: [github]\ntests:\n  - request: GET https://x.com/ from /b\n    expect: deny\n"
	fsys := fstest.MapFS{"a.policytest.yaml": {Data: []byte(src)}}
	policies := map[string]*openshell.Policy{"triage": p}
	var saw []string
	compose := func(ef *ExpectFile, q *openshell.Policy) (*openshell.Policy, error) {
		saw = append(saw, ef.File+" "+strings.Join(ef.Providers, ","))
		return q, nil
	}
	rep, err := RunExpectationsCompose(fsys, []string{"a.policytest.yaml"}, policies, nil, "", compose)
	if err != nil || rep.Failed() != 0 || len(saw) != 1 || saw[0] != "a.policytest.yaml github" {
		t.Fatalf("compose: report %+v, err %v, saw %q", rep, err, saw)
	}
	failing := func(*ExpectFile, *openshell.Policy) (*openshell.Policy, error) {
		return nil, errors.New("no such provider")
	}
	_, err = RunExpectationsCompose(fsys, []string{"a.policytest.yaml"}, policies, nil, "", failing)
	if err == nil || err.Error() != "a.policytest.yaml: no such provider" {
		t.Errorf("failing compose: error %v", err)
	}
}
