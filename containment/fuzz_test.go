package containment

import (
	"net/netip"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// The fuzz vocabularies: patterns a policy is built from, and the concrete
// values the requests sampled against both policies are built from.
var (
	fzHosts   = []string{"api.example.com", "x.example.com", "*.example.com", "**.example.com", "*.b.example.com", "a.b.example.com", "other.org", "10.0.0.5"}
	fzPaths   = []string{"/**", "**", "/a/**", "/a/*", "/a/*/c", "/a/**/c", "/a/b", "/*", "/a/b/*.json", "/a/b/**", "/a/?", "/a/{b,c}"}
	fzMethods = []string{"GET", "POST", "*", "HEAD", "DELETE"}
	fzBins    = []string{"/usr/bin/curl", "/usr/bin/*", "/usr/**", "/usr/bin/git"}
	fzPorts   = []int{443, 80}

	sampleHosts   = []string{"api.example.com", "x.example.com", "a.b.example.com", "q.example.com", "c.a.b.example.com", "example.com", "other.org", "10.0.0.5"}
	samplePaths   = []string{"/", "/a", "/a/", "/a/b", "/a/c", "/a/b/c", "/a/x.y", "/a/b/x.json", "/a/z/c", "/a/z/y/c", "/q", "/a/b/"}
	sampleMethods = []string{"", "GET", "POST", "HEAD", "DELETE", "PUT"}
	sampleBins    = []string{"/usr/bin/curl", "/usr/bin/git", "/usr/bin/python3", "/usr/local/bin/x"}
	sampleAddrs   = []netip.Addr{{}, netip.MustParseAddr("10.20.30.40"), netip.MustParseAddr("8.8.8.8")}
)

// reader hands out the fuzz input's bytes as small choices.
type reader struct {
	b []byte
	i int
}

func (r *reader) n(k int) int {
	if r.i >= len(r.b) {
		return 0
	}
	r.i++
	return int(r.b[r.i-1]) % k
}

func pick[T any](r *reader, xs []T) T { return xs[r.n(len(xs))] }

// fuzzPolicy builds a policy of up to three network policies from r.
func fuzzPolicy(r *reader) *openshell.Policy {
	p := pol()
	for k := 0; k <= r.n(3); k++ {
		n := openshell.NetworkPolicy{Name: "n"}
		for b := 0; b <= r.n(2); b++ {
			n.Binaries = append(n.Binaries, openshell.Binary{Path: pick(r, fzBins)})
		}
		for e := 0; e <= r.n(2); e++ {
			n.Endpoints = append(n.Endpoints, fuzzEndpoint(r))
		}
		p.NetworkPolicies[string(rune('a'+k))] = n
	}
	return p
}

// fuzzEndpoint is an endpoint of one of the shapes the proof reads
// differently: REST rules, an access preset, L4, tls: skip, audit, deny
// rules, allowed_ips.
func fuzzEndpoint(r *reader) openshell.Endpoint {
	e := openshell.Endpoint{Host: pick(r, fzHosts), Port: pick(r, fzPorts)}
	switch r.n(7) {
	case 0:
		return e
	case 1:
		e.TLS = openshell.TLSSkip
		return e
	case 2:
		e.Protocol, e.Enforcement, e.Access = "rest", "enforce", pick(r, []string{"read-only", "read-write", "full"})
		return e
	case 3:
		e.Protocol = "rest" // audit
	case 4:
		e.AllowedIPs = []string{"10.0.0.0/8"}
		fallthrough
	default:
		e.Protocol, e.Enforcement = "rest", "enforce"
	}
	for j := 0; j <= r.n(3); j++ {
		e.Rules = append(e.Rules, openshell.Rule{Allow: openshell.Match{Method: pick(r, fzMethods), Path: pick(r, fzPaths)}})
	}
	if r.n(5) == 0 {
		e.DenyRules = []openshell.Match{{Method: pick(r, fzMethods), Path: pick(r, fzPaths)}}
	}
	return e
}

// FuzzCheck: when Check finds a child contained, every sampled request the
// decision engine lets through the child, it lets through the parent.
func FuzzCheck(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 5, 0, 0, 0, 0, 0}, []byte{0, 0, 0, 0, 5, 0, 0, 0, 0, 0})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7}, []byte{7, 6, 5, 4, 3, 2, 1})
	f.Add([]byte{0, 0, 3, 0, 6, 2, 2, 0, 1}, []byte{0, 0, 3, 0, 6, 1, 0, 0})
	f.Fuzz(func(t *testing.T, cb, pb []byte) {
		child, parent := fuzzPolicy(&reader{b: cb}), fuzzPolicy(&reader{b: pb})
		vs, err := Check(child, parent, Options{})
		if err != nil || len(vs) > 0 {
			return
		}
		cd, _ := decide.New(child, "")
		pd, _ := decide.New(parent, "")
		for _, r := range sampleRequests() {
			if cd.Decide(r).Allowed && !pd.Decide(r).Allowed {
				t.Fatalf("contained, but the parent denies %s: %s\nchild: %+v\nparent: %+v", r, pd.Decide(r).Reason, child.NetworkPolicies, parent.NetworkPolicies)
			}
		}
	})
}

// sampleRequests is every combination of the sample values.
func sampleRequests() []*decide.Request {
	var out []*decide.Request
	for _, h := range sampleHosts {
		for _, port := range fzPorts {
			for _, b := range sampleBins {
				for _, a := range sampleAddrs {
					for _, m := range sampleMethods {
						for _, p := range samplePaths {
							if m == "" && p != "/" {
								continue
							}
							out = append(out, &decide.Request{Scheme: "https", Host: h, Port: port, Binary: b, Addr: a, Method: m, Path: p})
						}
					}
				}
			}
		}
	}
	return out
}

// FuzzCover: a cover the segment proof claims holds on every sampled
// value the child pattern matches, as the engine's glob matches it.
func FuzzCover(f *testing.F) {
	f.Add(uint8(0), uint8(2))
	f.Add(uint8(5), uint8(3))
	f.Fuzz(func(t *testing.T, pi, ci uint8) {
		p, c := fzPaths[int(pi)%len(fzPaths)], fzPaths[int(ci)%len(fzPaths)]
		if pathCovers(p, c) {
			for _, x := range samplePaths {
				if globPath(c, x) && !globPath(p, x) {
					t.Fatalf("pathCovers(%q, %q), but %q matches only the child", p, c, x)
				}
			}
		}
		hp, hc := fzHosts[int(pi)%len(fzHosts)], fzHosts[int(ci)%len(fzHosts)]
		if hostCovers(hp, hc) {
			for _, x := range sampleHosts {
				if hostMatch(hc, x) && !hostMatch(hp, x) {
					t.Fatalf("hostCovers(%q, %q), but %q matches only the child", hp, hc, x)
				}
			}
		}
	})
}

// globPath is decide's pathMatches.
func globPath(pat, v string) bool { return pat == "**" || glob.Match(pat, v, '/') }

// hostMatch is decide's endpointMatches on the host.
func hostMatch(pat, h string) bool {
	if pat == h {
		return true
	}
	return len(pat) > 0 && glob.Match(pat, h, '.') && containsStar(pat)
}

func containsStar(s string) bool {
	for i := range s {
		if s[i] == '*' {
			return true
		}
	}
	return false
}
