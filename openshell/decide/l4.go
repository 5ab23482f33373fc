package decide

import (
	"slices"
	"strings"
	"unicode"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// This file is the L4 half of a decision: which network policies' endpoints
// match a connection's host and port, and whose binaries match its process
// (sandbox-policy.rego's endpoint_allowed and binary_allowed). The
// credential guard that runs after the destination check is here too.

// matched is one endpoint of a network policy whose binaries match.
type matched struct {
	key string
	i   int
	ep  *openshell.Endpoint
}

// matchPolicies returns the endpoints (host and port matching) of the
// network policies whose binaries match, in policy name order, and whether
// any endpoint matched host and port at all.
func (d *Decider) matchPolicies(host string, r *Request) ([]matched, bool) {
	var out []matched
	hostMatched := false
	for _, key := range d.keys {
		np := d.p.NetworkPolicies[key]
		start := len(out)
		for i := range np.Endpoints {
			ep := &d.p.NetworkPolicies[key].Endpoints[i]
			if d.endpointMatches(ep, host, r.Port) {
				out = append(out, matched{key: key, i: i, ep: ep})
			}
		}
		if len(out) == start {
			continue
		}
		hostMatched = true
		if !d.relaxed && !d.binaryMatches(np.Binaries, r.Binaries()) {
			out = out[:start]
		}
	}
	return out, hostMatched
}

func firstExtended(ms []matched) *matched {
	for i := range ms {
		ep := ms[i].ep
		if openshell.IsL7(ep) || len(ep.AllowedIPs) > 0 || ep.TLS != "" {
			return &ms[i]
		}
	}
	return nil
}

// endpointHasPort: Rego sees only "ports", which is ports when the
// endpoint lists any and [port] otherwise (proto_to_opa_data_json,
// opa.rs:1239-1246 @ v0.0.83, :1834-1840 @ v0.0.111): a port written
// beside ports is ignored.
func endpointHasPort(ep *openshell.Endpoint, port int) bool {
	if len(ep.Ports) > 0 {
		return slices.Contains(ep.Ports, port)
	}
	return ep.Port > 0 && ep.Port == port
}

// endpointMatches is endpoint_allowed (sandbox-policy.rego:108-137): exact
// host case-insensitively, a '*' host as glob.match(lower(host), ["."], ...),
// or a hostless endpoint with allowed_ips on any host; and the port.
func (d *Decider) endpointMatches(ep *openshell.Endpoint, host string, port int) bool {
	if !endpointHasPort(ep, port) {
		return false
	}
	switch {
	case ep.Host == "":
		return len(ep.AllowedIPs) > 0
	case !strings.Contains(ep.Host, "*"):
		return strings.EqualFold(ep.Host, host)
	}
	lower := ep.Host
	if strings.ContainsFunc(lower, unicode.IsUpper) {
		lower = strings.ToLower(lower)
	}
	return d.globs.match(false, lower, host)
}

// binaryMatches is binary_allowed (sandbox-policy.rego:147-176): an exact
// path equal to the process or an ancestor, or a '*' path as
// glob.match(path, ["/"], ...) against them. The process path is the
// kernel-resolved /proc/<pid>/exe (the SYMLINK HINT of sandbox-policy.rego:
// 50): a request's "from" must name the symlink's target, and a policy that
// lists a symlink matches only if OpenShell could resolve it in the
// container, which policy test cannot see; exact policy paths compare as
// written. cmdline paths (argv[0]) never grant access (:164).
func (d *Decider) binaryMatches(bins []openshell.Binary, chain []string) bool {
	for _, b := range bins {
		glob := strings.Contains(b.Path, "*")
		for _, exe := range chain {
			if (!glob && b.Path == exe) || (glob && d.globs.match(true, b.Path, exe)) {
				return true
			}
		}
	}
	return false
}

// credentialGuard refuses a tunnel that would carry provider credentials
// uninspected (v0.0.110 on, with allow_uninspected_credentials; proxy.rs:2024
// @ v0.0.111, after the destination check). The guard gathers every
// endpoint of the matching policies that matches host and port
// (endpoint_credential_guards, sandbox-policy.rego:956-967 @ v0.0.111) and
// keeps the credentialed ones (query_endpoint_credential_guard,
// proxy.rs:3530-3575): with any, the tunnel is refused unless all of them
// opt in with allow_uninspected_credentials, or all of them name a
// protocol and none has tls: skip (EndpointCredentialGuard::blocks_connect,
// l7/mod.rs:347-353). has_l7_protocol is "protocol is present" in the Rego
// input, which omits an empty one (opa.rs:1845 @ v0.0.111): protocol: tcp
// counts.
func (d *Decider) credentialGuard(ms []matched, r *Request) (Decision, bool) {
	if len(r.Credentialed) == 0 || !openshell.Supports(openshell.FeatureUninspectedCreds, d.version) {
		return Decision{}, true
	}
	g := gatherCredentialed(ms, r.Credentialed)
	if !g.blocks() {
		return Decision{}, true
	}
	return Decision{Policy: g.first.key, Path: epPath(g.first.key, g.first.i),
		Reason: "credentialed endpoint requires L7 inspection; raw tunnel is not explicitly allowed (an L4 or tls: skip endpoint without allow_uninspected_credentials, proxy.rs:2024)"}, false
}

// credentialedEndpoints is what the credential guard gathers from the
// credentialed endpoints: the first of them (nil: none), and whether all
// opt in, all name a protocol, and any has tls: skip.
type credentialedEndpoints struct {
	first              *matched
	allOptIn, allProto bool
	skip               bool
}

// gatherCredentialed gathers the endpoints among ms whose policies are
// credentialed.
func gatherCredentialed(ms []matched, credentialed []string) credentialedEndpoints {
	g := credentialedEndpoints{allOptIn: true, allProto: true}
	for i := range ms {
		m := &ms[i]
		if !slices.Contains(credentialed, m.key) {
			continue
		}
		if g.first == nil {
			g.first = m
		}
		g.allOptIn = g.allOptIn && m.ep.AllowUninspectedCredentials
		g.allProto = g.allProto && m.ep.Protocol != ""
		g.skip = g.skip || m.ep.TLS == openshell.TLSSkip
	}
	return g
}

// blocks is EndpointCredentialGuard::blocks_connect: some endpoint is
// credentialed, not all opt in, and not all are L7 endpoints without tls:
// skip.
func (g credentialedEndpoints) blocks() bool {
	return g.first != nil && !g.allOptIn && !(g.allProto && !g.skip)
}
