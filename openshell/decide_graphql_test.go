package openshell

import "testing"

// graphQLPolicy follows OpenShell's own l7_endpoint_path_scopes_rest_and_graphql_on_same_host
// (crates/openshell-supervisor-network/src/opa.rs:2770 @ v0.0.83): REST
// rules and a graphql endpoint at /graphql on one host.
const graphQLPolicy = `version: 1
network_policies:
  gh_rest:
    name: gh-rest
    endpoints:
      - host: api.github.com
        port: 443
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: "/repos/acme/widgets/**"}
          - allow: {method: POST, path: "/**"}
    binaries: [{path: /usr/bin/gh}]
  gh_graphql:
    name: gh-graphql
    endpoints:
      - host: api.github.com
        path: /graphql
        port: 443
        protocol: graphql
        enforcement: enforce
        rules:
          - allow: {operation_type: query}
          - allow: {operation_type: mutation, fields: [addComment]}
        deny_rules:
          - {operation_type: mutation, fields: [deleteRepository]}
    binaries: [{path: /usr/bin/gh}]
`

func TestDecideGraphQL(t *testing.T) {
	p, err := Unmarshal([]byte(graphQLPolicy))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, req string
		allow     bool
	}{
		{"query allowed", "POST https://api.github.com/graphql graphql query/IssueByNumber:repository from /usr/bin/gh", true},
		{"listed mutation allowed", "POST https://api.github.com/graphql graphql mutation/CommentCreate:addComment from /usr/bin/gh", true},
		{"other mutation denied although a REST rule allows POST /**", "POST https://api.github.com/graphql graphql mutation/LabelAdd:addLabelsToLabelable from /usr/bin/gh", false},
		{"every root field must be allowed", "POST https://api.github.com/graphql graphql mutation:addComment,closeIssue from /usr/bin/gh", false},
		{"every operation must be allowed", "POST https://api.github.com/graphql graphql query:repository graphql mutation:updateIssue from /usr/bin/gh", false},
		{"deny rule wins", "POST https://api.github.com/graphql graphql mutation:deleteRepository from /usr/bin/gh", false},
		{"a body that is not GraphQL is rejected", "POST https://api.github.com/graphql from /usr/bin/gh", false},
		{"REST rules still decide other paths", "GET https://api.github.com/repos/acme/widgets/issues/5 from /usr/bin/gh", true},
		{"REST POST elsewhere", "POST https://api.github.com/repos/acme/widgets/issues/5/comments from /usr/bin/gh", true},
		{"other binaries get nothing", "POST https://api.github.com/graphql graphql query:repository from /usr/bin/curl", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseRequest(c.req)
			if err != nil {
				t.Fatal(err)
			}
			if d := Decide(p, r); d.Allowed != c.allow {
				t.Errorf("Decide(%s) = %v (%s), want allowed=%v", c.req, d.Allowed, d.Reason, c.allow)
			}
			back, err := ParseRequest(r.String())
			if err != nil || back.String() != r.String() {
				t.Errorf("round trip %q -> %q (%v)", r.String(), back, err)
			}
		})
	}
}

// TestEndpointPathRouting: an endpoint with a path selector applies only to
// requests under it (endpoint_path_matches, l7/mod.rs:283 @ v0.0.83).
func TestEndpointPathRouting(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"", "/x", true},
		{"**", "/x/y", true},
		{"/**", "/x/y", true},
		{"/graphql", "/graphql", true},
		{"/graphql", "/graphql/x", false},
		{"/repos/**", "/repos", true},
		{"/repos/**", "/repos/a/b", true},
		{"/repos/**", "/reposx", false},
		{"/v1/*", "/v1/a", true},
	} {
		if got := endpointPathMatches(c.pattern, c.path); got != c.want {
			t.Errorf("endpointPathMatches(%q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

func TestParseGraphQLClauseErrors(t *testing.T) {
	for _, s := range []string{
		"POST https://api.github.com/graphql graphql fetch:repository from /usr/bin/gh",
		"POST https://api.github.com/graphql graphql query:a,,b from /usr/bin/gh",
		"CONNECT api.github.com:443 graphql query from /usr/bin/gh",
	} {
		if _, err := ParseRequest(s); err == nil {
			t.Errorf("ParseRequest(%q) succeeded, want an error", s)
		}
	}
}
