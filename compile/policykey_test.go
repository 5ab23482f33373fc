package compile

import (
	"context"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

// TestPlaceholderHostsKeepDistinctPolicyKeys is the red-team finding "policies
// whose host is a placeholder collapse to the same key _443": the key of a
// placeholder host must come from the placeholder's name, so two placeholder
// endpoints get two stable keys that do not depend on what else the policy
// holds.
func TestPlaceholderHostsKeepDistinctPolicyKeys(t *testing.T) {
	a := agent("a", []agentdef.ToolRule{rule(t, "Bash(curl *)", 4)}, &agentdef.Sandbox{Endpoints: []agentdef.EndpointDecl{
		{Pos: pos(7), Host: "{{FORGE_HOST}}", Access: "read-only"},
		{Pos: pos(9), Host: "{{HOST_IP}}", Access: "read-only", AllowedIPs: []string{"{{HOST_IP}}"}},
		{Pos: pos(11), Host: "{{HOST_IP}}", Port: 8081, Access: "read-only", AllowedIPs: []string{"{{HOST_IP}}"}},
	}})
	c, err := compileOne(t, a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"forge_host_443": "{{FORGE_HOST}}", "host_ip_443": "{{HOST_IP}}", "host_ip_8081": "{{HOST_IP}}"}
	var keys []string
	for k, np := range c.Policy.NetworkPolicies {
		keys = append(keys, k)
		host, ok := want[k]
		if !ok {
			continue
		}
		if got := np.Endpoints[0].Host; got != host {
			t.Errorf("%s: host %q, want %q", k, got, host)
		}
		if np.Name != map[string]string{"forge_host_443": "forge-host-443", "host_ip_443": "host-ip-443", "host_ip_8081": "host-ip-8081"}[k] {
			t.Errorf("%s: name %q", k, np.Name)
		}
	}
	sort.Strings(keys)
	for k := range want {
		if _, ok := c.Policy.NetworkPolicies[k]; !ok {
			t.Errorf("no network policy %q; keys: %v", k, keys)
		}
	}
	// Stable: the key does not depend on the other endpoints.
	b := agent("a", []agentdef.ToolRule{rule(t, "Bash(curl *)", 4)}, &agentdef.Sandbox{Endpoints: []agentdef.EndpointDecl{
		{Pos: pos(9), Host: "{{HOST_IP}}", Access: "read-only", AllowedIPs: []string{"{{HOST_IP}}"}},
	}})
	out, err := Compile(context.Background(), project(b), fstest.MapFS{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.Agents["a"].Policy.NetworkPolicies["host_ip_443"]; !ok {
		t.Errorf("alone, {{HOST_IP}}:443 is not host_ip_443: %v", out.Agents["a"].Policy.PolicyKeys())
	}
}

func TestPolicyKey(t *testing.T) {
	for _, tc := range []struct {
		host string
		port int
		want string
	}{
		{"api.github.com", 443, "api_github_com_443"},
		{"*.googleapis.com", 443, "wildcard_googleapis_com_443"},
		{"host.docker.internal", 8081, "host_docker_internal_8081"},
		{"{{FORGE_HOST}}", 443, "forge_host_443"},
		{"{{HOST_IP}}", 8081, "host_ip_8081"},
		{"provider.example.com", 443, "provider_example_com_443"},
	} {
		if got := policyKey(endpointKey{host: tc.host, port: tc.port}); got != tc.want {
			t.Errorf("policyKey(%s:%d) = %q, want %q", tc.host, tc.port, got, tc.want)
		}
	}
}

// TestCollidingHostsKeepStableKeys: two hosts that sanitize to one key get
// keys that do not depend on how many other endpoints the policy has.
func TestCollidingHostsKeepStableKeys(t *testing.T) {
	keysOf := func(extra ...agentdef.EndpointDecl) []string {
		eps := append([]agentdef.EndpointDecl{
			{Pos: pos(7), Host: "a-b.example.com", Access: "read-only"},
			{Pos: pos(8), Host: "a.b.example.com", Access: "read-only"},
		}, extra...)
		c, err := compileOne(t, agent("a", []agentdef.ToolRule{rule(t, "Bash(curl *)", 4)}, &agentdef.Sandbox{Endpoints: eps}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for k, np := range c.Policy.NetworkPolicies {
			if h := np.Endpoints[0].Host; h == "a-b.example.com" || h == "a.b.example.com" {
				out = append(out, h+"="+k)
			}
		}
		sort.Strings(out)
		return out
	}
	alone := keysOf()
	if len(alone) != 2 || alone[0] != "a-b.example.com=a_b_example_com_443" {
		t.Fatalf("keys %v", alone)
	}
	more := keysOf(agentdef.EndpointDecl{Pos: pos(9), Host: "0.example.com", Access: "read-only"},
		agentdef.EndpointDecl{Pos: pos(10), Host: "1.example.com", Access: "read-only"})
	if strings.Join(alone, " ") != strings.Join(more, " ") {
		t.Errorf("keys changed with other endpoints: %v, then %v", alone, more)
	}
}
