package compile

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// TestExplainRule: every protocol's rule reads in its own words; GraphQL
// rules used to render as a blank `allow  ` (JSON " ").
func TestExplainRule(t *testing.T) {
	for _, tc := range []struct {
		m    openshell.Match
		want string
	}{
		{openshell.Match{Method: "GET", Path: "/repos/**"}, "GET /repos/**"},
		{openshell.Match{OperationType: "query", OperationName: "GetIssue"}, "graphql query GetIssue"},
		{openshell.Match{OperationType: "mutation", OperationName: "add*", Fields: []string{"addComment"}}, "graphql mutation add* fields addComment"},
		{openshell.Match{OperationType: "*"}, "graphql any operation (any name)"},
		{openshell.Match{Command: "SELECT"}, "sql SELECT"},
		{openshell.Match{Method: "tools/call", Tool: &openshell.QueryMatch{Glob: "search"}}, "tools/call tool search"},
		{openshell.Match{}, "(any request)"},
	} {
		if got := explainRule(tc.m); got != tc.want {
			t.Errorf("explainRule(%+v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}

// TestExplainGraphQLRules: the production triage agent's GraphQL grants
// are explained by operation, never as an empty rule.
func TestExplainGraphQLRules(t *testing.T) {
	out, err := CompileDir(context.Background(), filepath.Join("..", "testdata", "production"), ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ex := Explain(out.Agents["triage"])
	var graphql int
	for _, ep := range ex.Endpoints {
		for _, r := range ep.Rules {
			if strings.TrimSpace(r.Value) == "" {
				t.Errorf("%s:%d: blank rule", ep.Host, ep.Port)
			}
			if strings.HasPrefix(r.Value, "graphql ") {
				graphql++
			}
		}
	}
	if graphql == 0 {
		t.Errorf("no GraphQL rule explained:\n%s", ex)
	}
	if strings.Contains(ex.String(), "allow  \n") {
		t.Errorf("blank allow line:\n%s", ex)
	}
}

// TestOutputDirectoryTier: a read_write directory that is a declared output
// under /sandbox or /tmp keeps the network tier (it used to raise the agent
// to full: all of /sandbox writable, forge write); anything else still
// needs full, and explain says what the tier decides.
func TestOutputDirectoryTier(t *testing.T) {
	agent := func(sandbox string) string {
		return "---\nname: reporter\ndescription: d\ntools: Bash(gh)\nsandbox:\n  profiles: [forge-read]\n" + sandbox + "---\nb\n"
	}
	for _, tc := range []struct {
		name, sandbox string
		tier          string
	}{
		{"output dir", "  filesystem:\n    read_write: [/sandbox/out]\n  outputs: [/sandbox/out]\n", "network"},
		{"under an output", "  filesystem:\n    read_write: [/sandbox/out/reports]\n  outputs: [/sandbox/out]\n", "network"},
		{"tmp output", "  filesystem:\n    read_write: [/tmp/report]\n  outputs: [/tmp/report]\n", "network"},
		{"not an output", "  filesystem:\n    read_write: [/sandbox/out]\n", "full"},
		{"the workdir itself", "  filesystem:\n    read_write: [/sandbox]\n  outputs: [/sandbox]\n", "full"},
		{"runtime state", "  filesystem:\n    read_write: [/sandbox/.claude]\n  outputs: [/sandbox/.claude]\n", "full"},
		{"outside", "  filesystem:\n    read_write: [/etc/x]\n  outputs: [/etc/x]\n", "full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeProject(t, map[string]string{"agents/reporter.md": agent(tc.sandbox)})
			out, err := CompileDir(context.Background(), dir, ProjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c := out.Agents["reporter"]
			if string(c.Tier) != tc.tier {
				t.Fatalf("tier %s, want %s (why: %v)", c.Tier, tc.tier, c.TierWhy)
			}
			ex := Explain(c)
			text := ex.String()
			if !strings.Contains(text, "tier "+tc.tier+" also decides:") || !strings.Contains(text, "forge proxy: ") || !strings.Contains(text, "runtime: claude runs with") {
				t.Errorf("explain does not say what the tier decides:\n%s", text)
			}
			if tc.tier == "network" {
				if c.Policy.FilesystemPolicy.IncludeWorkdir {
					t.Error("the workdir is writable below the full tier")
				}
				if !strings.Contains(text, "workdir: /sandbox is read-only; writable: ") {
					t.Errorf("explain does not name the writable output:\n%s", text)
				}
			}
		})
	}
}

// TestUnknownCommandTier: a command outside the binary registry gets a
// did-you-mean and no longer raises the agent to the full tier.
func TestUnknownCommandTier(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"agents/a.md": "---\nname: a\ndescription: d\ntools: Read, Bash(jqq)\n---\nb\n",
	})
	out, err := CompileDir(context.Background(), dir, ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := out.Agents["a"]; c.Tier == "full" {
		t.Errorf("tier %s from an unknown command (why: %v)", c.Tier, c.TierWhy)
	}
	var warned bool
	for _, w := range out.Warnings {
		if strings.Contains(w.String(), `"jqq" is not in the binary registry`) && strings.Contains(w.Hint, `did you mean "jq"?`) {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no did-you-mean warning: %v", out.Warnings)
	}
}

// TestExplainShowsProviderLayers: explain lists the endpoints an attached
// provider profile grants, under its _provider_ key and with the profile's
// file and line, beside the agent's own grants; each layer endpoint
// cites its layer as policy test and compile do (profile.Layer.Cite).
func TestExplainShowsProviderLayers(t *testing.T) {
	out, _ := compileExample(t, "fullsend-providers")
	text := Explain(out.Agents["review"]).String() + Explain(out.Agents["scan"]).String()
	for _, want := range []string{
		"github.com:443  protocol rest, access read-only  [network_policies._provider_github_ro]\n" +
			"      in provider layer _provider_github_ro (provider github-ro, profile fullsend-github-ro from profiles/fullsend-github-ro.yaml:20:5)\n" +
			"      <- profiles/fullsend-github-ro.yaml:20:5 (provider profile fullsend-github-ro)",
		"[network_policies._provider_github]\n      in provider layer _provider_github (provider github, profile github from openshell:v0.0.111/providers/github.yaml endpoints[0]; built in: fullsend's catalog",
		"[network_policies.api_github_com_443]", // the agent's own grant stays
	} {
		if !strings.Contains(text, want) {
			t.Errorf("explain lacks %q:\n%s", want, text)
		}
	}
}
