package compile

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// TestProviderBaselines: each model provider's baseline allows the calls
// its runtime's client makes (policycue/schema/catalog/profiles.cue cites
// the vendor document or SDK source for each) and nothing beside them on
// the same host: no batch API, no unused endpoint family, no STS, no
// control plane, no other region.
func TestProviderBaselines(t *testing.T) {
	const (
		claude   = " from /usr/local/bin/claude"
		node     = " from /usr/bin/node"
		opencode = " from /usr/local/bin/opencode"
		bedrock  = "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
	)
	tests := []struct {
		name     string
		format   agentdef.Format
		provider string
		allow    []string
		deny     []string
	}{{
		name: "claude anthropic", format: agentdef.FormatClaude, provider: "anthropic",
		allow: []string{
			"POST https://api.anthropic.com/v1/messages?beta=true" + node,
			"POST https://api.anthropic.com/v1/messages" + claude,
			"POST https://api.anthropic.com/v1/messages/count_tokens?beta=true" + node,
			// WebFetch's domain check (profile claude-webfetch-preflight).
			"GET https://api.anthropic.com/api/web/domain_info?domain=docs.python.org" + node,
		},
		deny: []string{
			"POST https://api.anthropic.com/v1/messages/batches" + node,
			"POST https://api.anthropic.com/v1/messages/batches/msgbatch_1/cancel" + node,
			"POST https://api.anthropic.com/v1/files" + node,
			"GET https://api.anthropic.com/v1/models" + node,
			"POST https://api.anthropic.com/api/web/domain_info?domain=x" + node,
			"POST https://statsig.anthropic.com/v1/rgstr" + node,
		},
	}, {
		name: "claude bedrock", format: agentdef.FormatClaude, provider: "bedrock",
		allow: []string{
			"POST " + bedrock + "us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream" + node,
			// @anthropic-ai/bedrock-sdk percent-encodes the model id.
			"POST " + bedrock + "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke" + claude,
		},
		deny: []string{
			"POST " + bedrock + "us.anthropic.claude-sonnet-4-5-20250929-v1:0/converse" + node,
			"POST " + bedrock + "us.anthropic.claude-sonnet-4-5-20250929-v1:0/count-tokens" + node,
			"POST https://bedrock-runtime.eu-west-1.amazonaws.com/model/x/invoke" + node,
			"GET https://bedrock.us-east-1.amazonaws.com/inference-profiles" + node,
			"POST https://sts.us-east-1.amazonaws.com/" + node,
			"POST https://sts.amazonaws.com/" + node,
			"POST https://api.anthropic.com/v1/messages" + node,
			"GET https://api.anthropic.com/api/web/domain_info?domain=x" + node,
		},
	}, {
		name: "opencode anthropic", format: agentdef.FormatOpenCode, provider: "anthropic",
		allow: []string{"POST https://api.anthropic.com/v1/messages" + opencode},
		deny: []string{
			"POST https://api.anthropic.com/v1/messages/batches" + opencode,
			"GET https://api.anthropic.com/api/web/domain_info?domain=x" + opencode,
		},
	}, {
		name: "opencode openai", format: agentdef.FormatOpenCode, provider: "openai",
		allow: []string{"POST https://api.openai.com/v1/responses" + opencode},
		deny: []string{
			"POST https://api.openai.com/v1/chat/completions" + opencode,
			"POST https://api.openai.com/v1/files" + opencode,
			"GET https://api.openai.com/v1/responses/resp_1" + opencode,
		},
	}, {
		name: "opencode amazon-bedrock", format: agentdef.FormatOpenCode, provider: "amazon-bedrock",
		allow: []string{
			"POST " + bedrock + "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream" + opencode,
			"POST " + bedrock + "us.anthropic.claude-sonnet-4-5-20250929-v1:0/converse" + opencode,
		},
		deny: []string{
			"POST " + bedrock + "us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke" + opencode,
			"POST https://sts.us-east-1.amazonaws.com/" + opencode,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := agent("a", []agentdef.ToolRule{rule(t, "Read", 4)}, &agentdef.Sandbox{Provider: tc.provider})
			a.Format = tc.format
			c, err := compileOne(t, a, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Provider != tc.provider {
				t.Fatalf("provider = %s, want %s", c.Provider, tc.provider)
			}
			for _, req := range tc.allow {
				if d := decideOn(t, c, req); !d.Allowed {
					t.Errorf("%s denied: %s", req, d.Reason)
				}
			}
			for _, req := range tc.deny {
				if d := decideOn(t, c, req); d.Allowed {
					t.Errorf("%s allowed", req)
				}
			}
		})
	}
}

// TestProviderIntendedRequestsGuard: the intended requests of the provider
// profiles are what the self-check runs; a catalog glob narrowed below
// them fails the compile, positioned at the agent.
func TestProviderIntendedRequestsGuard(t *testing.T) {
	cat, err := policycue.LoadCatalog(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	prof := cat.Profiles["bedrock"]
	prof.Endpoints[0].Rules[1].Path = "/model/anthropic.*/invoke-with-response-stream"
	cat.Profiles["bedrock"] = prof
	a := agent("a", []agentdef.ToolRule{rule(t, "Read", 4)}, &agentdef.Sandbox{Provider: "bedrock"})
	_, err = compileOne(t, a, Options{Catalog: cat})
	if err == nil || !strings.Contains(err.Error(), "profile bedrock intends") {
		t.Fatalf("err = %v, want the bedrock self-check error", err)
	}
}

// TestUnknownProvider: a provider named by the runtime's own model id that
// the catalog has no baseline for (OpenCode's github-copilot, opencode Zen;
// devalexanderdaza/opencode-dev-environment's debug.md, lorenzorasmussen/
// opencode's code-reviewer.md) compiles with a warning and no model API;
// fullsend's own sandbox.provider naming an unknown provider stays an
// error (a typo).
func TestUnknownProvider(t *testing.T) {
	tests := []struct {
		name, file, fm string
		err            bool
		msg            string
	}{
		{"opencode github-copilot", ".opencode/agent/debug.md", "description: d\nmodel: github-copilot/claude-opus-4.6\npermission: {\"*\": deny, read: allow}\n",
			false, `runtime opencode has no model provider "github-copilot" in the catalog: the policy grants no model API`},
		{"opencode zen", ".opencode/agent/review.md", "description: d\nmodel: opencode/code-supernova\npermission: {\"*\": deny, read: allow}\n",
			false, `runtime opencode has no model provider "opencode" in the catalog`},
		{"sandbox.provider typo", "agents/a.md", "name: a\ndescription: d\ntools: Read\nsandbox:\n  provider: antropic\n",
			true, `runtime claude has no model provider "antropic"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeMapFS(t, fstest.MapFS{tc.file: {Data: []byte("---\n" + tc.fm + "---\nbody\n")}})
			out, err := CompileDir(context.Background(), dir, ProjectOptions{})
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("err = %v, want %q", err, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, w := range out.Warnings {
				found = found || (w.Field == "model" && strings.Contains(w.Message, tc.msg))
			}
			if !found {
				t.Errorf("no model warning %q among %v", tc.msg, out.Warnings)
			}
			for _, c := range out.Agents {
				for key := range c.Policy.NetworkPolicies {
					t.Errorf("%s: network policy %s, want none (no provider baseline, no tools that reach the network)", c.Agent.Name, key)
				}
			}
		})
	}
}
