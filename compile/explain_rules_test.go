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
