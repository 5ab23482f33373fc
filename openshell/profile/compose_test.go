package profile

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
)

func mustProfile(t *testing.T, doc string) *Profile {
	t.Helper()
	p, diags := Decode("p.yaml", []byte(doc), "")
	if p == nil || openshell.HasErrors(diags) {
		t.Fatalf("decode: %v", diags)
	}
	return p
}

func readAgents(name string) ([]byte, error) {
	return os.ReadFile(path.Join("testdata/agents", name))
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

// TestAgentsPolicyTests runs the policy tests of fullsend-ai/agents' review
// and code agents (testdata/agents/*.policytest.yaml) on policies/base.yaml
// composed with their profiles, the way `fullsend policy test` does.
func TestAgentsPolicyTests(t *testing.T) {
	raw, err := os.ReadFile("testdata/agents/policies/base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base, err := openshell.Unmarshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(base.NetworkPolicies) != 0 {
		t.Fatal("base.yaml is expected network-less")
	}
	policies := map[string]*openshell.Policy{"review": base, "code": base}
	for _, v := range openshell.SupportedVersions() {
		t.Run(v, func(t *testing.T) {
			compose := func(ef *decide.ExpectFile, p *openshell.Policy) (*openshell.Policy, error) {
				var att []Attachment
				for _, ref := range ef.Providers {
					a, err := Resolve(ref, readAgents, v)
					if err != nil {
						return nil, err
					}
					att = append(att, a)
				}
				c := Compose(p, att, Gateway{ProvidersV2Enabled: true})
				if err := openshell.DiagnosticsError(CheckComposed(c, v)); err != nil {
					return nil, err
				}
				return c.Policy, nil
			}
			rep, err := decide.RunExpectationsCompose(os.DirFS("testdata/agents"),
				[]string{"review.policytest.yaml", "code.policytest.yaml"}, policies, nil, v, compose)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Files != 2 || len(rep.Results) < 20 {
				t.Fatalf("ran %d files, %d cases", rep.Files, len(rep.Results))
			}
			for _, r := range rep.Results {
				if !r.Pass {
					t.Errorf("%s:%d %s: %s: expected %s, got %s: %s %s", r.File, r.Line, r.Agent, r.Name, r.Expect, r.Decision.Verdict(), r.Decision.Reason, r.Problem)
				}
				if r.Expect == "allow" && !IsProviderRuleName(r.Decision.Policy) {
					t.Errorf("%s: allowed by %q, not by a provider layer", r.Name, r.Decision.Policy)
				}
			}
			// Without the gate nothing is composed: base.yaml allows nothing.
			off := func(ef *decide.ExpectFile, p *openshell.Policy) (*openshell.Policy, error) {
				return Compose(p, nil, Gateway{}).Policy, nil
			}
			rep, err = decide.RunExpectationsCompose(os.DirFS("testdata/agents"), []string{"review.policytest.yaml"}, policies, nil, v, off)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				if r.Decision.Allowed {
					t.Errorf("%s allowed with providers_v2_enabled off", r.Name)
				}
			}
		})
	}
}

// TestExpectationsNeedComposer: a test file naming providers: fails closed
// without a composer.
func TestExpectationsNeedComposer(t *testing.T) {
	_, err := decide.RunExpectationsVersion(os.DirFS("testdata/agents"), []string{"review.policytest.yaml"},
		map[string]*openshell.Policy{"review": {Version: 1}}, nil, "v0.0.111")
	if !errors.Is(err, decide.ErrExpectFile) || !strings.Contains(err.Error(), "providers:") {
		t.Errorf("err = %v", err)
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
	// The built-in aws-s3 of v0.0.111 cannot be attached: its composed
	// endpoints are ambiguous (see TestBuiltinTraps).
	s3, err := Resolve("aws-s3", nil, "v0.0.111")
	if err != nil {
		t.Fatal(err)
	}
	c := Compose(&openshell.Policy{Version: 1}, []Attachment{s3}, Gateway{ProvidersV2Enabled: true})
	var errs []openshell.Diagnostic
	for _, d := range CheckComposed(c, "v0.0.111") {
		if d.Severity == openshell.SeverityError {
			errs = append(errs, d)
		}
	}
	if len(errs) != 1 || errs[0].Code != validate.CodeAmbiguousEndpoints || !strings.HasSuffix(errs[0].File, "aws-s3.yaml") || errs[0].Line != 92 {
		t.Errorf("aws-s3 composed: %v", errs)
	}
}

// TestCheckComposedPolicyAgainstLayer: an ambiguity between the policy's
// own endpoint and a layer's fails the attachment, reported at the
// profile's endpoint.
func TestCheckComposedPolicyAgainstLayer(t *testing.T) {
	base, err := openshell.Unmarshal([]byte(`version: 1
network_policies:
  gh:
    name: gh
    endpoints:
      - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce, access: read-only, allow_encoded_slash: true}
    binaries: [{path: /usr/bin/gh}]
`))
	if err != nil {
		t.Fatal(err)
	}
	ro, err := Resolve("profiles/fullsend-github-ro.yaml", readAgents, "v0.0.111")
	if err != nil {
		t.Fatal(err)
	}
	c := Compose(base, []Attachment{ro}, Gateway{ProvidersV2Enabled: true})
	var errs []openshell.Diagnostic
	for _, d := range CheckComposed(c, "v0.0.111") {
		if d.Severity == openshell.SeverityError {
			errs = append(errs, d)
		}
	}
	if len(errs) != 1 || errs[0].Code != validate.CodeAmbiguousEndpoints || errs[0].File != "profiles/fullsend-github-ro.yaml" || errs[0].Line != 9 {
		t.Errorf("got %v", errs)
	}
	// At v0.0.83 the gateway has no ambiguity check (v0.0.97 on).
	if diags := CheckComposed(Compose(base, []Attachment{ro}, Gateway{ProvidersV2Enabled: true}), "v0.0.83"); openshell.HasErrors(diags) {
		t.Errorf("v0.0.83: %v", diags)
	}
}

// FuzzCompose: whatever profile decodes composes, checks and decides
// without panicking, and never changes the base policy's own keys.
func FuzzCompose(f *testing.F) {
	for _, g := range []string{"builtin/v0.0.111/*.yaml", "testdata/agents/profiles/*.yaml"} {
		files, _ := filepath.Glob(g)
		for _, file := range files {
			b, _ := os.ReadFile(file)
			f.Add(b, "p")
		}
	}
	f.Add([]byte("id: gh\ndisplay_name: G\nendpoints: [{host: api.github.com, port: 443, protocol: mcp, rules: [{allow: {tool: x}}]}]\n"), "gh")
	base, err := openshell.Unmarshal([]byte("version: 1\nnetwork_policies:\n  _provider_p: {name: own, endpoints: [{host: a.example.com, port: 443}], binaries: [{path: /usr/bin/a}]}\n"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, provider string) {
		p, diags := Decode("f.yaml", data, "v0.0.111")
		if p == nil || openshell.HasErrors(diags) {
			return
		}
		c := Compose(base, []Attachment{{Provider: provider, Profile: p}, {Provider: provider, Profile: p}}, Gateway{ProvidersV2Enabled: true})
		if c.Policy.NetworkPolicies["_provider_p"].Name != "own" || len(c.Layers) != 2 || c.Layers[0].Key == c.Layers[1].Key {
			t.Fatalf("layers %+v", c.Layers)
		}
		_ = CheckComposed(c, "v0.0.111")
		if d, err := decide.New(c.Policy, "v0.0.111"); err == nil {
			r, err := decide.ParseRequest("GET https://api.github.com/x from /usr/bin/gh")
			if err == nil {
				_ = d.Decide(r)
			}
		}
	})
}
