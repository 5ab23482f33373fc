package lint

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"golang.org/x/net/publicsuffix"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/secretscan"
)

// Facts are what the engine computes in Go for one policy and hands the
// rules as data.fullsend.facts (lib.facts): things Rego cannot compute (the
// public suffix list, every spelling of an IPv4 address) or computes slowly
// (the secret scan, the walks for ${...} and {{...}}). Under conftest or
// opa, without the engine, the rules fall back to their Rego versions where
// there is one (FS018, FS019, FS023) and skip the facts-only checks;
// --write-context gives those tools the same data.
//
//	{"literal_secrets": {"<policy path>": ["<kind>", ...]},
//	 "strings": [["<policy path>", "<string with ${ or {{>"], ...],
//	 "hosts": {"<endpoint host as written>": {"ip": "<canonical address>",
//	                                          "multi_tenant_suffix": "<suffix>"}}}
//
// With a context the engine adds
//
//	"reachable_agents": ["<agent>", ...]
//
// (contextFacts), which Facts, without one, leaves out.
func Facts(p *openshell.Policy) map[string]any {
	v := factsValue(DocumentValue(p), p, nil, nil)
	out, err := ast.JSON(v)
	if err != nil {
		return map[string]any{} // unreachable: the value is built from strings and objects
	}
	m, _ := out.(map[string]any)
	return m
}

// factsValue builds the facts of policy p, whose document value is doc,
// with those of its context value c (data.fullsend.context) when c is not
// nil (contextFacts). memo, when not nil, holds the secret scan's verdicts
// for the strings of the other policies of the same Lint call.
func factsValue(doc ast.Value, p *openshell.Policy, c ast.Value, memo *secretMemo) ast.Value {
	secrets := ast.NewObject()
	var marked []*ast.Term
	walkStrings(doc, make([]pathSeg, 0, 8), func(path []pathSeg, s string) {
		if strings.Contains(s, "${") || strings.Contains(s, "{{") {
			marked = append(marked, ast.ArrayTerm(ast.StringTerm(renderPath(path)), ast.StringTerm(s)))
		}
		kinds := memo.kinds(s)
		if len(kinds) == 0 {
			return
		}
		terms := make([]*ast.Term, len(kinds))
		for i, k := range kinds {
			terms[i] = ast.StringTerm(k)
		}
		secrets.Insert(ast.StringTerm(renderPath(path)), ast.ArrayTerm(terms...))
	})
	hosts := hostsFacts(p)
	out := ast.NewObject(
		ast.Item(ast.InternedTerm("literal_secrets"), ast.NewTerm(secrets)),
		ast.Item(ast.InternedTerm("strings"), ast.ArrayTerm(marked...)),
		ast.Item(ast.InternedTerm("hosts"), ast.NewTerm(hosts)),
	)
	if c != nil {
		contextFacts(out, c)
	}
	return out
}

// hostsFacts describes each distinct endpoint host of p (hostFacts) that
// has a fact.
func hostsFacts(p *openshell.Policy) ast.Object {
	hosts := ast.NewObject()
	for _, np := range p.NetworkPolicies {
		for i := range np.Endpoints {
			h := np.Endpoints[i].Host
			key := ast.StringTerm(h)
			if hosts.Get(key) != nil {
				continue
			}
			if f := hostFacts(h); f.Len() > 0 {
				hosts.Insert(key, ast.NewTerm(f))
			}
		}
	}
	return hosts
}

// contextFacts adds the facts of context value c to facts: reachable_agents,
// the agents that c's agent can start through Agent(), directly or through
// other subagents, itself included. It is what FS027 (agents.rego) computes
// as graph.reachable(object.union(spawn_graph, {me: context.spawns}), {me})
// when the fact is absent; building spawn_graph costs the rule a pass over
// every agent of the project for every policy, this a walk of the agents
// actually reached. It is computed on the value the rules read, so the two
// agree on every input, valid or not.
func contextFacts(facts ast.Object, c ast.Value) {
	g, ok := newSpawnGraph(c)
	if !ok {
		return
	}
	facts.Insert(ast.InternedTerm("reachable_agents"), ast.NewTerm(g.reachable()))
}

// spawnGraph mirrors the graph the rule builds: its own spawns (mine) for
// the agent me, object.get(a, "spawns", []) for every agent a of agents
// whose entry is an object (object.get is undefined on anything else).
type spawnGraph struct {
	me, mine *ast.Term
	agents   ast.Object
}

// newSpawnGraph reads the graph from context value c; false when c has no
// agent (the rule needs one) or is not what the rule expects (it then
// decides).
func newSpawnGraph(c ast.Value) (spawnGraph, bool) {
	obj, ok := c.(ast.Object)
	if !ok {
		return spawnGraph{}, false
	}
	me := obj.Get(ast.InternedTerm("agent"))
	if me == nil {
		return spawnGraph{}, false // the rule needs an agent
	}
	agents := ast.NewObject()
	if a := obj.Get(ast.InternedTerm("agents")); a != nil {
		if agents, ok = a.Value.(ast.Object); !ok {
			return spawnGraph{}, false // not what the rule expects: let it decide
		}
	}
	mine := obj.Get(ast.InternedTerm("spawns"))
	if mine == nil {
		mine = ast.ArrayTerm()
	}
	return spawnGraph{me: me, mine: mine, agents: agents}, true
}

// edges returns the spawns of node, or nil when the graph lacks the node.
func (g spawnGraph) edges(node *ast.Term) *ast.Term {
	if node.Equal(g.me) {
		return g.mine
	}
	a := g.agents.Get(node)
	if a == nil {
		return nil
	}
	ao, ok := a.Value.(ast.Object)
	if !ok {
		return nil
	}
	if s := ao.Get(ast.InternedTerm("spawns")); s != nil {
		return s
	}
	return ast.ArrayTerm()
}

// reachable walks the graph from the agent as graph.reachable does
// (topdown/reachable.go in OPA): a node counts as reached once visited, if
// the graph has it.
func (g spawnGraph) reachable() ast.Set {
	reached := ast.NewSet()
	queue := []*ast.Term{g.me}
	visit := func(n *ast.Term) {
		if !reached.Contains(n) {
			queue = append(queue, n)
		}
	}
	for len(queue) > 0 {
		node := queue[0]
		queue = queue[1:]
		e := g.edges(node)
		if e == nil {
			continue
		}
		switch v := e.Value.(type) {
		case *ast.Array:
			v.Foreach(visit)
		case ast.Set:
			v.Foreach(visit)
		}
		reached.Add(node)
	}
	return reached
}

// secretMemo caches the secret scan's verdict on each distinct string of
// one Lint call: the policies of a compiled project repeat their
// baselines' strings (model API paths, binaries, hosts) in every agent, and
// a string that wakes gitleaks' generic-api-key rule ("token", "api") costs
// an NFA run each time. A nil memo scans every string.
type secretMemo struct {
	kindsOf sync.Map // string -> []string, nil when the string holds no secret
}

// kinds returns the kinds of credential in s (secretscan.FindAll), or nil.
func (m *secretMemo) kinds(s string) []string {
	if m == nil {
		return scanSecrets(s)
	}
	if k, ok := m.kindsOf.Load(s); ok {
		return k.([]string)
	}
	k := scanSecrets(s)
	m.kindsOf.Store(s, k)
	return k
}

func scanSecrets(s string) []string {
	scanner := secretscan.Default()
	if scanner.Find(s) == "" {
		return nil // the common case, without FindAll's allocations
	}
	return scanner.FindAll(s)
}

// walkStrings calls fn with every string value under v and its path. The
// path is rendered only on demand (renderPath): most strings need none, and
// building it for each was most of the walk's allocations. fn must not keep
// path, whose backing array the walk reuses.
func walkStrings(v ast.Value, path []pathSeg, fn func([]pathSeg, string)) {
	switch x := v.(type) {
	case ast.String:
		fn(path, string(x))
	case ast.Object:
		x.Foreach(func(k, elem *ast.Term) {
			if ks, ok := k.Value.(ast.String); ok {
				walkStrings(elem.Value, append(path, pathSeg{key: string(ks)}), fn)
			}
		})
	case *ast.Array:
		for i := range x.Len() {
			walkStrings(x.Elem(i).Value, append(path, pathSeg{index: i, isIndex: true}), fn)
		}
	}
}

// pathSeg is one step of a walk path: an object key or an array index.
type pathSeg struct {
	key     string
	index   int
	isIndex bool
}

// renderPath renders a walk path the way lib.render_path renders walk
// paths: "a.b[0].c".
func renderPath(path []pathSeg) string {
	var b strings.Builder
	for i, seg := range path {
		switch {
		case seg.isIndex:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(seg.index))
			b.WriteByte(']')
		case i > 0:
			b.WriteByte('.')
			b.WriteString(seg.key)
		default:
			b.WriteString(seg.key)
		}
	}
	return b.String()
}

// hostFacts describes one endpoint host: the address it names in any
// spelling a resolver accepts (ip), and the multi-tenant suffix its
// wildcard or name covers (multi_tenant_suffix).
func hostFacts(host string) ast.Object {
	o := ast.NewObject()
	if a, ok := HostAddr(host); ok {
		o.Insert(ast.InternedTerm("ip"), ast.StringTerm(a.String()))
	}
	if s := MultiTenantSuffix(host); s != "" {
		o.Insert(ast.InternedTerm("multi_tenant_suffix"), ast.StringTerm(s))
	}
	return o
}

// HostAddr returns the address a host names when a resolver would read it
// as an IP literal, in any spelling: dotted quads, the inet_aton forms
// getaddrinfo and curl accept (2130706433, 0177.0.0.1, 0x7f.1, 127.1, 0),
// bracketed IPv6, and IPv6 forms that embed an IPv4 address (IPv4-mapped
// ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96 and
// 64:ff9b:1::/48, 6to4 2002::/16), which are returned as that IPv4 address.
//
// OpenShell only recognises canonical literals (str::parse::<IpAddr> in
// implicit_allowed_ips_for_ip_host, crates/openshell-supervisor-network/src/proxy.rs:3587 @ v0.0.111);
// other spellings go to DNS, where getaddrinfo turns them into the address.
func HostAddr(host string) (netip.Addr, bool) {
	h := bareHost(host)
	if a, err := netip.ParseAddr(h); err == nil {
		return embeddedV4(a), true
	}
	if a, ok := parseInetAton(h); ok {
		return a, true
	}
	return netip.Addr{}, false
}

// bareHost trims a host for address parsing: spaces, the root's trailing
// dot, IPv6 brackets and a zone.
func bareHost(host string) string {
	h := strings.TrimSuffix(strings.TrimSpace(host), ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i] // zone
	}
	return h
}

// embeddedV4 returns the IPv4 address an IPv6 address carries, if any.
func embeddedV4(a netip.Addr) netip.Addr {
	if !a.Is6() {
		return a
	}
	a = a.Unmap()
	if a.Is4() || unspecifiedOrLoopback.Contains(a) {
		return a
	}
	for _, e := range v4Embeddings {
		if e.prefix.Contains(a) {
			b := a.As16()
			return netip.AddrFrom4([4]byte(b[e.offset : e.offset+4]))
		}
	}
	return a
}

// unspecifiedOrLoopback holds :: and ::1, which IPv4-compatible addresses
// leave out.
var unspecifiedOrLoopback = netip.MustParsePrefix("::/112")

// v4Embeddings are the IPv6 prefixes whose addresses carry an IPv4
// address, at offset.
var v4Embeddings = []struct {
	prefix netip.Prefix
	offset int
}{
	{netip.MustParsePrefix("::/96"), 12},          // IPv4-compatible ::a.b.c.d
	{netip.MustParsePrefix("64:ff9b::/96"), 12},   // NAT64 well-known prefix, RFC 6052
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12}, // NAT64 local-use prefix, RFC 8215 (a /96 in practice)
	{netip.MustParsePrefix("2002::/16"), 2},       // 6to4, RFC 3056
}

// parseInetAton parses the IPv4 forms of inet_aton(3): one to four parts,
// each decimal, octal (leading 0) or hex (0x); the last part fills the
// remaining bytes.
func parseInetAton(s string) (netip.Addr, bool) {
	vals, ok := atonParts(s)
	if !ok {
		return netip.Addr{}, false
	}
	var n uint64
	last := len(vals) - 1
	for i, v := range vals[:last] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		n |= v << (8 * (3 - i))
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(n))
	return netip.AddrFrom4(b), true
}

// atonParts parses the one to four dot-separated parts of an inet_aton(3)
// address.
func atonParts(s string) ([]uint64, bool) {
	if s == "" || len(s) > 64 {
		return nil, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return nil, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := atonPart(p)
		if !ok {
			return nil, false
		}
		vals[i] = v
	}
	return vals, true
}

// atonPart parses one part of an inet_aton(3) address: hex after 0x,
// octal after a leading 0, else decimal.
func atonPart(p string) (uint64, bool) {
	switch {
	case p == "0x" || p == "0X":
		return 0, true // "0x" alone is 0 to glibc
	case len(p) > 1 && strings.EqualFold(p[:2], "0x"):
		return parseUint32(p[2:], 16)
	case len(p) > 1 && p[0] == '0':
		return parseUint32(p[1:], 8)
	}
	return parseUint32(p, 10)
}

// parseUint32 parses digits (no sign, no prefix) in base as a 32-bit
// value.
func parseUint32(digits string, base int) (uint64, bool) {
	v, err := strconv.ParseUint(digits, base, 32)
	return v, err == nil
}

// MultiTenantSuffix returns the suffix of the public suffix list's private
// section (names anyone can register under: github.io, workers.dev,
// s3.amazonaws.com, ngrok-free.app...) that a host or host glob reaches
// beyond one tenant, or "". A wildcard at or right above such a suffix
// ("*.github.io", "**.workers.dev") covers every tenant; an exact name
// directly under it ("myorg.github.io") is one tenant's and is not flagged,
// nor is anything under the ICANN section (FS001 and FS002 cover those).
//
// golang.org/x/net/publicsuffix reports icann=false both for private-section
// rules and for the implicit "*" rule of unlisted TLDs; a private suffix
// always has a dot, an unlisted TLD never does.
func MultiTenantSuffix(host string) string {
	h := openshell.NormalizeHost(host)
	labels := strings.Split(h, ".")
	first := slices.IndexFunc(labels, func(l string) bool { return !strings.Contains(l, "*") })
	if first <= 0 {
		return "" // an exact name is one tenant's (0); wildcards alone are FS001's (-1)
	}
	rest := strings.Join(labels[first:], ".")
	s, icann := publicsuffix.PublicSuffix("x." + rest)
	if icann || !strings.Contains(s, ".") {
		return ""
	}
	// The wildcard covers registrable names when what follows it is the
	// suffix, or lies above it (a wildcard rule such as
	// *.compute.amazonaws.com makes the suffix longer than rest).
	if s == rest || strings.HasSuffix(s, "."+rest) {
		return s
	}
	return ""
}
