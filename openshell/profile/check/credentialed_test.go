package check

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
)

func policyOf(t *testing.T, doc string) *openshell.Policy {
	t.Helper()
	p, err := openshell.Unmarshal([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func attach(t *testing.T, version string, refs ...string) []profile.Attachment {
	t.Helper()
	var out []profile.Attachment
	for _, r := range refs {
		a, err := profile.Resolve(r, nil, version)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

const ownEndpoints = `version: 1
network_policies:
  own:
    name: own
    endpoints:
      - {host: api.github.com, port: 443}
      - {host: "*.github.com", port: 443, protocol: rest, access: read-only, enforcement: enforce}
      - {host: api.github.com, port: 8443}
      - {host: example.com, port: 443}
    binaries: [{path: /usr/bin/curl}]
`

// TestStamped: which endpoints the gateway stamps provider_credentialed
// (grpc/policy.rs:2360-2391 @ v0.0.111): the policy's own and the layers',
// by host pattern overlap and ports, from v0.0.110 only.
func TestStamped(t *testing.T) {
	tests := []struct {
		name, version string
		refs          []string
		gw            profile.Gateway
		want          []string
	}{
		{"github at v0.0.111", "v0.0.111", []string{"github"}, profile.Gateway{ProvidersV2Enabled: true},
			[]string{"_provider_github[0]", "_provider_github[1]", "_provider_github[2]", "own[0]", "own[1]"}},
		{"gate off: the policy's own still stamped", "v0.0.111", []string{"github"}, profile.Gateway{}, []string{"own[0]", "own[1]"}},
		{"before v0.0.110: no mark", "v0.0.83", []string{"github"}, profile.Gateway{ProvidersV2Enabled: true}, nil},
		{"no credentials: no mark", "v0.0.111", []string{"pypi"}, profile.Gateway{ProvidersV2Enabled: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := profile.Compose(policyOf(t, ownEndpoints), attach(t, tt.version, tt.refs...), tt.gw)
			var got []string
			for _, s := range Stamped(c, tt.version) {
				got = append(got, fmt.Sprintf("%s[%d]", s.Key, s.Index))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("stamped %v, want %v", got, tt.want)
			}
		})
	}
}

// TestUninspectedStamped: a stamped endpoint that would carry credentials
// uninspected is refused from v0.0.110 (grpc/policy.rs:2407-2468, 1594-1613
// @ v0.0.111), also when it is the policy's own or another layer's.
func TestUninspectedStamped(t *testing.T) {
	tests := []struct {
		name, version, base string
		refs                []string
		gw                  profile.Gateway
		want                []string
	}{
		{"pypi's L4 GitHub hosts beside github", "v0.0.111", "version: 1\n", []string{"pypi", "github"}, profile.Gateway{ProvidersV2Enabled: true},
			[]string{"openshell:v0.0.111/providers/pypi.yaml endpoints[2]", "openshell:v0.0.111/providers/pypi.yaml endpoints[4]"}},
		{"the same at v0.0.83", "v0.0.83", "version: 1\n", []string{"pypi", "github"}, profile.Gateway{ProvidersV2Enabled: true}, nil},
		{"the policy's own L4 endpoint, gate off", "v0.0.111", ownEndpoints, []string{"github"}, profile.Gateway{},
			[]string{" network_policies.own.endpoints[0]"}},
		{"opted out", "v0.0.111", "version: 1\nnetwork_policies:\n  own: {name: own, endpoints: [{host: api.github.com, port: 443, allow_uninspected_credentials: true}], binaries: [{path: /usr/bin/curl}]}\n",
			[]string{"github"}, profile.Gateway{}, nil},
		{"tls skip", "v0.0.111", "version: 1\nnetwork_policies:\n  own: {name: own, endpoints: [{host: api.github.com, port: 443, protocol: rest, tls: skip, access: full}], binaries: [{path: /usr/bin/curl}]}\n",
			[]string{"github"}, profile.Gateway{}, []string{" network_policies.own.endpoints[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := profile.Compose(policyOf(t, tt.base), attach(t, tt.version, tt.refs...), tt.gw)
			var got []string
			for _, d := range Composed(c, tt.version) {
				if d.Code == profile.CodeUninspected && d.Severity == openshell.SeverityError {
					got = append(got, d.File+" "+d.Path)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("refused %q, want %q", got, tt.want)
			}
		})
	}
}

// TestReservedKeyRefused: a user policy with a _provider_ key is refused
// before composition (validate_no_reserved_provider_policy_keys,
// grpc/validation.rs:857-870 @ v0.0.111): policy validation says OSP020.
func TestReservedKeyRefused(t *testing.T) {
	p := policyOf(t, "version: 1\nnetwork_policies:\n  _provider_x: {name: x, endpoints: [{host: a.example.com, port: 443}], binaries: [{path: /usr/bin/a}]}\n")
	for _, d := range validate.Policy(p, "v0.0.111") {
		if d.Code == validate.CodeReservedKey && d.Severity == openshell.SeverityError {
			return
		}
	}
	t.Error("no OSP020")
}
