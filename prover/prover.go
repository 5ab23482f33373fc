package prover

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// The four categories (finding.rs:26-33 @ v0.0.111).
const (
	LinkLocalReach           = "link_local_reach"
	L7BypassCredentialed     = "l7_bypass_credentialed"
	CredentialReachExpansion = "credential_reach_expansion"
	CapabilityExpansion      = "capability_expansion"
)

// Categories lists the categories in the order check_credential_safety
// emits them (queries.rs:184-246 @ v0.0.111).
func Categories() []string {
	return []string{LinkLocalReach, L7BypassCredentialed, CredentialReachExpansion, CapabilityExpansion}
}

// Path is one piece of evidence (ExfilPath, finding.rs:35-52 @ v0.0.111).
type Path struct {
	Binary    string `json:"binary"`
	Host      string `json:"host"`
	Port      int    `json:"port"`
	Mechanism string `json:"mechanism"`
	Policy    string `json:"policy"`
	Category  string `json:"category"`
	// Method is set for capability_expansion only.
	Method string `json:"method,omitempty"`
}

// String renders the path as OpenShell's finding_shorthand line
// (format_path_line, report.rs:51-72 @ v0.0.111).
func (p Path) String() string {
	if p.Category == CapabilityExpansion {
		return fmt.Sprintf("%s: %s on %s:%d via %s", p.Category, p.Method, p.Host, p.Port, p.Binary)
	}
	return fmt.Sprintf("%s: %s:%d via %s", p.Category, p.Host, p.Port, p.Binary)
}

// key is finding_path_key (crates/openshell-server/src/grpc/policy.rs:
// 597-606 @ v0.0.111): the policy name is deliberately left out.
func (p Path) key() string {
	return fmt.Sprintf("exfil|%s|%s:%d|%s|%s", p.Binary, p.Host, p.Port, p.Category, p.Method)
}

// Finding is one fired category with its evidence (Finding, finding.rs:60-75).
type Finding struct {
	Query string `json:"query"`
	Paths []Path `json:"paths"`
}

// Paths flattens findings into their evidence paths.
func Paths(fs []Finding) []Path {
	var out []Path
	for _, f := range fs {
		out = append(out, f.Paths...)
	}
	return out
}

// writeMethods and allMethods are WRITE_METHODS and ALL_METHODS
// (crates/openshell-prover/src/policy.rs:43-47 @ v0.0.111).
var (
	writeMethods = []string{"POST", "PUT", "PATCH", "DELETE"}
	allMethods   = []string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"}
	readOnly     = []string{"GET", "HEAD", "OPTIONS"}
	readWrite    = []string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"}
)

// IsWriteMethod reports whether m (any case) is one of the prover's write
// methods; "*" is not (AllowedMethods expands it).
func IsWriteMethod(m string) bool {
	m = strings.ToUpper(m)
	for _, w := range writeMethods {
		if m == w {
			return true
		}
	}
	return false
}

// AllowedMethods is Endpoint::allowed_methods (policy.rs:205-235 @
// v0.0.111): empty means every method (no protocol: L4 only); an access
// preset names its set; otherwise the upper-cased rule methods, "*" meaning
// all. A rule without a method (GraphQL, JSON-RPC) contributes "" as
// OpenShell's does. The result is sorted.
func AllowedMethods(ep *openshell.Endpoint) []string {
	if ep.Protocol == "" {
		return nil
	}
	switch ep.Access {
	case openshell.AccessReadOnly:
		return append([]string(nil), readOnly...)
	case openshell.AccessReadWrite:
		return append([]string(nil), readWrite...)
	case openshell.AccessFull:
		return append([]string(nil), allMethods...)
	}
	set := map[string]bool{}
	for _, r := range ep.Rules {
		m := strings.ToUpper(r.Allow.Method)
		if m == "*" {
			return append([]string(nil), allMethods...)
		}
		set[m] = true
	}
	out := make([]string, 0, len(set))
	for m := range set {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// effectivePorts is Endpoint::effective_ports (policy.rs:194-203).
func effectivePorts(ep *openshell.Endpoint) []int {
	if len(ep.Ports) > 0 {
		return ep.Ports
	}
	if ep.Port > 0 {
		return []int{ep.Port}
	}
	return nil
}

// l7AllowsWrite is the l7_allows_write constant (model.rs:163-183 @
// v0.0.111): an L4 endpoint passes every method; an L7 one with no method
// set (no preset, no rules) too; else any write method.
func l7AllowsWrite(ep *openshell.Endpoint) bool {
	if ep.Protocol == "" {
		return true
	}
	ms := AllowedMethods(ep)
	if len(ms) == 0 {
		return true
	}
	for _, m := range ms {
		if IsWriteMethod(m) {
			return true
		}
	}
	return false
}

// IsLinkLocal is is_link_local (queries.rs:45-57 @ v0.0.111): an IP
// literal in 169.254.0.0/16 or fe80::/10; host names are never resolved.
func IsLinkLocal(host string) bool {
	a, err := netip.ParseAddr(host)
	// Rust's IpAddr parser refuses zones, and Ipv6Addr::is_unicast_link_local
	// does not unmap ::ffff:169.254.x.y as Go's IsLinkLocalUnicast would.
	if err != nil || a.Zone() != "" || a.Is4In6() {
		return false
	}
	return a.IsLinkLocalUnicast()
}

// IsMetadataHost is is_known_metadata_hostname (queries.rs:59-64 @
// v0.0.111): the host, normalized as the prover normalizes host patterns,
// is GCP's metadata server name.
func IsMetadataHost(host string) bool {
	return glob.NewCredentialHost(host).String() == "metadata.google.internal"
}

type endpointID struct {
	policy, host string
	port         int
}

// Check runs the four queries on a policy (check_credential_safety,
// queries.rs:70-247 @ v0.0.111) and returns one finding per fired category,
// in OpenShell's order. For every binary of any network policy (first
// occurrence order over the sorted policy keys, model.rs:112-121) that the
// registry says can exfiltrate, and every (policy, host, port) endpoint
// (model.rs:98-110), the path exists when the binary is listed in that
// policy and it can send data there (can_exfil_via_endpoint, model.rs:
// 329-373): the endpoint is L4 and the binary constructs HTTP, or L7 allows
// a write method and the binary constructs HTTP, or the binary bypasses L7.
// Then: link-local or metadata host -> link_local_reach (nothing else for
// that host); no credential in scope -> nothing; an L7-bypassing binary ->
// l7_bypass_credentialed; else credential_reach_expansion plus one
// capability_expansion per allowed method of the endpoint.
func Check(p *openshell.Policy, creds Credentials, reg *Registry) []Finding {
	g := newPolicyGraph(p)
	var ps pathSets
	for _, bin := range g.binaries {
		c := reg.Lookup(bin)
		if !c.CanExfiltrate {
			continue
		}
		for _, id := range g.endpoints {
			if g.allows[bin+"\x00"+id.policy] && g.facts[id].canSend(c) {
				ps.add(p, creds, c, bin, id)
			}
		}
	}
	return ps.findings()
}

// endpointFacts are the L7 facts of one (policy, host, port): whether it
// is inspected at L7 and whether its L7 rules allow a write method.
type endpointFacts struct{ l7, write bool }

// canSend is can_exfil_via_endpoint (model.rs:329-373): an L4 endpoint
// and a binary that constructs HTTP, or L7 allowing a write and a binary
// that constructs HTTP, or a binary that bypasses L7.
func (f endpointFacts) canSend(c Capability) bool {
	return (!f.l7 && c.CanConstructHTTP) || (f.write && c.CanConstructHTTP) || c.BypassesL7()
}

// policyGraph is the policy as the prover's model sees it
// (model.rs:98-186).
type policyGraph struct {
	// binaries is every binary of any network policy, in first occurrence
	// order over the sorted policy keys.
	binaries []string
	// endpoints is every (policy, host, port), in policy key order.
	endpoints []endpointID
	// facts holds each endpoint's L7 facts. OpenShell's maps are keyed
	// policy:host:port, so with two endpoints of one key the last one's
	// facts win (model.rs:143-186); endpoints keeps both.
	facts map[endpointID]endpointFacts
	// allows holds "binary\x00policy" for each binary a policy lists.
	allows map[string]bool
}

// newPolicyGraph reads p's network policies into a policyGraph.
func newPolicyGraph(p *openshell.Policy) *policyGraph {
	g := &policyGraph{facts: map[endpointID]endpointFacts{}, allows: map[string]bool{}}
	seen := map[string]bool{}
	for _, k := range p.PolicyKeys() {
		np := p.NetworkPolicies[k]
		for _, b := range np.Binaries {
			if !seen[b.Path] {
				seen[b.Path] = true
				g.binaries = append(g.binaries, b.Path)
			}
			g.allows[b.Path+"\x00"+k] = true
		}
		for i := range np.Endpoints {
			ep := &np.Endpoints[i]
			for _, port := range effectivePorts(ep) {
				id := endpointID{k, ep.Host, port}
				g.endpoints = append(g.endpoints, id)
				g.facts[id] = endpointFacts{l7: ep.Protocol != "", write: l7AllowsWrite(ep)}
			}
		}
	}
	return g
}

// pathSets collects the exfiltration paths of each of the four queries.
type pathSets struct {
	linkLocal, bypass, reach, capability []Path
}

// add files the path of binary bin (capabilities c) to endpoint id under
// its query: a link-local or metadata host is link_local_reach (nothing
// else); without a credential in scope there is nothing; an L7-bypassing
// binary is l7_bypass_credentialed; else credential_reach_expansion plus
// one capability_expansion per method the endpoint's rule allows.
func (ps *pathSets) add(p *openshell.Policy, creds Credentials, c Capability, bin string, id endpointID) {
	path := Path{Binary: bin, Host: id.host, Port: id.port, Policy: id.policy}
	switch {
	case IsLinkLocal(id.host) || IsMetadataHost(id.host):
		path.Category = LinkLocalReach
		path.Mechanism = fmt.Sprintf("Link-local endpoint — %s can reach the host's metadata range (cloud-credential exfiltration territory regardless of declared scopes)", bin)
		ps.linkLocal = append(ps.linkLocal, path)
		return
	case !creds.Credentialed(id.host):
		return
	case c.BypassesL7():
		path.Category = L7BypassCredentialed
		path.Mechanism = c.Description + " — uses non-HTTP protocol, bypasses L7 inspection, and a credential is in scope for this host"
		ps.bypass = append(ps.bypass, path)
		return
	}
	path.Category = CredentialReachExpansion
	path.Mechanism = fmt.Sprintf("Binary %s has credentialed reach to %s:%d", bin, id.host, id.port)
	ps.reach = append(ps.reach, path)
	for _, m := range methodsInRule(p, id) {
		cp := path
		cp.Category, cp.Method = CapabilityExpansion, m
		cp.Mechanism = fmt.Sprintf("Method %s allowed for %s on %s:%d", m, bin, id.host, id.port)
		ps.capability = append(ps.capability, cp)
	}
}

// findings is one Finding per query with a path, in OpenShell's order.
func (ps *pathSets) findings() []Finding {
	var out []Finding
	for _, f := range []Finding{{LinkLocalReach, ps.linkLocal}, {L7BypassCredentialed, ps.bypass}, {CredentialReachExpansion, ps.reach}, {CapabilityExpansion, ps.capability}} {
		if len(f.Paths) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// methodsInRule is endpoint_allowed_methods_in_rule (queries.rs:279-297 @
// v0.0.111): the methods of the first endpoint of the policy whose host
// equals the endpoint's (ASCII case-insensitive) and whose ports include it.
func methodsInRule(p *openshell.Policy, id endpointID) []string {
	np := p.NetworkPolicies[id.policy]
	for i := range np.Endpoints {
		ep := &np.Endpoints[i]
		if !strings.EqualFold(ep.Host, id.host) {
			continue
		}
		for _, port := range effectivePorts(ep) {
			if port == id.port {
				return AllowedMethods(ep)
			}
		}
	}
	return nil
}

// Delta returns the findings of head whose paths base lacks, per category,
// with capability_expansion paths suppressed where the same (binary, host,
// port) is in the credential_reach_expansion delta (finding_delta,
// crates/openshell-server/src/grpc/policy.rs:608-673 @ v0.0.111).
func Delta(base, head []Finding) []Finding {
	return suppressCoveredCapabilities(newPaths(base, head))
}

// newPaths is, per finding of head, the paths base lacks in the same
// query; findings left without a path are dropped.
func newPaths(base, head []Finding) []Finding {
	baseKeys := map[string]bool{}
	for _, f := range base {
		for _, p := range f.Paths {
			baseKeys[f.Query+"\x00"+p.key()] = true
		}
	}
	var delta []Finding
	for _, f := range head {
		var paths []Path
		for _, p := range f.Paths {
			if !baseKeys[f.Query+"\x00"+p.key()] {
				paths = append(paths, p)
			}
		}
		if len(paths) > 0 {
			delta = append(delta, Finding{Query: f.Query, Paths: paths})
		}
	}
	return delta
}

// suppressCoveredCapabilities drops the capability_expansion paths whose
// (binary, host, port) has a credential_reach_expansion path in delta,
// and the capability_expansion finding when none is left. It reuses
// delta's array.
func suppressCoveredCapabilities(delta []Finding) []Finding {
	reach := map[string]bool{}
	for _, f := range delta {
		if f.Query == CredentialReachExpansion {
			for _, p := range f.Paths {
				reach[reachKey(p)] = true
			}
		}
	}
	out := delta[:0]
	for _, f := range delta {
		if f.Query == CapabilityExpansion {
			var keep []Path
			for _, p := range f.Paths {
				if !reach[reachKey(p)] {
					keep = append(keep, p)
				}
			}
			if len(keep) == 0 {
				continue
			}
			f.Paths = keep
		}
		out = append(out, f)
	}
	return out
}

// reachKey identifies a path's (binary, host, port).
func reachKey(p Path) string {
	return fmt.Sprintf("%s\x00%s\x00%d", p.Binary, p.Host, p.Port)
}
