package profile

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// TestNoProfileFailsClosed: a provider whose type has no profile is refused,
// naming the provider and OpenShell's skip (grpc/policy.rs:2284-2296 @
// v0.0.111), where OpenShell would compose without its layer.
func TestNoProfileFailsClosed(t *testing.T) {
	tests := []struct {
		name, ref, version, provider string
	}{
		{"unknown id", "work=no-such", "v0.0.111", "provider work"},
		{"unnamed provider", "no-such", "v0.0.111", "provider no-such"},
		{"id newer than the release", "s3=aws-s3", "v0.0.83", "provider s3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Resolve(tt.ref, nil, tt.version)
			if !errors.Is(err, ErrNoProfile) || !strings.Contains(err.Error(), tt.provider+":") ||
				!strings.Contains(err.Error(), "grpc/policy.rs:2284-2296 @ v0.0.111") {
				t.Errorf("err = %v", err)
			}
		})
	}
}

func resolveAll(t *testing.T, version string, refs ...string) []Attachment {
	t.Helper()
	var out []Attachment
	for _, r := range refs {
		a, err := Resolve(r, nil, version)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// TestComposeScopes: the credentialed scopes and endpointless providers the
// gateway gathers (grpc/policy.rs:2298-2315 @ v0.0.111), whatever the gate,
// extended from the policy's credential_binding entries that name an
// endpointless provider (:2339-2358, :1166-1223).
func TestComposeScopes(t *testing.T) {
	bound, err := openshell.Unmarshal([]byte(`version: 1
network_policies:
  s3:
    name: s3
    endpoints:
      - {host: Data.Example.COM, ports: [443, 8443], protocol: rest, credential_binding: {provider: cloud}}
      - {host: api.github.com, port: 443, protocol: rest, credential_binding: {provider: github}}
    binaries: [{path: /usr/bin/aws}]
`))
	if err != nil {
		t.Fatal(err)
	}
	gh := []Scope{{Host: "api.github.com", Ports: []int{443}, Provider: "github"}, {Host: "github.com", Ports: []int{443}, Provider: "github"}}
	tests := []struct {
		name         string
		base         *openshell.Policy
		refs         []string
		gw           Gateway
		scopes       []Scope
		endpointless []string
	}{
		{"credentialed profile, duplicates once", nil, []string{"github"}, Gateway{ProvidersV2Enabled: true}, gh, nil},
		{"gate off: still gathered", nil, []string{"github"}, Gateway{}, gh, nil},
		{"no credentials: no scope", nil, []string{"pypi"}, Gateway{ProvidersV2Enabled: true}, nil, nil},
		{"endpointless", nil, []string{"aws"}, Gateway{ProvidersV2Enabled: true}, nil, []string{"aws"}},
		{"binding of an endpointless provider", bound, []string{"cloud=aws", "github"}, Gateway{ProvidersV2Enabled: true},
			append(gh[:2:2], Scope{Host: "data.example.com", Ports: []int{443}, Provider: "cloud"}, Scope{Host: "data.example.com", Ports: []int{8443}, Provider: "cloud"}),
			[]string{"cloud"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compose(tt.base, resolveAll(t, "v0.0.111", tt.refs...), tt.gw)
			if !reflect.DeepEqual(c.Scopes, tt.scopes) || !reflect.DeepEqual(c.Endpointless, tt.endpointless) {
				t.Errorf("scopes %+v endpointless %v\nwant %+v %v", c.Scopes, c.Endpointless, tt.scopes, tt.endpointless)
			}
		})
	}
}

// TestComposeKeepsReservedKeys: compose_effective_policy keeps a source key
// with the reserved prefix and suffixes the layer (compose.rs:58-90 @
// v0.0.111). OpenShell refuses such a user policy before composing
// (validate_no_reserved_provider_policy_keys, grpc/validation.rs:857-870,
// at sandbox create sandbox.rs:279 and policy set policy.rs:3096), which
// `policy validate` reports as OSP020; a sandbox's own sync is stripped
// instead (strip_provider_rule_names, compose.rs:43-49; policy.rs:3089).
func TestComposeKeepsReservedKeys(t *testing.T) {
	base, err := openshell.Unmarshal([]byte("version: 1\nnetwork_policies:\n  _provider_github: {name: mine, endpoints: [{host: a.example.com, port: 443}], binaries: [{path: /usr/bin/a}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := Compose(base, resolveAll(t, "v0.0.111", "github"), Gateway{ProvidersV2Enabled: true})
	if c.Policy.NetworkPolicies["_provider_github"].Name != "mine" || len(c.Layers) != 1 || c.Layers[0].Key != "_provider_github_2" {
		t.Errorf("layers %+v", c.Layers)
	}
}
