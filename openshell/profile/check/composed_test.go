package check

import (
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
)

// TestAgentsPolicyTests runs the policy tests of fullsend-ai/agents' review
// and code agents (the fixture's *.policytest.yaml) on policies/base.yaml
// composed with their profiles (both read from ../shared/fixtures), the way
// `fullsend policy test` does.
func TestAgentsPolicyTests(t *testing.T) {
	readAgents := readAgents(t)
	raw, err := readAgents("policies/base.yaml")
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
				var att []profile.Attachment
				for _, ref := range ef.Providers {
					a, err := profile.Resolve(ref, readAgents, v)
					if err != nil {
						return nil, err
					}
					att = append(att, a)
				}
				c := profile.Compose(p, att, profile.Gateway{ProvidersV2Enabled: true})
				if err := openshell.DiagnosticsError(Composed(c, v)); err != nil {
					return nil, err
				}
				return c.Policy, nil
			}
			rep, err := decide.RunExpectationsCompose(fixture.FS(t, agentsFixture),
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
				if r.Expect == "allow" && !profile.IsProviderRuleName(r.Decision.Policy) {
					t.Errorf("%s: allowed by %q, not by a provider layer", r.Name, r.Decision.Policy)
				}
			}
			// Without the gate nothing is composed: base.yaml allows nothing.
			off := func(ef *decide.ExpectFile, p *openshell.Policy) (*openshell.Policy, error) {
				return profile.Compose(p, nil, profile.Gateway{}).Policy, nil
			}
			rep, err = decide.RunExpectationsCompose(fixture.FS(t, agentsFixture), []string{"review.policytest.yaml"}, policies, nil, v, off)
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
	_, err := decide.RunExpectationsVersion(fixture.FS(t, agentsFixture), []string{"review.policytest.yaml"},
		map[string]*openshell.Policy{"review": {Version: 1}}, nil, "v0.0.111")
	if !errors.Is(err, decide.ErrExpectFile) || !strings.Contains(err.Error(), "providers:") {
		t.Errorf("err = %v", err)
	}
}

// TestComposedBuiltinAWSS3: the built-in aws-s3 of v0.0.111 cannot be
// attached: its composed endpoints are ambiguous (see TestBuiltinTraps).
func TestComposedBuiltinAWSS3(t *testing.T) {
	s3, err := profile.Resolve("aws-s3", nil, "v0.0.111")
	if err != nil {
		t.Fatal(err)
	}
	c := profile.Compose(&openshell.Policy{Version: 1}, []profile.Attachment{s3}, profile.Gateway{ProvidersV2Enabled: true})
	var errs []openshell.Diagnostic
	for _, d := range Composed(c, "v0.0.111") {
		if d.Severity == openshell.SeverityError {
			errs = append(errs, d)
		}
	}
	if len(errs) != 1 || errs[0].Code != validate.CodeAmbiguousEndpoints || errs[0].File != "openshell:v0.0.111/providers/aws-s3.yaml" || errs[0].Path != "endpoints[3]" {
		t.Errorf("aws-s3 composed: %v", errs)
	}
}

// TestComposedPolicyAgainstLayer: an ambiguity between the policy's
// own endpoint and a layer's fails the attachment, reported at the
// profile's endpoint.
func TestComposedPolicyAgainstLayer(t *testing.T) {
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
	ro, err := profile.Resolve("profiles/fullsend-github-ro.yaml", readAgents(t), "v0.0.111")
	if err != nil {
		t.Fatal(err)
	}
	c := profile.Compose(base, []profile.Attachment{ro}, profile.Gateway{ProvidersV2Enabled: true})
	var errs []openshell.Diagnostic
	for _, d := range Composed(c, "v0.0.111") {
		if d.Severity == openshell.SeverityError {
			errs = append(errs, d)
		}
	}
	if len(errs) != 1 || errs[0].Code != validate.CodeAmbiguousEndpoints || errs[0].File != "profiles/fullsend-github-ro.yaml" || errs[0].Line != 9 {
		t.Errorf("got %v", errs)
	}
	// At v0.0.83 the gateway has no ambiguity check (v0.0.97 on).
	if diags := Composed(profile.Compose(base, []profile.Attachment{ro}, profile.Gateway{ProvidersV2Enabled: true}), "v0.0.83"); openshell.HasErrors(diags) {
		t.Errorf("v0.0.83: %v", diags)
	}
}

// FuzzCompose: whatever profile decodes composes, checks and decides
// without panicking, and never changes the base policy's own keys.
func FuzzCompose(f *testing.F) {
	for _, b := range fuzzSeeds(upstreamProfiles+"v0.0.111", agentsFixture+"/profiles") {
		f.Add(b, "p")
	}
	f.Add([]byte("id: gh\ndisplay_name: G\nendpoints: [{host: api.github.com, port: 443, protocol: mcp, rules: [{allow: {tool: x}}]}]\n"), "gh")
	base, err := openshell.Unmarshal([]byte("version: 1\nnetwork_policies:\n  _provider_p: {name: own, endpoints: [{host: a.example.com, port: 443}], binaries: [{path: /usr/bin/a}]}\n"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, provider string) {
		p, diags := profile.Decode("f.yaml", data, "v0.0.111")
		if p == nil || openshell.HasErrors(diags) {
			return
		}
		c := profile.Compose(base, []profile.Attachment{{Provider: provider, Profile: p}, {Provider: provider, Profile: p}}, profile.Gateway{ProvidersV2Enabled: true})
		if c.Policy.NetworkPolicies["_provider_p"].Name != "own" || len(c.Layers) != 2 || c.Layers[0].Key == c.Layers[1].Key {
			t.Fatalf("layers %+v", c.Layers)
		}
		_ = Composed(c, "v0.0.111")
		if d, err := decide.New(c.Policy, "v0.0.111"); err == nil {
			r, err := decide.ParseRequest("GET https://api.github.com/x from /usr/bin/gh")
			if err == nil {
				_ = d.Decide(r)
			}
		}
	})
}
