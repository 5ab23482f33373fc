package compile

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

func pos(line int) agentdef.Pos { return agentdef.Pos{File: "agents/a.md", Line: line, Column: 1} }

func rule(t *testing.T, raw string, line int) agentdef.ToolRule {
	t.Helper()
	r, err := agentdef.ParseToolRule(raw, pos(line))
	if err != nil {
		t.Fatalf("ParseToolRule(%q): %v", raw, err)
	}
	return r
}

func agent(name string, tools []agentdef.ToolRule, sb *agentdef.Sandbox) *agentdef.Agent {
	return &agentdef.Agent{Name: name, NamePos: pos(2), File: "agents/a.md", Format: agentdef.FormatClaude, Description: "d", Tools: tools, Sandbox: sb}
}

func project(agents ...*agentdef.Agent) *agentdef.Project {
	return &agentdef.Project{Agents: agents, Skills: map[string]*agentdef.Skill{}, Files: map[string]string{"agents/a.md": strings.Repeat("0", 64)}}
}

func compileOne(t *testing.T, a *agentdef.Agent, opts Options) (*Compiled, error) {
	t.Helper()
	out, err := Compile(context.Background(), project(a), fstest.MapFS{}, opts)
	if err != nil {
		return nil, err
	}
	return out.Agents[a.Name], nil
}

func TestCompileSemantics(t *testing.T) {
	tests := []struct {
		name    string
		tools   []string
		sandbox *agentdef.Sandbox
		wantErr []string
		check   func(t *testing.T, c *Compiled)
	}{
		{
			name:  "read-only tools give the read-only tier and the model API only",
			tools: []string{"Read", "Grep", "Bash(grep *)", "Bash(cat *)"},
			check: func(t *testing.T, c *Compiled) {
				if c.Tier != policycue.TierReadOnly {
					t.Errorf("tier = %s", c.Tier)
				}
				if len(c.Policy.NetworkPolicies) != 1 {
					t.Errorf("network policies = %v, want only the model API", c.Policy.PolicyKeys())
				}
				if c.Policy.FilesystemPolicy.IncludeWorkdir {
					t.Error("read-only agent got a writable workdir")
				}
			},
		},
		{
			name:  "gh implies forge reads scoped to the repository",
			tools: []string{"Bash(gh,jq)"},
			check: func(t *testing.T, c *Compiled) {
				np, ok := c.Policy.NetworkPolicies["api_github_com_443"]
				if !ok {
					t.Fatalf("no api.github.com policy: %v", c.Policy.PolicyKeys())
				}
				for _, r := range np.Endpoints[0].Rules {
					if r.Allow.Method != "GET" {
						t.Errorf("gh implied a write: %+v", r.Allow)
					}
				}
				if np.Binaries[0].Path != "/usr/bin/gh" || len(np.Binaries[0].From) == 0 {
					t.Errorf("binaries = %+v", np.Binaries)
				}
				if c.Tier != policycue.TierNetwork {
					t.Errorf("tier = %s", c.Tier)
				}
				if strings.Join(c.Placeholders, ",") != "OWNER,REPO_NAME" {
					t.Errorf("placeholders = %v", c.Placeholders)
				}
			},
		},
		{
			name:  "WebFetch domain is read-only and reached by the runtime",
			tools: []string{"WebFetch(domain:docs.github.com)"},
			check: func(t *testing.T, c *Compiled) {
				ep := c.Policy.NetworkPolicies["docs_github_com_443"].Endpoints[0]
				if ep.Access != openshell.AccessReadOnly || ep.Protocol != "rest" || ep.Enforcement != "enforce" {
					t.Errorf("endpoint = %+v", ep)
				}
			},
		},
		{
			name:    "tier cap is an error at the offending line",
			tools:   []string{"Bash(curl *)"},
			sandbox: &agentdef.Sandbox{Tier: "network", TierPos: pos(9), Endpoints: []agentdef.EndpointDecl{{Pos: pos(11), Host: "api.example.com", Rules: []agentdef.RuleDecl{{Pos: pos(12), Method: "POST", Path: "/x"}}}}},
			wantErr: []string{"agents/a.md:12:1", "needs tier full, above the agent's declared tier network"},
		},
		{
			name:    "declared endpoint without a network tool",
			tools:   []string{"Read"},
			sandbox: &agentdef.Sandbox{Endpoints: []agentdef.EndpointDecl{{Pos: pos(7), Host: "api.example.com", Access: "read-only"}}},
			wantErr: []string{"agents/a.md:7:1", "no tool of the agent can open connections"},
		},
		{
			name:  "conflicting protocols on one host:port",
			tools: []string{"Bash(curl *)"},
			sandbox: &agentdef.Sandbox{Endpoints: []agentdef.EndpointDecl{
				{Pos: pos(7), Host: "api.example.com", Protocol: "rest", Access: "read-only"},
				{Pos: pos(9), Host: "api.example.com", Protocol: "graphql", Access: "read-only"},
			}},
			wantErr: []string{"agents/a.md:9:1", "conflicts with"},
		},
		{
			name:  "presets and rules on one endpoint merge into rules",
			tools: []string{"Bash(curl *)"},
			sandbox: &agentdef.Sandbox{Endpoints: []agentdef.EndpointDecl{
				{Pos: pos(7), Host: "api.example.com", Access: "read-only"},
				{Pos: pos(9), Host: "api.example.com", Rules: []agentdef.RuleDecl{{Pos: pos(10), Method: "POST", Path: "/v1/items"}}},
			}},
			check: func(t *testing.T, c *Compiled) {
				ep := c.Policy.NetworkPolicies["api_example_com_443"].Endpoints[0]
				if ep.Access != "" || len(ep.Rules) != 4 {
					t.Fatalf("endpoint = %+v", ep)
				}
				if c.Tier != policycue.TierFull {
					t.Errorf("tier = %s", c.Tier)
				}
			},
		},
		{
			name:    "unknown profile",
			tools:   []string{"Bash(curl *)"},
			sandbox: &agentdef.Sandbox{Profiles: []agentdef.NameRef{{Name: "forge-wirte", Pos: pos(8)}}},
			wantErr: []string{"agents/a.md:8:1", `unknown profile "forge-wirte"`},
		},
		{
			name:    "read-write path needs the full tier",
			tools:   []string{"Read"},
			sandbox: &agentdef.Sandbox{Tier: "read-only", TierPos: pos(5), ReadWrite: []agentdef.PathDecl{{Path: "/opt/out", Pos: pos(6)}}},
			wantErr: []string{"agents/a.md:6:1", "read_write /opt/out needs tier full"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tools []agentdef.ToolRule
			for i, raw := range tt.tools {
				tools = append(tools, rule(t, raw, 4+i))
			}
			c, err := compileOne(t, agent("a", tools, tt.sandbox), Options{})
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatal("want error, got none")
				}
				if !errors.Is(err, ErrCompile) {
					t.Errorf("error is not ErrCompile: %v", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error does not mention %q:\n%v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
			for path, srcs := range c.Policy.Provenance() {
				if len(srcs) == 0 {
					t.Errorf("%s has no provenance", path)
				}
			}
		})
	}
}

func TestCompileSetValues(t *testing.T) {
	a := agent("a", []agentdef.ToolRule{rule(t, "Bash(gh)", 4)}, nil)
	v, err := placeholder.ParseSet([]string{"OWNER=o", "REPO_NAME=r"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := compileOne(t, a, Options{Values: v})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Placeholders) != 0 {
		t.Errorf("open placeholders = %v", c.Placeholders)
	}
	for _, r := range c.Policy.NetworkPolicies["api_github_com_443"].Endpoints[0].Rules {
		if strings.Contains(r.Allow.Path, "{{") {
			t.Errorf("unsubstituted path %q", r.Allow.Path)
		}
	}
}

func TestCompileDeterministic(t *testing.T) {
	mk := func() *agentdef.Agent {
		return agent("a", []agentdef.ToolRule{rule(t, "Bash(gh,curl,git)", 4), rule(t, "WebFetch(domain:docs.github.com)", 5)},
			&agentdef.Sandbox{Profiles: []agentdef.NameRef{{Name: "package-registries", Pos: pos(8)}}})
	}
	var first map[string][]byte
	for i := 0; i < 5; i++ {
		out, err := Compile(context.Background(), project(mk()), fstest.MapFS{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = out.Files
			continue
		}
		for name, data := range out.Files {
			if string(data) != string(first[name]) {
				t.Fatalf("run %d: %s differs", i, name)
			}
		}
	}
}

// TestPolicyFragment merges an experiment-0005-style OpenShell policy
// fragment named in sandbox:, resolved next to the agent or from the root.
func TestPolicyFragment(t *testing.T) {
	frag := []byte(`version: 1
network_policies:
  forge:
    name: forge
    endpoints:
      - host: host.docker.internal
        port: 8081
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: "/repos/{{OWNER}}/{{REPO_NAME}}/issues/**"}
        allowed_ips: ["{{HOST_IP}}"]
    binaries:
      - path: /usr/bin/curl
`)
	for _, tt := range []struct{ name, file, ref string }{
		{"root relative", "policies/triage.yaml", "policies/triage.yaml"},
		{"file relative", "agents/frag.yaml", "frag.yaml"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := agent("a", []agentdef.ToolRule{rule(t, "Bash(curl *)", 4)}, &agentdef.Sandbox{PolicyFile: tt.ref, PolicyFilePos: pos(6)})
			fsys := fstest.MapFS{tt.file: {Data: frag}}
			out, err := Compile(context.Background(), project(a), fsys, Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := out.Agents["a"]
			np, ok := c.Policy.NetworkPolicies["host_docker_internal_8081"]
			if !ok {
				t.Fatalf("fragment not merged: %v", c.Policy.PolicyKeys())
			}
			if got := np.Endpoints[0].From[0].File; got != tt.file {
				t.Errorf("provenance file = %q, want %q", got, tt.file)
			}
			if !slices.Contains(out.Manifest.Agents["a"].Sources, bundle.SourceFile{Path: tt.file, SHA256: bundle.SHA256Hex(frag)}) {
				t.Errorf("fragment missing from manifest sources: %+v", out.Manifest.Agents["a"].Sources)
			}
		})
	}
	a := agent("a", []agentdef.ToolRule{rule(t, "Bash(curl *)", 4)}, &agentdef.Sandbox{PolicyFile: "../outside.yaml", PolicyFilePos: pos(6)})
	if _, err := Compile(context.Background(), project(a), fstest.MapFS{}, Options{}); err == nil || !strings.Contains(err.Error(), "leaves the project") {
		t.Fatalf("fragment outside the project: err = %v", err)
	}
}
