package profile

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// checkAudienceOverrides is validate_token_grant_audience_overrides
// (profiles.rs:2331-2398 @ v0.0.111, v0.0.61 on): two overrides of one
// credential that bind the same port with equal specificity and overlapping
// host and path selectors are ambiguous.
func (c *checker) checkAudienceOverrides(base string, cr Credential) {
	var bindings []binding
	for i, o := range cr.TokenGrant.AudienceOverrides {
		for _, e := range c.p.Endpoints {
			for _, port := range endpointPorts(e.Port, e.Ports) {
				if !o.selects(e.Host, port) {
					continue
				}
				cand := newBinding(i, o, e, port)
				for _, b := range bindings {
					if b.ambiguous(cand) {
						c.errorf(base+".token_grant.audience_overrides", CodeTokenGrant, "make one selector more specific (a longer path or a literal host)",
							"credential '%s' has ambiguous token_grant audience_overrides at indexes %d and %d for %s:%d path selectors '%s' and '%s'",
							cr.Name, b.index, cand.index, cand.host, cand.port, b.path, cand.path)
					}
				}
				bindings = append(bindings, cand)
			}
		}
	}
}

// selects reports whether the override applies to an endpoint host and
// port: no host, or a host that matches the endpoint's or is matched by
// it, read as profile host patterns (glob.ProfileHost), and no port or the
// same one (profiles.rs:2408-2419 @ v0.0.111).
func (o AudienceOverride) selects(host string, port uint32) bool {
	oh := strings.TrimSpace(o.Host)
	hostOK := oh == "" || glob.NewProfileHost(oh).Match(host) || glob.NewProfileHost(host).Match(oh)
	return hostOK && (o.Port == 0 || o.Port == port)
}

// binding is an audience override bound to an endpoint port: its host and
// path selectors (the endpoint's where the override has none), compiled,
// and their specificity.
type binding struct {
	index      int
	host, path string
	port       uint32
	score      uint32
	hostPat    glob.ProfileHost
	pathPat    glob.EndpointPath
}

func newBinding(index int, o AudienceOverride, e Endpoint, port uint32) binding {
	host := cmp.Or(strings.TrimSpace(o.Host), strings.TrimSpace(e.Host))
	p := cmp.Or(strings.TrimSpace(o.Path), strings.TrimSpace(e.Path))
	return binding{index: index, host: strings.ToLower(host), port: port, path: p,
		score:   hostSpecificity(host) + pathSpecificity(p),
		hostPat: glob.NewProfileHost(host), pathPat: glob.NewEndpointPath(p)}
}

// ambiguous reports two bindings of different overrides on one port, with
// equal specificity and selectors that can overlap.
func (b binding) ambiguous(o binding) bool {
	return b.index != o.index && b.port == o.port && b.score == o.score &&
		b.hostPat.Overlaps(o.hostPat) && b.pathPat.Overlaps(o.pathPat)
}

// endpointPorts lists the ports an endpoint binds: its ports without the
// zeros, else its port unless zero (profiles.rs:2400-2406 @ v0.0.111).
func endpointPorts(port uint32, ports []uint32) []uint32 {
	if len(ports) == 0 {
		ports = []uint32{port}
	}
	return slices.DeleteFunc(slices.Clone(ports), func(p uint32) bool { return p == 0 })
}

// hostSpecificity and pathSpecificity rank selectors as the loader does
// (dynamic_token_grant_match_score, profiles.rs:2453-2472 @ v0.0.111): a
// host starts at 100000, loses 10000 per '*' (not below zero), and gains
// 100 per non-empty label and 1 per character other than '*'; a path other
// than "" and "**" scores 1000000 plus 1 per character other than '*'.
func hostSpecificity(p string) uint32 {
	stars := strings.Count(p, "*")
	labels := len(strings.FieldsFunc(p, func(r rune) bool { return r == '.' }))
	base := max(0, 100000-10000*stars)
	return uint32(base + 100*labels + utf8.RuneCountInString(p) - stars)
}

func pathSpecificity(p string) uint32 {
	if p == "" || p == "**" {
		return 0
	}
	return 1000000 + uint32(utf8.RuneCountInString(p)-strings.Count(p, "*"))
}
