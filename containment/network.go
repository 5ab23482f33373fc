package containment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
)

// endpointRef is one endpoint of a policy with its network policy's key
// and binaries.
type endpointRef struct {
	key  string
	i    int
	ep   *openshell.Endpoint
	bins []openshell.Binary
	// host is the host as the policy wrote it, before placeholders were
	// substituted.
	host string
}

func (e endpointRef) element() string {
	return fmt.Sprintf("network_policies.%s.endpoints[%d]", e.key, e.i)
}

// indexEndpoints lists every endpoint of p, in key order, with the hosts
// orig (p before substitution) writes.
func indexEndpoints(p, orig *openshell.Policy) []endpointRef {
	var out []endpointRef
	for _, k := range p.PolicyKeys() {
		np := p.NetworkPolicies[k]
		for i := range np.Endpoints {
			out = append(out, endpointRef{key: k, i: i, ep: &p.NetworkPolicies[k].Endpoints[i], bins: np.Binaries, host: orig.NetworkPolicies[k].Endpoints[i].Host})
		}
	}
	return out
}

// ports are the ports an endpoint matches: ports when it lists any, else
// port (decide's endpointHasPort: opa.rs:1834-1840 @ v0.0.111).
func ports(ep *openshell.Endpoint) []int {
	if len(ep.Ports) > 0 {
		return ep.Ports
	}
	if ep.Port > 0 {
		return []int{ep.Port}
	}
	return nil
}

// unit is one network grant of the child: a binary of an endpoint's
// policy to its host on one port.
type unit struct {
	ref  endpointRef
	port int
	bin  openshell.Binary
}

// checkNetwork proves every grant of the child's network policies, and
// its middlewares, in the parent.
func checkNetwork(c, p *side) []Violation {
	var out []Violation
	if d := middlewareDifference(c.pol, p.pol); d != "" {
		out = append(out, Violation{Kind: KindProcess, Element: "network_middlewares", Reason: d})
	}
	for _, ref := range c.eps {
		for _, port := range ports(ref.ep) {
			for _, bin := range ref.bins {
				out = append(out, proveUnit(unit{ref: ref, port: port, bin: bin}, c, p)...)
			}
		}
	}
	return out
}

// middlewareDifference is why the child's middlewares are not the
// parent's: a middleware may deny or rewrite requests, which the proof
// does not model, so the two must be equal.
func middlewareDifference(c, p *openshell.Policy) string {
	a := &openshell.Policy{NetworkMiddlewares: c.NetworkMiddlewares}
	b := &openshell.Policy{NetworkMiddlewares: p.NetworkMiddlewares}
	if d := openshell.Difference(a, b); d != "" {
		return "the network middlewares differ from the parent's at " + d + " (middlewares are not modelled: they must be equal)"
	}
	return ""
}

// proveUnit proves one grant: the parent's endpoints that could decide
// its requests, then the grant's shape (every request, or its L7 rules),
// then the witnesses.
func proveUnit(u unit, c, p *side) []Violation {
	base := Violation{Kind: KindNetwork, Host: u.ref.host, Port: u.port, Binary: u.bin.Path,
		Element: u.ref.element(), From: sources(u.ref.ep.From, u.bin.From)}
	cands, why := candidates(u, c, p)
	if why != "" {
		base.Request = grantText(u.ref.ep)
		base.Reason = why
		return []Violation{withWitness(base, u, c, p, allRequests(u))}
	}
	if shapeAll(u.ref.ep) {
		base.Request = "any request"
		if why := coverAll(u, cands, p); why != "" {
			base.Reason = why
			return []Violation{withWitness(base, u, c, p, allRequests(u))}
		}
		return confirm(base, u, c, p, allRequests(u))
	}
	if !strings.EqualFold(u.ref.ep.Protocol, openshell.ProtocolREST) {
		return proveVerbatim(base, u, cands, c, p)
	}
	return proveRules(base, u, cands, c, p)
}

// sources joins the source lists of a grant's parts.
func sources(lists ...[]bundle.Source) []bundle.Source {
	var out []bundle.Source
	for _, l := range lists {
		for _, s := range l {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// shapeAll reports whether the child's endpoint lets every request of an
// allowed connection through: not inspected (L4, tcp), relayed raw (tls:
// skip), or inspected without enforcement (audit logs and allows).
func shapeAll(ep *openshell.Endpoint) bool {
	return !openshell.IsL7(ep) || ep.TLS == openshell.TLSSkip || ep.Enforcement != openshell.EnforcementEnforce
}

// candidates are the parent's endpoints that match every connection of
// u: host pattern, port and a binary covering the child's. why is the
// reason there are none, or that the endpoints of either side that could
// take part in the decision hold what the proof does not model.
func candidates(u unit, c, p *side) ([]endpointRef, string) {
	if why := hazards(u, c, p); why != "" {
		return nil, why
	}
	exact := exactHostMatters(u.ref.ep.Host, p.version)
	var hosts, out []endpointRef
	wildcard := false
	for _, e := range p.eps {
		if !slices.Contains(ports(e.ep), u.port) || e.ep.Host == "" || !hostCovers(e.ep.Host, u.ref.ep.Host) {
			continue
		}
		if exact && !strings.EqualFold(e.ep.Host, u.ref.ep.Host) {
			wildcard = true
			continue
		}
		hosts = append(hosts, e)
		if slices.ContainsFunc(e.bins, func(b openshell.Binary) bool { return binaryCovers(b.Path, u.bin.Path) }) {
			out = append(out, e)
		}
	}
	switch {
	case len(out) > 0:
		return out, ""
	case len(hosts) > 0:
		return nil, fmt.Sprintf("the parent lets only %s reach %s:%d", binaryList(hosts), u.ref.ep.Host, u.port)
	case wildcard:
		return nil, fmt.Sprintf("the parent has no endpoint naming %s:%d exactly (an exact host may resolve to a private address at OpenShell %s, a wildcard may not)", u.ref.ep.Host, u.port, p.version)
	}
	return nil, fmt.Sprintf("the parent has no endpoint for %s:%d", u.ref.ep.Host, u.port)
}

// binaryList names the binaries of the endpoints' policies.
func binaryList(es []endpointRef) string {
	var names []string
	for _, e := range es {
		for _, b := range e.bins {
			if !slices.Contains(names, b.Path) {
				names = append(names, b.Path)
			}
		}
	}
	return strings.Join(names, ", ")
}

// exactHostMatters reports whether the child's host is written exactly at
// a release where an exact host lets a connection reach a private address
// (ssrf.go exactHostPolicy): only an endpoint naming it exactly then
// allows the same addresses.
func exactHostMatters(host, version string) bool {
	return host != "" && !strings.Contains(host, "*") && openshell.Supports(openshell.FeaturePrivateExactHost, version)
}

// overlapping are the endpoints of s on port whose host could match a
// host the child's endpoint matches.
func overlapping(s *side, host string, port int) []endpointRef {
	var out []endpointRef
	for _, e := range s.eps {
		if slices.Contains(ports(e.ep), port) && hostsMayOverlap(e.ep.Host, host) {
			out = append(out, e)
		}
	}
	return out
}

// hazards is why the endpoints that could take part in deciding u's
// requests hold what the proof does not model, or "".
func hazards(u unit, c, p *side) string {
	cO := overlapping(c, u.ref.ep.Host, u.port)
	pO := overlapping(p, u.ref.ep.Host, u.port)
	if why := allowedIPsDiffer(append(slices.Clone(cO), pO...)); why != "" {
		return why
	}
	for _, e := range cO {
		if e.ep.AllowEncodedSlash {
			return fmt.Sprintf("the child's %s allows encoded slashes, which the proof does not model", e.element())
		}
	}
	for _, e := range pO {
		if why := parentHazard(e, u.ref.ep); why != "" {
			return fmt.Sprintf("the parent's %s (%s) could take part in deciding these requests: %s", e.element(), e.ep.Host, why)
		}
	}
	return ""
}

// parentHazard is what a parent endpoint that could decide the child's
// requests holds that the proof does not model, or "".
func parentHazard(e endpointRef, child *openshell.Endpoint) string {
	ep := e.ep
	switch {
	case ep.Path != "":
		return "its path routes requests"
	case ep.AllowEncodedSlash:
		return "it allows encoded slashes"
	case len(ep.DenyRules) > 0 && !denyRulesCarried(ep, child):
		return "it has deny rules the child's endpoint does not carry"
	case openshell.IsL7(ep) && !strings.EqualFold(ep.Protocol, openshell.ProtocolREST) && !sameEndpoint(ep, child):
		return "its protocol " + ep.Protocol + " is not modelled unless the child's endpoint is the same"
	case strings.HasPrefix(e.key, "_provider_") && (!openshell.IsL7(ep) || ep.TLS == openshell.TLSSkip) && !ep.AllowUninspectedCredentials:
		return "a provider layer's raw tunnel, which the credential guard refuses"
	}
	return ""
}

// denyRulesCarried reports whether the child's endpoint has every deny
// rule of the parent's: they then deny the same requests in the child.
func denyRulesCarried(parent, child *openshell.Endpoint) bool {
	for _, d := range parent.DenyRules {
		if !slices.ContainsFunc(child.DenyRules, func(m openshell.Match) bool { return sameMatch(m, d) }) {
			return false
		}
	}
	return true
}

// sameEndpoint reports whether two endpoints are the same document.
func sameEndpoint(a, b *openshell.Endpoint) bool {
	return openshell.Difference(endpointDoc(*a), endpointDoc(*b)) == ""
}

func sameMatch(a, b openshell.Match) bool {
	return sameEndpoint(&openshell.Endpoint{Rules: []openshell.Rule{{Allow: a}}}, &openshell.Endpoint{Rules: []openshell.Rule{{Allow: b}}})
}

func endpointDoc(ep openshell.Endpoint) *openshell.Policy {
	return &openshell.Policy{NetworkPolicies: map[string]openshell.NetworkPolicy{"e": {Endpoints: []openshell.Endpoint{ep}}}}
}

// allowedIPsDiffer is why the allowed_ips of endpoints that could decide
// the same connection differ, or "": the first extended config decides
// the addresses (ssrf.go), so they must be the same on all of them, or on
// none.
func allowedIPsDiffer(es []endpointRef) string {
	var first *endpointRef
	for i := range es {
		if first == nil {
			first = &es[i]
			continue
		}
		if !slices.Equal(normIPs(first.ep.AllowedIPs), normIPs(es[i].ep.AllowedIPs)) {
			return fmt.Sprintf("allowed_ips differ between %s and %s, which could decide the same connection (allowed_ips are compared as sets, not modelled further)", first.element(), es[i].element())
		}
	}
	return ""
}

func normIPs(ips []string) []string {
	out := slices.Clone(ips)
	slices.Sort(out)
	return slices.Compact(out)
}

// allGranting reports whether a parent endpoint lets every request of the
// connection through as the child's does, when no other endpoint on the
// host inspects it otherwise: raw (tls: skip) for a raw child, L4 for an
// L4 child, L4 or REST under audit for a child REST endpoint under audit
// (the same canonicalisation refuses the same requests on both sides).
func allGranting(e endpointRef, child *openshell.Endpoint) bool {
	switch {
	case child.TLS == openshell.TLSSkip:
		return e.ep.TLS == openshell.TLSSkip
	case !openshell.IsL7(child):
		return !openshell.IsL7(e.ep) && e.ep.TLS == ""
	}
	return e.ep.TLS == "" && (!openshell.IsL7(e.ep) || restAudit(e.ep))
}

// restAudit reports a REST endpoint that does not enforce its rules.
func restAudit(ep *openshell.Endpoint) bool {
	return strings.EqualFold(ep.Protocol, openshell.ProtocolREST) && ep.Enforcement != openshell.EnforcementEnforce
}

// coverAll is why no parent candidate lets every request through, or "":
// one must (allGranting), and every parent endpoint on the host must leave
// the requests as the child's does (overlapAllows).
func coverAll(u unit, cands []endpointRef, p *side) string {
	if !slices.ContainsFunc(cands, func(e endpointRef) bool { return allGranting(e, u.ref.ep) }) {
		return "the child's endpoint lets every request through (" + shapeWhy(u.ref.ep) + "), and no parent endpoint does"
	}
	for _, e := range overlapping(p, u.ref.ep.Host, u.port) {
		if !overlapAllows(e.ep, u.ref.ep) {
			return fmt.Sprintf("the parent's %s inspects or relays requests to %s differently, so the parent may not let every request through", e.element(), e.ep.Host)
		}
	}
	return ""
}

// overlapAllows reports whether a parent endpoint that could take part in
// deciding the connection leaves every request through as the child's
// endpoint does: under a raw child, only raw or L4 endpoints without
// addresses (the first extended config decides); under an L4 child, only
// L4 endpoints; under a REST child under audit, L4 or REST under audit.
func overlapAllows(e, child *openshell.Endpoint) bool {
	switch {
	case child.TLS == openshell.TLSSkip:
		return e.TLS == openshell.TLSSkip || (!openshell.IsL7(e) && len(e.AllowedIPs) == 0)
	case !openshell.IsL7(child):
		return !openshell.IsL7(e) && e.TLS == ""
	}
	return e.TLS == "" && (!openshell.IsL7(e) || restAudit(e))
}

// shapeWhy says why the child's endpoint lets every request through.
func shapeWhy(ep *openshell.Endpoint) string {
	switch {
	case !openshell.IsL7(ep):
		return "not inspected"
	case ep.TLS == openshell.TLSSkip:
		return "tls: skip"
	}
	return "enforcement " + strings.TrimSpace(ep.Enforcement+" (audit)")
}

// proveVerbatim proves a child endpoint of a protocol other than REST: a
// parent candidate must be the same endpoint, or let every request through.
func proveVerbatim(base Violation, u unit, cands []endpointRef, c, p *side) []Violation {
	base.Request = u.ref.ep.Protocol + " requests of its rules"
	if slices.ContainsFunc(cands, func(e endpointRef) bool { return sameEndpoint(e.ep, u.ref.ep) }) || coverAll(u, cands, p) == "" {
		return confirm(base, u, c, p, nil)
	}
	base.Reason = "the parent has no endpoint with the same " + u.ref.ep.Protocol + " settings and rules (only REST rules are compared rule by rule)"
	return []Violation{base}
}

// proveRules proves each effective rule of a REST child endpoint: a parent
// candidate that lets every request through, or one with a rule covering
// it.
func proveRules(base Violation, u unit, cands []endpointRef, c, p *side) []Violation {
	if coverAll(u, cands, p) == "" {
		return confirm(base, u, c, p, ruleRequests(u, decide.EffectiveRules(u.ref.ep)))
	}
	var out []Violation
	rules := decide.EffectiveRules(u.ref.ep)
	for j, r := range rules {
		v := base
		v.Request = ruleText(r)
		v.Element = fmt.Sprintf("%s.rules[%d]", u.ref.element(), j)
		if j < len(u.ref.ep.Rules) {
			v.From = sources(u.ref.ep.Rules[j].From, r.From, u.bin.From)
		}
		ws := ruleRequests(u, []openshell.Match{r})
		if !slices.ContainsFunc(cands, func(e endpointRef) bool { return ruleCovered(e.ep, r) }) {
			v.Reason = "no rule of the parent's endpoints for " + u.ref.ep.Host + " allows it"
			out = append(out, withWitness(v, u, c, p, ws))
			continue
		}
		out = append(out, confirm(v, u, c, p, ws)...)
	}
	return out
}

// grantText renders what an endpoint lets through: every request, or its
// REST rules.
func grantText(ep *openshell.Endpoint) string {
	if shapeAll(ep) {
		return "any request"
	}
	if !strings.EqualFold(ep.Protocol, openshell.ProtocolREST) {
		return ep.Protocol + " requests of its rules"
	}
	var rs []string
	for _, r := range decide.EffectiveRules(ep) {
		rs = append(rs, ruleText(r))
	}
	return strings.Join(rs, ", ")
}

// ruleText renders a REST rule.
func ruleText(r openshell.Match) string {
	s := r.Method + " " + r.Path
	if len(r.Query) > 0 {
		s += " with query constraints"
	}
	return s
}

// ruleCovered reports whether a REST parent endpoint has an effective rule
// matching every request the child rule matches.
func ruleCovered(ep *openshell.Endpoint, child openshell.Match) bool {
	if !strings.EqualFold(ep.Protocol, openshell.ProtocolREST) {
		return false
	}
	if child.Path == "" {
		return true // matches no request path (match.go pathMatches)
	}
	return slices.ContainsFunc(decide.EffectiveRules(ep), func(p openshell.Match) bool {
		return methodCovers(p.Method, child.Method) && pathCovers(p.Path, child.Path) && queryCovers(p.Query, child.Query)
	})
}

// methodCovers: "*" any method, else the same method case-insensitively,
// and a GET rule also allows HEAD (sandbox-policy.rego:716-727, decide's
// methodMatches). A child GET allows HEAD too, which a parent GET covers.
func methodCovers(parent, child string) bool {
	p, c := strings.ToUpper(parent), strings.ToUpper(child)
	return p == "*" || p == c || (p == "GET" && c == "HEAD")
}

// queryCovers: every query key the parent constrains, the child
// constrains as narrowly (each of its globs covered by one of the
// parent's); keys only the child constrains narrow the child.
func queryCovers(parent, child map[string]openshell.QueryMatch) bool {
	for k, pq := range parent {
		cq, ok := child[k]
		if !ok {
			return false
		}
		for _, g := range globsOf(cq) {
			if !slices.ContainsFunc(globsOf(pq), func(pg string) bool { return valueCovers(pg, g) }) {
				return false
			}
		}
	}
	return true
}

func globsOf(q openshell.QueryMatch) []string {
	if q.Glob != "" {
		return append([]string{q.Glob}, q.Any...)
	}
	return q.Any
}

// valueCovers: a query value glob (glob.match with '.' as delimiter)
// covers another when equal, or when the child's is literal and matched.
func valueCovers(parent, child string) bool {
	if parent == child {
		return true
	}
	return !strings.ContainsAny(child, globMeta) && globMatchDot(parent, child)
}
