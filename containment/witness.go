package containment

import (
	"net/netip"
	"net/url"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// Witnesses: concrete requests in a child grant, decided by the decision
// engine on both policies. They confirm a structural proof (a witness the
// child allows and the parent denies overturns it) and give an unproven
// grant a concrete example. Each glob is instantiated at its most general
// reading and at its boundaries: "*" as a dotted segment and as one
// byte, "**" as several segments and as none (or one empty segment where
// globset needs a separator), and the connection at a private address.

// privateWitness is the address of the private-address witness
// (10.0.0.0/8, which a wildcard host may not reach without allowed_ips).
var privateWitness = netip.MustParseAddr("10.20.30.40")

// confirm runs the witnesses of a proven grant: each one the child allows
// and the parent denies is a violation; none means the proof stands.
func confirm(base Violation, u unit, c, p *side, reqs []*decide.Request) []Violation {
	for _, r := range reqs {
		if cd := c.d.Decide(r); !cd.Allowed {
			continue
		}
		if pd := p.d.Decide(r); !pd.Allowed {
			v := base
			v.Witness = r.String()
			v.Reason = "the structure looked contained, but the decision engine denies this request in the parent: " + pd.Reason
			return []Violation{v}
		}
	}
	return nil
}

// withWitness adds to an unproven grant the first witness the child
// allows and the parent denies, if any.
func withWitness(v Violation, u unit, c, p *side, reqs []*decide.Request) Violation {
	for _, r := range reqs {
		if c.d.Decide(r).Allowed && !p.d.Decide(r).Allowed {
			v.Witness = r.String()
			break
		}
	}
	return v
}

// base is the connection of u at one instance of its host and binary;
// false when either has a glob the witnesses do not instantiate.
func (u unit) base() (*decide.Request, bool) {
	host, ok := instantiate(u.ref.ep.Host)
	bin, okb := instantiate(u.bin.Path)
	if !ok || !okb || host == "" {
		return nil, false
	}
	r := &decide.Request{Scheme: "https", Host: host, Port: u.port, Binary: bin}
	if u.port == 80 {
		r.Scheme = "http"
	}
	if a, err := netip.ParseAddr(host); err == nil {
		r.Addr = a
	}
	return r, true
}

// instantiate fills a host or binary pattern's wildcards: a leading or
// whole "**" label or segment and every "*" with "w"; false when another
// glob byte remains.
func instantiate(pat string) (string, bool) {
	if !strings.Contains(pat, "*") {
		return pat, true // compared as text
	}
	s := strings.ReplaceAll(pat, "**", "w")
	s = strings.ReplaceAll(s, "*", "w")
	return s, !strings.ContainsAny(s, globMeta)
}

// allRequests are the witnesses of a grant of every request: the
// connection alone, at a private address, and requests of several methods
// and path shapes.
func allRequests(u unit) []*decide.Request {
	b, ok := u.base()
	if !ok {
		return nil
	}
	out := []*decide.Request{clone(b)}
	if !b.Addr.IsValid() {
		priv := clone(b)
		priv.Addr = privateWitness
		out = append(out, priv)
	}
	for _, m := range []string{"GET", "POST", "DELETE", "PATCH"} {
		for _, path := range []string{"/", "/a/b.c", "/x"} {
			r := clone(b)
			r.Method, r.Path = m, path
			out = append(out, r)
		}
	}
	return out
}

// ruleRequests are the witnesses of REST rules: each method a rule allows
// on each instance of its path, with its query filled in.
func ruleRequests(u unit, rules []openshell.Match) []*decide.Request {
	b, ok := u.base()
	if !ok {
		return nil
	}
	var out []*decide.Request
	for _, m := range rules {
		q, okq := queryInstance(m.Query)
		if !okq || m.Path == "" {
			continue
		}
		for _, method := range methodInstances(m.Method) {
			for _, path := range pathInstances(m.Path) {
				r := clone(b)
				r.Method, r.Path, r.Query = method, path, q
				out = append(out, r)
			}
		}
	}
	return out
}

func clone(r *decide.Request) *decide.Request {
	c := *r
	return &c
}

// methodInstances are the methods a rule's method allows, at most four.
func methodInstances(m string) []string {
	switch strings.ToUpper(m) {
	case "*":
		return []string{"GET", "POST", "DELETE", "PUT"}
	case "GET":
		return []string{"GET", "HEAD"}
	}
	return []string{strings.ToUpper(m)}
}

// pathInstances are instances of a rule path glob: "**" as several
// segments and as none, "*" as a dotted segment and as one byte; none
// when the path has a class, an alternate or an escape.
func pathInstances(p string) []string {
	if p == "**" {
		return []string{"/", "/a/b.c/d"}
	}
	if strings.ContainsAny(p, opaqueMeta) {
		return nil
	}
	if !strings.ContainsAny(p, globMeta) {
		return []string{p}
	}
	wide := fillPath(p, "a/b.c", "x.y")
	narrow := fillPath(p, "", "z")
	if narrow == wide || !strings.HasPrefix(narrow, "/") {
		return []string{wide}
	}
	return []string{wide, narrow}
}

// fillPath replaces each "**" segment with rec (a middle one with no
// segment when rec is empty) and each "*" and "?" inside a segment with
// one.
func fillPath(p, rec, one string) string {
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		if s == "**" {
			if rec == "" && i < len(segs)-1 {
				continue
			}
			out = append(out, rec)
			continue
		}
		s = strings.ReplaceAll(s, "**", "*")
		s = strings.ReplaceAll(s, "*", one)
		out = append(out, strings.ReplaceAll(s, "?", "q"))
	}
	return strings.Join(out, "/")
}

// queryInstance fills a rule's query globs ("*" as dotted text); false
// when one has a class, an alternate or an escape.
func queryInstance(q map[string]openshell.QueryMatch) (url.Values, bool) {
	if len(q) == 0 {
		return nil, true
	}
	vals := url.Values{}
	for k, m := range q {
		g := m.Glob
		if g == "" && len(m.Any) > 0 {
			g = m.Any[0]
		}
		if strings.ContainsAny(g, opaqueMeta) {
			return nil, false
		}
		vals.Set(k, strings.ReplaceAll(strings.ReplaceAll(g, "**", "*"), "*", "v"))
	}
	return vals, true
}

// globMatchDot is glob.match(pattern, [], value) as the engine matches
// query values.
func globMatchDot(pattern, value string) bool { return glob.Match(pattern, value) }
