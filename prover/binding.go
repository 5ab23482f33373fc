package prover

import (
	"sort"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// ProviderLayer is one provider attached to a sandbox, as the credential
// model needs it: its name, the network_policies key of the layer
// OpenShell composed for it (`_provider_<name>`), and whether it holds a
// credential (the job gives it one, or its profile declares credentials or
// signs requests: has_credentialed_endpoints, profiles.rs:670-676 @
// v0.0.111).
type ProviderLayer struct {
	Name         string
	Key          string
	Credentialed bool
}

// ForProviders returns the set plus the credentials the gateway puts in
// scope for the attached providers before it runs the prover: one per
// provider whose layer has endpoints, targeting the lower-cased hosts of
// those endpoints, whether or not the provider holds a secret
// (build_credential_set_for_sandbox_with_catalog, crates/openshell-server/
// src/grpc/policy.rs:524-589 @ v0.0.111; build_credential_set_for_sandbox,
// policy.rs:520-585 @ v0.0.83).
func (cs Credentials) ForProviders(p *openshell.Policy, layers []ProviderLayer) Credentials {
	out := append(Credentials(nil), cs...)
	for _, l := range layers {
		var hosts []string
		for _, ep := range p.NetworkPolicies[l.Key].Endpoints {
			if h := strings.ToLower(ep.Host); h != "" {
				hosts = append(hosts, h)
			}
		}
		if len(hosts) > 0 {
			out = append(out, Credential{Name: l.Name, Type: "provider", TargetHosts: hosts})
		}
	}
	return out
}

// Bound is one endpoint a provider's static credential is resolved at:
// the sandbox proxy substitutes the real secret for its placeholder in a
// request to this host, port and path.
type Bound struct {
	Host string
	Port int
	Path string
}

// String renders the binding as host:port and the path when one is set.
func (b Bound) String() string {
	s := b.Host + ":" + strconv.Itoa(b.Port)
	if b.Path != "" {
		s += " path " + b.Path
	}
	return s
}

// BoundEndpoints returns, for each credentialed provider of layers, the
// endpoints where OpenShell at version resolves its credential, sorted.
//
//   - From v0.0.103 (commit 0120535ef, "bind static credentials to provider
//     endpoints"; providers-v2.mdx:68-75 @ v0.0.111) every credential of a
//     provider is bound to every endpoint of its profile, each port of each
//     endpoint with its path (resolve_provider_environment_from_records_
//     with_policy_bindings_and_credentials, crates/openshell-server/src/
//     grpc/provider.rs:1099-1131,1184-1196 @ v0.0.111). An endpointless
//     profile is bound instead to the sandbox policy's endpoints whose
//     credential_binding names the provider (policy_static_credential_
//     endpoint_bindings, grpc/policy.rs:1166-1231; provider.rs:1123-1125).
//   - Before v0.0.103 no binding exists: the proxy resolves every
//     placeholder it finds in any request it admits, whatever the host
//     (SecretResolver::rewrite_header_value, openshell-core/src/secrets.rs:
//     262-300 @ v0.0.102, called for each L7 request at
//     openshell-supervisor-network/src/l7/rest.rs:680 @ v0.0.102), so the
//     credential reaches every endpoint of the effective policy.
func BoundEndpoints(p *openshell.Policy, layers []ProviderLayer, version string) map[string][]Bound {
	out := map[string][]Bound{}
	for _, l := range layers {
		if !l.Credentialed {
			continue
		}
		var eps []openshell.Endpoint
		switch {
		case !openshell.Supports(openshell.FeatureCredentialBinding, version):
			eps = allEndpoints(p)
		case len(p.NetworkPolicies[l.Key].Endpoints) > 0:
			eps = p.NetworkPolicies[l.Key].Endpoints
		default:
			eps = policyBound(p, l.Name)
		}
		out[l.Name] = bounds(eps)
	}
	return out
}

// allEndpoints is every endpoint of every network policy of p.
func allEndpoints(p *openshell.Policy) []openshell.Endpoint {
	var out []openshell.Endpoint
	for _, k := range p.PolicyKeys() {
		out = append(out, p.NetworkPolicies[k].Endpoints...)
	}
	return out
}

// policyBound is the endpoints of p whose credential_binding names the
// provider.
func policyBound(p *openshell.Policy, provider string) []openshell.Endpoint {
	var out []openshell.Endpoint
	for _, ep := range allEndpoints(p) {
		if ep.CredentialBinding != nil && ep.CredentialBinding.Provider == provider {
			out = append(out, ep)
		}
	}
	return out
}

// bounds expands endpoints to one binding per port (endpoint_ports,
// provider.rs:1104-1111 @ v0.0.111), hosts lower-cased as the proxy
// compares them, sorted and without duplicates.
func bounds(eps []openshell.Endpoint) []Bound {
	seen := map[Bound]bool{}
	var out []Bound
	for _, ep := range eps {
		ports := ep.Ports
		if len(ports) == 0 {
			ports = []int{ep.Port}
		}
		for _, port := range ports {
			b := Bound{Host: strings.ToLower(strings.TrimSuffix(ep.Host, ".")), Port: port, Path: ep.Path}
			if b.Host != "" && !seen[b] {
				seen[b] = true
				out = append(out, b)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
