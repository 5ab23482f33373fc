package profile

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

func mustProfile(t *testing.T, doc string) *Profile {
	t.Helper()
	p, diags := Decode("p.yaml", []byte(doc), "")
	if p == nil || openshell.HasErrors(diags) {
		t.Fatalf("decode: %v", diags)
	}
	return p
}

// TestCompose pins compose.rs's rules (compose.rs:58-90 @ v0.0.111):
// keys, collisions, the gate, and the source left untouched.
func TestCompose(t *testing.T) {
	base := &openshell.Policy{Version: 1, Process: &openshell.Process{RunAsUser: "sandbox", RunAsGroup: "sandbox"},
		NetworkPolicies: map[string]openshell.NetworkPolicy{
			"_provider_work_github": {Name: "user-authored", Endpoints: []openshell.Endpoint{{Host: "a.example.com", Port: 443}}},
		}}
	gh := mustProfile(t, "id: work-github\ndisplay_name: W\nendpoints: [{host: github.com, port: 443}]\nbinaries: [/usr/bin/git]\n")
	other := mustProfile(t, "id: other\ndisplay_name: O\nendpoints: [{host: github.example.com, ports: [443]}]\n")
	tests := []struct {
		name     string
		attached []Attachment
		gw       Gateway
		keys     []string
		skipped  bool
	}{
		{"gate off composes nothing", []Attachment{{Profile: gh}}, Gateway{}, []string{"_provider_work_github"}, true},
		{"global policy composes nothing", []Attachment{{Profile: gh}}, Gateway{ProvidersV2Enabled: true, GlobalPolicy: true}, []string{"_provider_work_github"}, true},
		{"no provider", nil, Gateway{ProvidersV2Enabled: true}, []string{"_provider_work_github"}, true},
		{"collision with the source and between layers: suffixes _2, _3",
			[]Attachment{{Provider: "work-github", Profile: gh}, {Provider: "Work GitHub!", Profile: other}},
			Gateway{ProvidersV2Enabled: true}, []string{"_provider_work_github", "_provider_work_github_2", "_provider_work_github_3"}, false},
		{"provider name names the layer", []Attachment{{Provider: "ci", Profile: other}}, Gateway{ProvidersV2Enabled: true},
			[]string{"_provider_ci", "_provider_work_github"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Compose(base, tc.attached, tc.gw)
			if got := c.Policy.PolicyKeys(); !slices.Equal(got, tc.keys) {
				t.Errorf("keys %v, want %v", got, tc.keys)
			}
			if (c.Skipped != "") != tc.skipped {
				t.Errorf("skipped %q", c.Skipped)
			}
			if len(base.NetworkPolicies) != 1 || base.NetworkPolicies["_provider_work_github"].Name != "user-authored" {
				t.Error("the source policy was modified")
			}
			if c.Policy.NetworkPolicies["_provider_work_github"].Name != "user-authored" {
				t.Error("an existing key was overwritten")
			}
			if c.Policy.Process == nil || c.Policy.Process.RunAsUser != "sandbox" {
				t.Error("static sections not kept")
			}
			for _, l := range c.Layers {
				np := c.Policy.NetworkPolicies[l.Key]
				if np.Name != ProviderRuleName(l.Provider) {
					t.Errorf("layer %s named %q, want the rule name %q", l.Key, np.Name, ProviderRuleName(l.Provider))
				}
			}
		})
	}
}

// TestLowerEndpoint: a profile endpoint becomes what the gateway's proto
// renders (lib.rs:864-947 @ v0.0.111).
func TestLowerEndpoint(t *testing.T) {
	p := mustProfile(t, `id: x
display_name: X
endpoints:
  - {host: a.example.com, ports: [8443]}
  - {host: b.example.com, ports: [80, 443], protocol: json-rpc, json_rpc_max_body_bytes: 9, rules: [{allow: {method: "*"}}]}
  - host: m.example.com
    port: 443
    protocol: mcp
    json_rpc_max_body_bytes: 7
    mcp: {allow_all_known_mcp_methods: true}
    rules:
      - allow: {method: tools/call, tool: read_*}
      - allow: {method: "*"}
      - {}
binaries: [/usr/bin/a, {path: /usr/bin/b, harness: true}]
`)
	np := p.NetworkPolicy("_provider_x")
	e := np.Endpoints
	if e[0].Port != 8443 || e[0].Ports != nil {
		t.Errorf("one port of ports: %+v", e[0])
	}
	if !slices.Equal(e[1].Ports, []int{80, 443}) || e[1].JSONRPC == nil || e[1].JSONRPC.MaxBodyBytes != 9 {
		t.Errorf("json-rpc: %+v", e[1])
	}
	m := e[2]
	if m.MCP == nil || m.MCP.MaxBodyBytes != 7 || m.JSONRPC != nil {
		t.Errorf("mcp stanza: %+v", m.MCP)
	}
	if r := m.Rules[0].Allow; r.Tool == nil || r.Tool.Glob != "read_*" || r.Method != "" || r.Params != nil {
		t.Errorf("tool rule: %+v (yaml_mcp_method drops tools/call under allow_all)", r)
	}
	if r := m.Rules[1].Allow; r.Method != "" {
		t.Errorf("method * without tool becomes empty, got %q", r.Method)
	}
	if len(m.Rules) != 3 {
		t.Errorf("an allow-less rule is kept as an empty allow")
	}
	if len(np.Binaries) != 2 || np.Binaries[1].Harness || np.Binaries[1].Path != "/usr/bin/b" {
		t.Errorf("binaries %+v", np.Binaries)
	}
	if src := e[2].From; len(src) != 1 || src[0].File != "p.yaml" || src[0].Line != 6 {
		t.Errorf("provenance %+v", src)
	}
}

func TestResolve(t *testing.T) {
	read := func(string) ([]byte, error) { return []byte("id: github\ndisplay_name: Mine\n"), nil }
	if _, err := Resolve("mine=profiles/github.yaml", read, "v0.0.111"); !errors.Is(err, ErrInvalidProfile) || !strings.Contains(err.Error(), "profiles/github.yaml:1:5") {
		t.Errorf("a copy reusing a built-in id: %v", err)
	}
	a, err := Resolve("work=github", nil, "v0.0.111")
	if err != nil || a.Provider != "work" || a.Profile.ID != "github" || !a.Profile.Builtin {
		t.Fatalf("built-in: %+v %v", a, err)
	}
	if _, err := Resolve("aws-s3", nil, "v0.0.83"); err == nil {
		t.Error("aws-s3 is no built-in at v0.0.83")
	}
}
