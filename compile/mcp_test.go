package compile

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// TestMCPProject compiles testdata/mcp (Claude Code subagents with inline
// mcpServers, see its README) through CompileDir, which validates the
// policies, lints them and runs the *.policytest.yaml expectations: the
// listed GitHub MCP tools are allowed, an unlisted one is denied.
func TestMCPProject(t *testing.T) {
	for _, version := range []string{"v0.0.83", "v0.0.111"} {
		t.Run(version, func(t *testing.T) {
			out, err := CompileDir(context.Background(), filepath.Join("testdata", "mcp"), ProjectOptions{OpenShellVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(out.AgentNames(), ","); got != "any-tool,env-url,issue-reader,local-stdio" {
				t.Errorf("agents = %s", got)
			}
		})
	}
}

// mcpEndpointsOf returns the protocol mcp endpoints of a compiled policy
// with their binaries, by policy key.
func mcpEndpointsOf(c *Compiled) map[string]openshell.NetworkPolicy {
	out := map[string]openshell.NetworkPolicy{}
	for k, np := range c.Policy.NetworkPolicies {
		for _, ep := range np.Endpoints {
			if ep.Protocol == openshell.ProtocolMCP {
				out[k] = np
			}
		}
	}
	return out
}

// ruleText renders an MCP endpoint's rules as "method[ tool]" lines.
func ruleText(ep openshell.Endpoint) []string {
	var out []string
	for _, r := range ep.Rules {
		s := r.Allow.Method
		if t := r.Allow.Tool; t != nil {
			s += " " + t.Glob + strings.Join(t.Any, ",")
		}
		out = append(out, s)
	}
	return out
}

// TestMCPEndpoints: each remote MCP server a tool uses gets one protocol
// mcp endpoint on the url's host, port and path (sse: the whole host),
// allowing the handshake, tools/list and tools/call for exactly the listed
// tools, for the runtime's binary; a stdio server gets none; below
// FeatureProtocolJSONRPC nothing is emitted, with a warning.
func TestMCPEndpoints(t *testing.T) {
	proj, err := agentdef.Load(os.DirFS(filepath.Join("testdata", "mcp")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		agent, version string
		key            string // "" when no MCP endpoint is emitted
		host, path     string
		port           int
		rules          []string
		warn           string // substring of a warning at the agent's file
	}{
		{agent: "issue-reader", version: "v0.0.111", key: "api_githubcopilot_com_443_mcp", host: "api.githubcopilot.com", path: "/mcp/", port: 443,
			rules: []string{"initialize", "notifications/initialized", "tools/call get_issue,list_issues", "tools/list"}},
		{agent: "issue-reader", version: "v0.0.83", key: "api_githubcopilot_com_443_mcp", host: "api.githubcopilot.com", path: "/mcp/", port: 443,
			rules: []string{"initialize", "notifications/initialized", "tools/call get_issue,list_issues", "tools/list"}},
		{agent: "any-tool", version: "v0.0.111", key: "mcp_linear_app_443", host: "mcp.linear.app", port: 443,
			rules: []string{"initialize", "notifications/initialized", "tools/call", "tools/list"},
			warn:  `allows every tool of MCP server "linear"`},
		{agent: "any-tool", version: "v0.0.83", key: "mcp_linear_app_443", host: "mcp.linear.app", port: 443,
			rules: []string{"initialize", "notifications/initialized", "tools/call", "tools/list"},
			warn:  `reaches it from /usr/local/bin/claude only; an npm-installed claude runs as /usr/bin/node or /usr/local/bin/node and is denied`},
		{agent: "local-stdio", version: "v0.0.111", warn: `"search" is a stdio server`},
		{agent: "env-url", version: "v0.0.111", warn: "expanded from the environment at run time"},
		{agent: "issue-reader", version: "v0.0.71", warn: "cannot inspect MCP (protocol mcp arrived in v0.0.72)"},
	}
	for _, tc := range tests {
		t.Run(tc.agent+"@"+tc.version, func(t *testing.T) {
			out, err := Compile(context.Background(), proj, os.DirFS(filepath.Join("testdata", "mcp")), Options{OpenShellVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			c := out.Agents[tc.agent]
			if c == nil {
				t.Fatalf("agent %s not compiled", tc.agent)
			}
			eps := mcpEndpointsOf(c)
			if tc.key == "" {
				if len(eps) != 0 {
					t.Errorf("MCP endpoints %v, want none", slices.Collect(mapKeys(eps)))
				}
			} else {
				np, ok := eps[tc.key]
				if !ok || len(eps) != 1 {
					t.Fatalf("MCP endpoints %v, want only %s", slices.Collect(mapKeys(eps)), tc.key)
				}
				ep := np.Endpoints[0]
				if ep.Host != tc.host || ep.Path != tc.path || ep.Port != tc.port || ep.Enforcement != openshell.EnforcementEnforce || ep.Access != "" {
					t.Errorf("endpoint %s %s:%d enforcement %q access %q, want %s %s:%d enforce", ep.Host, ep.Path, ep.Port, ep.Enforcement, ep.Access, tc.host, tc.path, tc.port)
				}
				if got := ruleText(ep); !slices.Equal(got, tc.rules) {
					t.Errorf("rules %q, want %q", got, tc.rules)
				}
				// Named tools: every runtime binary (an npm-installed
				// Claude Code runs as node); every tool of the server: the
				// runtime's own executable only (FS016 refuses node there).
				var paths []string
				for _, b := range np.Binaries {
					paths = append(paths, b.Path)
				}
				want := []string{"/usr/local/bin/claude"}
				if !strings.Contains(strings.Join(tc.rules, " "), "tools/call *") && !slices.ContainsFunc(tc.rules, func(r string) bool { return r == "tools/call" }) {
					want = []string{"/usr/bin/node", "/usr/local/bin/claude", "/usr/local/bin/node"}
				}
				if !slices.Equal(paths, want) {
					t.Errorf("binaries %v, want %v", paths, want)
				}
			}
			if tc.warn != "" && !slices.ContainsFunc(out.Warnings, func(d agentdef.Diagnostic) bool {
				return strings.HasSuffix(d.Pos.File, tc.agent+".md") && strings.Contains(d.Message, tc.warn)
			}) {
				t.Errorf("no warning %q for %s in %v", tc.warn, tc.agent, out.Warnings)
			}
		})
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestMCPRuleMerge: two servers on one host and path keep their tools/call
// rules apart (mergeRules keys on the tool matcher).
func TestMCPRuleMerge(t *testing.T) {
	a := openshell.Rule{Allow: openshell.Match{Method: "tools/call", Tool: &openshell.QueryMatch{Glob: "a"}}}
	b := openshell.Rule{Allow: openshell.Match{Method: "tools/call", Tool: &openshell.QueryMatch{Glob: "b"}}}
	got := mergeRules([]contribution{{rules: []openshell.Rule{a}}, {rules: []openshell.Rule{b}}})
	if len(got) != 2 || got[0].Allow.Tool.Glob != "a" || got[1].Allow.Tool.Glob != "b" {
		t.Errorf("merged %d rules: %+v", len(got), got)
	}
}

// TestURLPort: the url's port, else the scheme's default.

// TestMCPSelfCheck: a policy that denies what a compiled MCP server use
// intends (here: no endpoint for it at all, as when a policy fragment's
// endpoint takes the path) is an error at the mcpServers entry.
func TestMCPSelfCheck(t *testing.T) {
	at := agentdef.Pos{File: "agents/a.md", Line: 7, Column: 5}
	b := newBuilder(nil, &agentdef.Agent{File: "agents/a.md"})
	b.mcpIntended = []mcpIntent{{
		use: &mcpUse{server: agentdef.MCPServerDecl{Name: "github", Pos: at, Host: "api.githubcopilot.com", Port: 443, Path: "/mcp/"}, tools: []string{"get_issue"}},
		bin: "/usr/local/bin/claude",
	}}
	b.checkMCPIntended(decider(&openshell.Policy{Version: 1}))
	errs := b.diags.Errors()
	if len(errs) != len(mcpClientMethods)+1 {
		t.Fatalf("%d errors, want %d: %v", len(errs), len(mcpClientMethods)+1, errs)
	}
	if errs[0].Pos != at || !strings.Contains(errs[len(errs)-1].Message, "tool get_issue") {
		t.Errorf("errors %v, want them at %v naming tool get_issue", errs, at)
	}
}
