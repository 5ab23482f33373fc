package compile

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// decideOn runs the decision engine on a compiled policy with values for
// every placeholder the catalog uses.
func decideOn(t *testing.T, c *Compiled, req string) decide.Decision {
	t.Helper()
	return decideWith(t, c, req, map[string]string{"OWNER": "acme", "REPO_NAME": "widgets", "ISSUE_NUMBER": "5", "GCP_PROJECT": "acme-ci", "GCP_REGION": "us-east5", "AWS_REGION": "us-east-1"})
}

// decideWith runs the decision engine on a copy of a compiled policy with
// the placeholder values v applied.
func decideWith(t *testing.T, c *Compiled, req string, v map[string]string) decide.Decision {
	t.Helper()
	p := c.Policy.Clone()
	if _, err := openshell.ApplyPlaceholders(p, v); err != nil {
		t.Fatal(err)
	}
	r, err := decide.ParseRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	return decide.Decide(p, r)
}

// TestGhReadsGetGraphQLQueries: Bash(gh) grants the REST reads and a
// read-only GraphQL grant on a path-routed graphql endpoint, without
// raising the tier above network. gh issue view/list, gh pr list and gh
// label list are GraphQL queries (cli/cli api/queries_issue.go,
// api/queries_pr.go, api/queries_label.go).
func TestGhReadsGetGraphQLQueries(t *testing.T) {
	for _, version := range []string{"v0.0.83", "v0.0.111"} {
		t.Run(version, func(t *testing.T) {
			out, err := Compile(t.Context(), project(agent("a", []agentdef.ToolRule{rule(t, "Bash(gh issue view *)", 4), rule(t, "Bash(gh label list *)", 5)}, nil)), nil, Options{OpenShellVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			c := out.Agents["a"]
			if c.Tier != policycue.TierNetwork {
				t.Errorf("tier = %s, want network: a read-only GraphQL grant must not force full", c.Tier)
			}
			np, ok := c.Policy.NetworkPolicies["api_github_com_443_graphql"]
			if !ok || np.Endpoints[0].Path != "/graphql" || np.Endpoints[0].Protocol != openshell.ProtocolGraphQL {
				t.Fatalf("graphql endpoint = %+v", np)
			}
			for _, tc := range []struct {
				req   string
				allow bool
			}{
				{"POST https://api.github.com/graphql graphql query:IssueByNumber:repository from /usr/bin/gh", true},
				{"POST https://api.github.com/graphql graphql query:PullRequestList:repository from /usr/bin/gh", true},
				{"POST https://api.github.com/graphql graphql mutation:CommentCreate:addComment from /usr/bin/gh", false},
				{"GET https://api.github.com/repos/acme/widgets/issues/5 from /usr/bin/gh", true},
				{"POST https://api.github.com/repos/acme/widgets/issues/5/comments from /usr/bin/gh", false},
			} {
				if d := decideOn(t, c, tc.req); d.Allowed != tc.allow {
					t.Errorf("%s: allowed=%v (%s), want %v", tc.req, d.Allowed, d.Reason, tc.allow)
				}
			}
		})
	}
}

// TestGraphQLGatedBelowV0037: before v0.0.37 OpenShell has no protocol
// graphql nor endpoint path routing; the grant is left out with a warning
// saying what the agent gets instead.
func TestGraphQLGatedBelowV0037(t *testing.T) {
	out, err := Compile(t.Context(), project(agent("a", []agentdef.ToolRule{rule(t, "Bash(gh)", 4)}, nil)), nil, Options{OpenShellVersion: "v0.0.30"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.Agents["a"].Policy.NetworkPolicies["api_github_com_443_graphql"]; ok {
		t.Error("graphql endpoint emitted for v0.0.30")
	}
	var found bool
	for _, w := range out.Warnings {
		if strings.Contains(w.Message, "cannot inspect GraphQL") && strings.Contains(w.Message, "REST rules only") {
			found = true
		}
	}
	if !found {
		t.Errorf("no GraphQL gate warning in %v", out.Warnings)
	}
}

// TestGhWritesMapToMutations: the forge-write profile adds exactly the
// mutations gh uses for comments and labels, and they raise the tier.
func TestGhWritesMapToMutations(t *testing.T) {
	c, err := compileOne(t, agent("a", []agentdef.ToolRule{rule(t, "Bash(gh)", 4)}, &agentdef.Sandbox{Profiles: []agentdef.NameRef{{Name: "forge-write", Pos: pos(6)}}}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Tier != policycue.TierFull {
		t.Errorf("tier = %s, want full", c.Tier)
	}
	for _, tc := range []struct {
		req   string
		allow bool
	}{
		{"POST https://api.github.com/graphql graphql mutation:CommentCreate:addComment from /usr/bin/gh", true},
		{"POST https://api.github.com/graphql graphql mutation:LabelAdd:addLabelsToLabelable from /usr/bin/gh", true},
		{"POST https://api.github.com/graphql graphql mutation:IssueUpdate:updateIssue from /usr/bin/gh", false},
		{"POST https://api.github.com/graphql graphql mutation:PullRequestCreate:createPullRequest from /usr/bin/gh", false},
	} {
		if d := decideOn(t, c, tc.req); d.Allowed != tc.allow {
			t.Errorf("%s: allowed=%v (%s), want %v", tc.req, d.Allowed, d.Reason, tc.allow)
		}
	}
}

// TestGitReadWithoutDotGit: actions/checkout sets remotes without .git.
func TestGitReadWithoutDotGit(t *testing.T) {
	c, err := compileOne(t, agent("a", []agentdef.ToolRule{rule(t, "Bash(git fetch *)", 4)}, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []string{
		"GET https://github.com/acme/widgets.git/info/refs?service=git-upload-pack from /usr/bin/git",
		"POST https://github.com/acme/widgets.git/git-upload-pack from /usr/lib/git-core/git-remote-https",
		"GET https://github.com/acme/widgets/info/refs?service=git-upload-pack from /usr/bin/git",
		"POST https://github.com/acme/widgets/git-upload-pack from /usr/lib/git-core/git-remote-https",
	} {
		if d := decideOn(t, c, req); !d.Allowed {
			t.Errorf("%s denied: %s", req, d.Reason)
		}
	}
	if d := decideOn(t, c, "POST https://github.com/acme/widgets/git-receive-pack from /usr/bin/git"); d.Allowed {
		t.Error("push allowed")
	}
	if c.Tier != policycue.TierNetwork {
		t.Errorf("tier = %s", c.Tier)
	}
}

// TestVertexBaseline: the project and region are pinned by typed
// placeholders, the regional host and the workload identity federation
// hosts are reached, and the model id selects the provider.
func TestVertexBaseline(t *testing.T) {
	a := agent("a", []agentdef.ToolRule{rule(t, "Read", 4)}, nil)
	a.Model = "claude-sonnet-4-6@default"
	c, err := compileOne(t, a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider != "vertex" || c.Tier != policycue.TierReadOnly {
		t.Fatalf("provider %s tier %s", c.Provider, c.Tier)
	}
	for _, tc := range []struct {
		req   string
		allow bool
	}{
		{"POST https://us-east5-aiplatform.googleapis.com/v1/projects/acme-ci/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-6@default:streamRawPredict from /usr/local/bin/claude", true},
		{"POST https://us-east5-aiplatform.googleapis.com/v1/projects/attacker-1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-6@default:streamRawPredict from /usr/local/bin/claude", false},
		{"POST https://europe-west1-aiplatform.googleapis.com/v1/projects/acme-ci/locations/europe-west1/publishers/anthropic/models/x:rawPredict from /usr/local/bin/claude", false},
		{"POST https://sts.googleapis.com/v1/token from /usr/bin/node", true},
		{"POST https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/ci@acme-ci.iam.gserviceaccount.com:generateAccessToken from /usr/bin/node", true},
		{"POST https://oauth2.googleapis.com/token from /usr/bin/node", true},
		{"GET https://storage.googleapis.com/b/x from /usr/bin/node", false},
	} {
		if d := decideOn(t, c, tc.req); d.Allowed != tc.allow {
			t.Errorf("%s: allowed=%v (%s), want %v", tc.req, d.Allowed, d.Reason, tc.allow)
		}
	}
}

// TestDeclaredRegionalHostKeepsTier: declaring the regional Vertex host by
// hand is the agent's own model API: no tier raise, the runtime's binaries.
func TestDeclaredRegionalHostKeepsTier(t *testing.T) {
	sb := &agentdef.Sandbox{Provider: "vertex", Endpoints: []agentdef.EndpointDecl{{
		Pos: pos(8), Host: "us-east5-aiplatform.googleapis.com",
		Rules: []agentdef.RuleDecl{{Pos: pos(9), Method: "POST", Path: "/v1/projects/acme-ci/locations/us-east5/publishers/anthropic/models/*"}},
	}}}
	c, err := compileOne(t, agent("a", []agentdef.ToolRule{rule(t, "Read", 4)}, sb), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Tier != policycue.TierReadOnly {
		t.Errorf("tier = %s, want read-only", c.Tier)
	}
	if d := decideOn(t, c, "POST https://us-east5-aiplatform.googleapis.com/v1/projects/acme-ci/locations/us-east5/publishers/anthropic/models/m:rawPredict from /usr/local/bin/claude"); !d.Allowed {
		t.Errorf("declared regional host denied: %s", d.Reason)
	}
}

func TestInferProvider(t *testing.T) {
	for model, want := range map[string]string{
		"claude-sonnet-4-6@default":                                              "vertex",
		"claude-sonnet-4@20250514":                                               "vertex",
		"anthropic.claude-sonnet-4-5-20250929-v1:0":                              "bedrock",
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0":                           "bedrock",
		"global.anthropic.claude-sonnet-4-5-20250929-v1:0":                       "bedrock",
		"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/x": "bedrock",
		"claude-sonnet-4-6":                                                      "",
		"sonnet":                                                                 "",
		"opus":                                                                   "",
	} {
		if got := inferProvider(model); got != want {
			t.Errorf("inferProvider(%q) = %q, want %q", model, got, want)
		}
	}
}

// TestBedrockBaseline: a Bedrock model id selects the bedrock profile,
// pinned to {{AWS_REGION}}.
func TestBedrockBaseline(t *testing.T) {
	a := agent("a", []agentdef.ToolRule{rule(t, "Read", 4)}, nil)
	a.Model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	c, err := compileOne(t, a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider != "bedrock" {
		t.Fatalf("provider = %s", c.Provider)
	}
	if d := decideOn(t, c, "POST https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream from /usr/local/bin/claude"); !d.Allowed {
		t.Errorf("bedrock denied: %s", d.Reason)
	}
}

func TestSamplers(t *testing.T) {
	for in, want := range map[string]string{
		"/repos/o/r":            "/repos/o/r",
		"/repos/o/r/**":         "/repos/o/r/a/b.c",
		"/repos/*/issues":       "/repos/x.y/issues",
		"/files/**.json":        "/files/a/b.c.json",
		"/a/**/b":               "/a/a/b.c/b",
		"**":                    "/a/b.c",
		"/v1/models/*:generate": "/v1/models/x.y:generate",
	} {
		if got := samplePath(in); got != want {
			t.Errorf("samplePath(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"repo:o/r *":  "repo:o/r foo.bar",
		"repo:o/r **": "repo:o/r foo.bar",
		"exact":       "exact",
	} {
		if got := sampleQuery(in); got != want {
			t.Errorf("sampleQuery(%q) = %q, want %q", in, got, want)
		}
	}
}
