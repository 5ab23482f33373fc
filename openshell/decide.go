package openshell

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/gobwas/glob"
)

// Decision is the verdict on one request, with the element that decided it.
type Decision struct {
	Allowed bool `json:"allowed"`
	// Audit is set when an endpoint that is not enforced let through a
	// request its rules deny: OpenShell logs it and allows it.
	Audit  bool   `json:"audit,omitempty"`
	Reason string `json:"reason"`
	// Policy is the network policy key; Path the deciding element, e.g.
	// network_policies.github.endpoints[0].rules[2].
	Policy string `json:"policy,omitempty"`
	Path   string `json:"path,omitempty"`
}

// Verdict renders the decision as allow, deny or audit.
func (d Decision) Verdict() string {
	switch {
	case d.Audit:
		return "audit"
	case d.Allowed:
		return "allow"
	}
	return "deny"
}

// Ranges and ports OpenShell's SSRF guard always blocks, whatever the policy.
var (
	alwaysBlocked = []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("169.254.0.0/16"),
		netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("fe80::/10"), netip.MustParsePrefix("::/128"),
	}
	privateRanges = []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"),
		netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("100.64.0.0/10"),
		netip.MustParsePrefix("fc00::/7"),
	}
)

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Decide evaluates a request against a policy with OpenShell's semantics:
//
//   - the SSRF guard first: loopback, link-local (cloud metadata), 0.0.0.0
//     and control-plane ports are always denied; a private address needs an
//     exact host name or allowed_ips covering it;
//   - a network policy applies when one of its endpoints matches host and
//     port AND one of its binaries matches the process or any ancestor;
//   - an endpoint without an L7 protocol (or protocol tcp) allows the whole
//     connection; otherwise deny_rules win, then access presets or allow
//     rules decide; enforcement other than "enforce" turns a deny into an
//     audited allow.
func Decide(p *Policy, r *Request) Decision {
	if slices.Contains(controlPlanePorts, int64(r.Port)) {
		return Decision{Reason: fmt.Sprintf("port %d is a control-plane port, always blocked", r.Port)}
	}
	host := NormalizeHost(r.Host)
	addr, isIP := r.Addr, r.Addr.IsValid()
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addr, isIP = a, true
	}
	if isIP && inAny(addr, alwaysBlocked) {
		return Decision{Reason: fmt.Sprintf("%s is loopback, link-local or unspecified, always blocked by the SSRF guard", addr)}
	}
	matches, hostMatched := matchEndpoints(p, host, r)
	if len(matches) == 0 {
		if hostMatched {
			return Decision{Reason: fmt.Sprintf("no network policy for %s:%d allows binary %s", host, r.Port, strings.Join(r.Binaries(), " or its ancestors "))}
		}
		return Decision{Reason: fmt.Sprintf("no network policy allows %s:%d", host, r.Port)}
	}
	if isIP {
		var d Decision
		if matches, d = filterByAddr(matches, addr); len(matches) == 0 {
			return d
		}
	}
	reqPath := r.Path
	if r.Method != "" {
		var err error
		if reqPath, err = canonicalPath(r.Path); err != nil {
			return Decision{Reason: fmt.Sprintf("request path %q is rejected before policy evaluation: %v", r.Path, err)}
		}
	}
	if matches = routeByPath(matches, r, reqPath); len(matches) == 0 {
		return Decision{Reason: fmt.Sprintf("%s %s:%d%s did not match an L7 endpoint path", r.Method, host, r.Port, reqPath)}
	}
	if d, ok := decideGraphQL(matches, r); ok {
		return d
	}
	if d, ok := deniedByRules(matches, r, reqPath); ok {
		return d
	}
	return decideRequest(matches, r, reqPath)
}

// endpointMatch is an endpoint that applies to a request: its host and port
// match, and so does a binary of its network policy.
type endpointMatch struct {
	key string
	i   int
	ep  *Endpoint
}

// matchEndpoints returns the endpoints that apply to the request, in policy
// key order, and whether any endpoint matched host and port at all.
func matchEndpoints(p *Policy, host string, r *Request) ([]endpointMatch, bool) {
	var matches []endpointMatch
	hostMatched := false
	for _, key := range p.PolicyKeys() {
		np := p.NetworkPolicies[key]
		var eps []int
		for i := range np.Endpoints {
			if endpointMatches(&np.Endpoints[i], host, r.Port) {
				eps = append(eps, i)
			}
		}
		if len(eps) == 0 {
			continue
		}
		hostMatched = true
		if !binaryMatches(np.Binaries, r.Binaries()) {
			continue
		}
		for _, i := range eps {
			matches = append(matches, endpointMatch{key: key, i: i, ep: &p.NetworkPolicies[key].Endpoints[i]})
		}
	}
	return matches, hostMatched
}

// filterByAddr applies the SSRF guard to an IP destination, per matching
// endpoint: a private address needs an exact host or allowed_ips covering it,
// any other address must be inside the endpoint's allowed_ips when it has
// some. It returns the endpoints kept, and the denial when none is.
func filterByAddr(matches []endpointMatch, addr netip.Addr) ([]endpointMatch, Decision) {
	private := inAny(addr, privateRanges)
	kept := matches[:0]
	for _, m := range matches {
		if addrAllowed(m.ep, addr, private) {
			kept = append(kept, m)
		}
	}
	switch {
	case len(kept) > 0:
		return kept, Decision{}
	case private:
		return nil, Decision{Reason: fmt.Sprintf("%s is a private address: it needs an exact host name or allowed_ips covering it", addr)}
	}
	return nil, Decision{Reason: fmt.Sprintf("%s is outside the endpoint's allowed_ips", addr)}
}

// addrAllowed applies the SSRF guard for addr to one endpoint.
func addrAllowed(ep *Endpoint, addr netip.Addr, private bool) bool {
	if private {
		return privateAllowed(ep, addr)
	}
	return len(ep.AllowedIPs) == 0 || ipAllowed(ep.AllowedIPs, addr)
}

// deniedByRules returns the decision of the first deny rule, on any
// applicable L7 endpoint, that matches the request: deny_rules win.
func deniedByRules(matches []endpointMatch, r *Request, reqPath string) (Decision, bool) {
	if r.Method == "" {
		return Decision{}, false
	}
	for _, m := range matches {
		if !IsL7(m.ep) {
			continue
		}
		for j := range m.ep.DenyRules {
			if requestMatches(&m.ep.DenyRules[j], r, reqPath, false) {
				d := Decision{Policy: m.key, Path: fmt.Sprintf("%s.deny_rules[%d]", epPath(m.key, m.i), j),
					Reason: fmt.Sprintf("denied by deny rule %s %s", m.ep.DenyRules[j].Method, m.ep.DenyRules[j].Path)}
				return audited(m.ep, d), true
			}
		}
	}
	return Decision{}, false
}

// decideRequest decides a request no deny rule matched: the first endpoint
// that allows it (an L4 endpoint allows the connection, an L7 endpoint a
// connection-level request or one its rules allow), else the denial of the
// first endpoint.
func decideRequest(matches []endpointMatch, r *Request, reqPath string) Decision {
	var denied *Decision
	for _, m := range matches {
		if !IsL7(m.ep) {
			return Decision{Allowed: true, Policy: m.key, Path: epPath(m.key, m.i),
				Reason: fmt.Sprintf("L4 endpoint %s: the connection is allowed without request inspection", m.ep.Host)}
		}
		if r.Method == "" {
			return Decision{Allowed: true, Policy: m.key, Path: epPath(m.key, m.i),
				Reason: "the connection is allowed; requests over it are checked against the L7 rules"}
		}
		if d, ok := allowedByEndpoint(m.key, m.i, m.ep, r, reqPath); ok {
			return d
		}
		if denied == nil {
			d := audited(m.ep, Decision{Policy: m.key, Path: epPath(m.key, m.i),
				Reason: fmt.Sprintf("no rule of endpoint %s allows %s %s", m.ep.Host, r.Method, reqPath)})
			denied = &d
		}
	}
	return *denied
}

// audited turns a deny on an endpoint without enforcement: enforce into an
// allow that OpenShell reports.
func audited(ep *Endpoint, d Decision) Decision {
	if ep.Enforcement != EnforcementEnforce {
		d.Allowed, d.Audit = true, true
		d.Reason += fmt.Sprintf(" (enforcement %q: audited, not blocked)", ep.Enforcement)
	}
	return d
}

func allowedByEndpoint(key string, i int, ep *Endpoint, r *Request, reqPath string) (Decision, bool) {
	if ep.Access != "" {
		if methodInPreset(ep.Access, r.Method) {
			return Decision{Allowed: true, Policy: key, Path: epPath(key, i) + ".access",
				Reason: fmt.Sprintf("access %s allows %s", ep.Access, r.Method)}, true
		}
		return Decision{}, false
	}
	for j := range ep.Rules {
		if requestMatches(&ep.Rules[j].Allow, r, reqPath, true) {
			m := ep.Rules[j].Allow
			return Decision{Allowed: true, Policy: key, Path: fmt.Sprintf("%s.rules[%d]", epPath(key, i), j),
				Reason: fmt.Sprintf("allowed by rule %s %s", m.Method, m.Path)}, true
		}
	}
	return Decision{}, false
}

func epPath(key string, i int) string {
	return fmt.Sprintf("network_policies.%s.endpoints[%d]", key, i)
}

// IsL7 reports whether OpenShell inspects the endpoint's requests: it has a
// protocol other than tcp.
func IsL7(ep *Endpoint) bool {
	return ep.Protocol != "" && ep.Protocol != ProtocolTCP
}

// IsReadMethod reports whether method is one of the read-only methods of
// OpenShell's read-only access preset.
func IsReadMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "GET", "HEAD", "OPTIONS":
		return true
	}
	return false
}

func methodInPreset(access, method string) bool {
	method = strings.ToUpper(method)
	switch access {
	case AccessReadOnly:
		return IsReadMethod(method)
	case AccessReadWrite:
		return IsReadMethod(method) || method == "POST" || method == "PUT" || method == "PATCH"
	case AccessFull:
		return true
	}
	return false
}

// requestMatches matches an allow rule (allow=true) or a deny rule. Methods
// compare case-insensitively, "*" is any method and a GET rule also matches
// HEAD (for deny rules too, as in OpenShell). Query: an allow rule needs
// every listed parameter present with ALL its values matching; a deny rule
// needs every listed parameter present with ANY value matching.
func requestMatches(m *Match, r *Request, path string, allow bool) bool {
	want, got := strings.ToUpper(m.Method), strings.ToUpper(r.Method)
	if want != "*" && want != got && !(want == "GET" && got == "HEAD") {
		return false
	}
	if !pathMatches(m.Path, path) {
		return false
	}
	for name, qm := range m.Query {
		if !queryParamMatches(qm, r.Query[name], allow) {
			return false
		}
	}
	return true
}

// queryParamMatches matches the values of one query parameter: present,
// and all of them (allow rules) or any of them (deny rules) matching.
func queryParamMatches(qm QueryMatch, vals []string, allow bool) bool {
	if len(vals) == 0 {
		return false
	}
	matched := 0
	for _, v := range vals {
		if queryValueMatches(qm, v) {
			matched++
		}
	}
	if allow {
		return matched == len(vals)
	}
	return matched > 0
}

// GlobMatch is OPA's glob.match (gobwas/glob), the builtin OpenShell's own
// Rego policy uses for hosts ('.'), binaries and paths ('/') and query
// values and methods (no separator). An invalid pattern matches nothing.
func GlobMatch(pattern string, value string, seps ...rune) bool {
	g, err := glob.Compile(pattern, seps...)
	return err == nil && g.Match(value)
}

// pathMatches matches a rule path: "**" (and an empty path) matches any
// path; otherwise a glob with '/' as separator, so "*" stays within a
// segment and "/x/**" needs the slash ("/x" itself does not match).
func pathMatches(pattern, p string) bool {
	if pattern == "" || pattern == "**" {
		return true
	}
	return GlobMatch(pattern, p, '/')
}

func queryValueMatches(qm QueryMatch, v string) bool {
	if len(qm.Any) > 0 {
		for _, g := range qm.Any {
			if GlobMatch(g, v) {
				return true
			}
		}
		return false
	}
	return qm.Glob != "" && GlobMatch(qm.Glob, v)
}

// NormalizeHost lower-cases h and drops a trailing dot, as OpenShell compares
// host names.
func NormalizeHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// hostMatches applies OpenShell's host matching: exact hosts compare
// case-insensitively; patterns are globs with '.' as separator, so "*." is
// one label and "**." one or more, and neither matches the apex.
func hostMatches(pattern, host string) bool {
	pattern = NormalizeHost(pattern)
	if !strings.Contains(pattern, "*") {
		return pattern == host
	}
	return GlobMatch(pattern, host, '.')
}

// endpointMatches matches host and port. A hostless endpoint with
// allowed_ips matches any host (the addresses are checked after resolution).
func endpointMatches(ep *Endpoint, host string, port int) bool {
	hostless := ep.Host == "" && len(ep.AllowedIPs) > 0
	if !hostless && !hostMatches(ep.Host, host) {
		return false
	}
	if ep.Port == port {
		return true
	}
	for _, p := range ep.Ports {
		if p == port {
			return true
		}
	}
	return false
}

// binaryMatches holds when a binary glob matches the process or any ancestor.
func binaryMatches(bins []Binary, chain []string) bool {
	for _, b := range bins {
		for _, exe := range chain {
			if b.Path == exe || (strings.Contains(b.Path, "*") && GlobMatch(b.Path, exe, '/')) {
				return true
			}
		}
	}
	return false
}

func privateAllowed(ep *Endpoint, a netip.Addr) bool {
	if len(ep.AllowedIPs) > 0 {
		return ipAllowed(ep.AllowedIPs, a)
	}
	return !strings.Contains(ep.Host, "*")
}

func ipAllowed(list []string, a netip.Addr) bool {
	a = a.Unmap()
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil && p.Contains(a) {
			return true
		}
		if ip, err := netip.ParseAddr(s); err == nil && ip.Unmap() == a {
			return true
		}
	}
	return false
}

// canonicalPath canonicalizes a request path the way OpenShell's L7 parser
// does before policy evaluation: percent-decoded, ";params" stripped, doubled
// slashes collapsed, dot segments resolved; an encoded slash (%2F) is
// rejected, as is a path that climbs above the root.
func canonicalPath(raw string) (string, error) {
	if strings.Contains(strings.ToLower(raw), "%2f") {
		return "", fmt.Errorf("encoded slash %%2F")
	}
	dec, err := url.PathUnescape(raw)
	if err != nil {
		return "", fmt.Errorf("bad percent-encoding: %w", err)
	}
	var segs []string
	for _, seg := range strings.Split(dec, "/") {
		seg, _, _ = strings.Cut(seg, ";")
		switch seg {
		case "", ".":
		case "..":
			if len(segs) == 0 {
				return "", fmt.Errorf("path climbs above /")
			}
			segs = segs[:len(segs)-1]
		default:
			segs = append(segs, seg)
		}
	}
	out := "/" + strings.Join(segs, "/")
	if strings.HasSuffix(dec, "/") && out != "/" {
		out += "/"
	}
	return out, nil
}
