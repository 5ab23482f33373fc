package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// endpointRef is one endpoint with the policy and index it came from.
type endpointRef struct {
	policy string
	index  int
	ep     *obj
}

// checkAmbiguity reports endpoints that can match the same connection but
// disagree on settings that need a single value. OpenShell rejects these
// from v0.0.97; before, which endpoint's settings win is unspecified.
//
// The comparison follows crates/openshell-policy/src/ambiguity.rs:
// connection settings (explicit tcp, tls, allowed_ips) must agree whenever
// host patterns and ports overlap; request settings (protocol, enforcement,
// encoded-slash and credential options) must agree when both endpoints carry
// L7 configuration for the same path selector.
func (c *checker) checkAmbiguity(eps []endpointRef) {
	if len(eps) < 2 {
		return
	}
	ns := make([]endpointNorm, len(eps))
	for i, r := range eps {
		ns[i] = normalizeEndpoint(r)
	}
	for i := range ns {
		for j := i + 1; j < len(ns); j++ {
			c.checkAmbiguousPair(&ns[i], &ns[j])
		}
	}
}

// checkAmbiguousPair reports a and b, the later endpoint, when they overlap
// with conflicting settings.
func (c *checker) checkAmbiguousPair(a, b *endpointNorm) {
	if !a.overlaps(b) || a.agrees(b) {
		return // the common case: nothing to report, nothing to format
	}
	if conflicts := a.conflicts(b); len(conflicts) > 0 {
		c.reportAmbiguity(a, b, conflicts)
	}
}

// reportAmbiguity reports two overlapping endpoints with conflicting settings
// on the second one: an error where OpenShell rejects them, else a warning.
func (c *checker) reportAmbiguity(a, b *endpointNorm, conflicts []string) {
	ra, rb := a.ref, b.ref
	msg := fmt.Sprintf("%s.endpoints[%d] (%s) and %s.endpoints[%d] (%s) overlap on port %s with conflicting settings: %s",
		ra.policy, ra.index, a.host, rb.policy, rb.index, b.host, strings.Join(sharedPorts(a.ports, b.ports), ","), strings.Join(conflicts, "; "))
	hint := "make the settings agree, or merge the endpoints into one"
	if c.supports(openshell.FeatureAmbiguityCheck) {
		c.errorf(rb.ep.node, rb.ep.path, CodeAmbiguousEndpoints, hint, "%s; OpenShell rejects the policy", msg)
	} else {
		c.warnf(rb.ep.node, rb.ep.path, CodeAmbiguousEndpoints, hint, "%s; OpenShell %s applies one of them unpredictably", msg, c.version)
	}
}

// endpointNorm is an endpoint reduced to what the ambiguity check compares.
type endpointNorm struct {
	ref      endpointRef
	ports    []int64
	host     string
	hostPat  *glob.CharHost // the host as the ambiguity check reads it
	tcp      bool
	tls      string
	ips      string
	l7       bool
	path     string
	protocol string
	enforce  string
	settings string
	bodies   string // protocol-specific body limits and MCP options
}

func normalizeEndpoint(r endpointRef) endpointNorm {
	ep := r.ep
	ips := normalizedIPs(ep)
	proto := strings.ToLower(ep.str("protocol"))
	reqProto := proto
	if proto == openshell.ProtocolTCP {
		reqProto = ""
	}
	host := strings.ToLower(ep.str("host"))
	return endpointNorm{
		ref:      r,
		bodies:   bodySettings(ep, reqProto),
		ports:    endpointPorts(ep),
		host:     host,
		hostPat:  glob.CompileCharHost(ep.str("host")),
		tcp:      proto == openshell.ProtocolTCP,
		tls:      tlsMode(ep),
		ips:      strings.Join(ips, ","),
		l7:       (proto != "" && proto != openshell.ProtocolTCP) || len(ips) > 0 || ep.str("tls") != "" || ep.kids["credential_binding"] != nil,
		path:     ep.str("path"),
		protocol: reqProto,
		enforce:  enforcementMode(ep),
		settings: credentialSettings(ep),
	}
}

// endpointPorts returns the positive ports of an endpoint: its ports list,
// else its single port.
func endpointPorts(ep *obj) []int64 {
	var ports []int64
	if list, _ := ep.strs("ports"); len(list) > 0 {
		for _, s := range list {
			if n := intValue(s); n > 0 {
				ports = append(ports, n)
			}
		}
	} else if p := ep.num("port"); p > 0 {
		ports = []int64{p}
	}
	return ports
}

// normalizedIPs returns allowed_ips lower-cased, trimmed, sorted and unique.
func normalizedIPs(ep *obj) []string {
	ips, _ := ep.strs("allowed_ips")
	for j := range ips {
		ips[j] = strings.ToLower(strings.TrimSpace(ips[j]))
	}
	slices.Sort(ips)
	return slices.Compact(ips)
}

func tlsMode(ep *obj) string {
	if strings.EqualFold(ep.str("tls"), openshell.TLSSkip) {
		return openshell.TLSSkip
	}
	return "auto"
}

func enforcementMode(ep *obj) string {
	if strings.EqualFold(ep.str("enforcement"), openshell.EnforcementEnforce) {
		return openshell.EnforcementEnforce
	}
	return openshell.EnforcementAudit
}

// bodySettings renders the protocol-specific body limits and MCP options.
func bodySettings(ep *obj, reqProto string) string {
	switch reqProto {
	case openshell.ProtocolGraphQL:
		return fmt.Sprintf("graphql_max_body_bytes=%d", bodyLimit(ep.num("graphql_max_body_bytes")))
	case openshell.ProtocolJSONRPC:
		return fmt.Sprintf("json_rpc max_body_bytes=%d", bodyLimit(ep.kids["json_rpc"].num("max_body_bytes")))
	case openshell.ProtocolMCP:
		mcp := ep.kids["mcp"]
		limit := mcp.num("max_body_bytes")
		if limit == 0 {
			limit = ep.kids["json_rpc"].num("max_body_bytes")
		}
		return fmt.Sprintf("max_body_bytes=%d mcp.strict_tool_names=%t", bodyLimit(limit), strictToolNames(mcp))
	}
	return ""
}

// credentialSettings renders the encoding and credential options.
func credentialSettings(ep *obj) string {
	return fmt.Sprintf("allow_encoded_slash=%t websocket_credential_rewrite=%t request_body_credential_rewrite=%t credential_signing=%q signing_service=%q signing_region=%q credential_binding=%q",
		ep.boolean("allow_encoded_slash"), ep.boolean("websocket_credential_rewrite"), ep.boolean("request_body_credential_rewrite"),
		ep.str("credential_signing"), ep.str("signing_service"), ep.str("signing_region"), ep.kids["credential_binding"].str("provider"))
}

// overlaps reports whether two endpoints can match the same connection.
func (a *endpointNorm) overlaps(b *endpointNorm) bool {
	return portsOverlap(a.ports, b.ports) && a.hostPat.Overlaps(b.hostPat)
}

// requestsCompete reports whether both endpoints carry L7 configuration for
// competing path selectors.
func (a *endpointNorm) requestsCompete(b *endpointNorm) bool {
	return a.l7 && b.l7 && pathsCompete(a.path, b.path)
}

// agrees reports whether two overlapping endpoints agree on every setting
// that needs a single value.
func (a *endpointNorm) agrees(b *endpointNorm) bool {
	if a.tcp != b.tcp || a.tls != b.tls || a.ips != b.ips {
		return false
	}
	return !a.requestsCompete(b) ||
		(a.protocol == b.protocol && a.enforce == b.enforce && a.settings == b.settings && a.bodies == b.bodies)
}

// conflicts lists the settings two overlapping endpoints disagree on.
func (a *endpointNorm) conflicts(b *endpointNorm) []string {
	var conflicts []string
	diff := func(field string, x, y any) {
		if x != y {
			conflicts = append(conflicts, fmt.Sprintf("%s %v vs %v", field, x, y))
		}
	}
	diff("explicit tcp", a.tcp, b.tcp)
	diff("tls", a.tls, b.tls)
	diff("allowed_ips", "["+a.ips+"]", "["+b.ips+"]")
	if !a.requestsCompete(b) {
		return conflicts
	}
	diff("protocol", quoteOrNone(a.protocol), quoteOrNone(b.protocol))
	diff("enforcement", a.enforce, b.enforce)
	if a.settings != b.settings {
		conflicts = append(conflicts, "credential/encoding options differ")
	}
	if a.protocol == b.protocol && a.bodies != b.bodies {
		conflicts = append(conflicts, fmt.Sprintf("%s vs %s", a.bodies, b.bodies))
	}
	return conflicts
}

// sharedPorts lists the ports of a that b also has, as text.
func sharedPorts(a, b []int64) []string {
	var shared []string
	for _, p := range a {
		if slices.Contains(b, p) {
			shared = append(shared, fmt.Sprint(p))
		}
	}
	return shared
}

// bodyLimit normalizes an omitted body limit to OpenShell's default (64 KiB).
func bodyLimit(n int64) int64 {
	if n == 0 {
		return 65536
	}
	return n
}

// pathsCompete reports whether two endpoint path selectors compete for the
// same request: they overlap and neither is more specific (OpenShell routes a
// request to the endpoint whose path has more literal characters).
func pathsCompete(a, b string) bool {
	if pathSpecificity(a) != pathSpecificity(b) {
		return false
	}
	if slices.Contains(everyPath, a) || slices.Contains(everyPath, b) || a == b {
		return true
	}
	ta, okA := pathGlobTokens(a)
	tb, okB := pathGlobTokens(b)
	if !okA || !okB || len(ta)*len(tb) > 1<<16 {
		// Malformed globs are reported elsewhere, and absurdly long ones are
		// not worth a quadratic walk: stay conservative.
		return true
	}
	return globsIntersect(ta, tb)
}

// everyPath are the path selectors that match every request.
var everyPath = []string{"", "**", "/**"}

func pathSpecificity(p string) int {
	return len(p) - strings.Count(p, "*")
}

// globToken is one element of a path glob: a literal byte, ? (any one
// character), a [class], or a star. In OpenShell's path matcher both * and
// ** cross /.
type globToken struct {
	kind  byte // 'l' literal, '?' any, '[' class, '*' star
	lit   byte
	class string
	neg   bool
}

func pathGlobTokens(p string) ([]globToken, bool) {
	var out []globToken
	for i := 0; i < len(p); {
		tok, next, ok := pathGlobToken(p, i)
		if !ok {
			return nil, false
		}
		out = append(out, tok)
		i = next
	}
	return out, true
}

// pathGlobToken reads the token of p at i and returns it with the index
// after it; false for a malformed star run or class.
func pathGlobToken(p string, i int) (globToken, int, bool) {
	switch p[i] {
	case '?':
		return globToken{kind: '?'}, i + 1, true
	case '*':
		return pathGlobStar(p, i)
	case '[':
		return pathGlobClass(p, i)
	}
	return globToken{kind: 'l', lit: p[i]}, i + 1, true
}

// pathGlobStar reads a run of stars: * anywhere, ** only as a whole segment.
func pathGlobStar(p string, i int) (globToken, int, bool) {
	j := i
	for j < len(p) && p[j] == '*' {
		j++
	}
	if j-i > 2 {
		return globToken{}, 0, false
	}
	if j-i == 2 && !wholeSegment(p, i, j) {
		return globToken{}, 0, false
	}
	return globToken{kind: '*'}, j, true
}

// wholeSegment reports whether p[i:j] is a whole /-separated segment of p.
func wholeSegment(p string, i, j int) bool {
	return (i == 0 || p[i-1] == '/') && (j == len(p) || p[j] == '/')
}

// pathGlobClass reads a [class] or [!class].
func pathGlobClass(p string, i int) (globToken, int, bool) {
	neg := i+1 < len(p) && p[i+1] == '!'
	start := i + 1
	if neg {
		start++
	}
	end := strings.IndexByte(p[start:], ']')
	if end <= 0 {
		return globToken{}, 0, false
	}
	return globToken{kind: '[', class: p[start : start+end], neg: neg}, start + end + 1, true
}

// globsIntersect reports whether some string matches both token lists: a
// memoized walk over (i, j) where a star either ends or absorbs one token of
// the other side.
func globsIntersect(a, b []globToken) bool {
	w := &globWalk{a: a, b: b, seen: map[[2]int]bool{}}
	return w.walk(0, 0)
}

// globWalk is the state of globsIntersect: the two token lists and the
// verdict of every (i, j) visited (false while a visit is in progress).
type globWalk struct {
	a, b []globToken
	seen map[[2]int]bool
}

// walk reports whether a[i:] and b[j:] match a common string.
func (w *globWalk) walk(i, j int) bool {
	if i > len(w.a) || j > len(w.b) {
		return false // a star absorbed past the end of the other side
	}
	key := [2]int{i, j}
	if v, ok := w.seen[key]; ok {
		return v
	}
	w.seen[key] = false
	ok := w.step(i, j)
	w.seen[key] = ok
	return ok
}

// step tries the moves from (i, j): a star ends or absorbs one token of the
// other side; two other tokens must be compatible.
func (w *globWalk) step(i, j int) bool {
	switch {
	case isStar(w.a, i):
		return w.walk(i+1, j) || w.walk(i, j+1)
	case isStar(w.b, j):
		return w.walk(i, j+1) || w.walk(i+1, j)
	case i == len(w.a) || j == len(w.b):
		return i == len(w.a) && j == len(w.b)
	}
	return tokensCompatible(w.a[i], w.b[j]) && w.walk(i+1, j+1)
}

// isStar reports whether tokens[i] is a star.
func isStar(tokens []globToken, i int) bool {
	return i < len(tokens) && tokens[i].kind == '*'
}

func tokensCompatible(x, y globToken) bool {
	switch [2]byte{x.kind, y.kind} {
	case [2]byte{'l', 'l'}:
		return x.lit == y.lit
	case [2]byte{'l', '['}:
		return y.classMatches(x.lit)
	case [2]byte{'[', 'l'}:
		return x.classMatches(y.lit)
	case [2]byte{'[', '['}:
		return classesOverlap(x, y)
	}
	return true // ? matches any one character
}

// classesOverlap reports whether some character is in both classes
// (token_character_ranges, ambiguity.rs:618-654 @ v0.0.111: /v[12] and
// /v[34] do not compete, replayed by TestUpstreamLoad from
// ambiguity.rs:847 @ v0.0.111). Bytes >= 0x80 stand for every non-ASCII
// character, which only a negated class contains.
func classesOverlap(x, y globToken) bool {
	for b := 0; b < 256; b++ {
		if x.classMatches(byte(b)) && y.classMatches(byte(b)) {
			return true
		}
	}
	return false
}

// classMatches reports whether the class token c, negated or not, matches
// byte b.
func (c globToken) classMatches(b byte) bool { return classContains(c, b) != c.neg }

func classContains(c globToken, b byte) bool {
	s := c.class
	for i := 0; i < len(s); i++ {
		if i+2 < len(s) && s[i+1] == '-' {
			if s[i] <= b && b <= s[i+2] {
				return true
			}
			i += 2
			continue
		}
		if s[i] == b {
			return true
		}
	}
	return false
}

func portsOverlap(a, b []int64) bool {
	for _, p := range a {
		if slices.Contains(b, p) {
			return true
		}
	}
	return false
}

func quoteOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
