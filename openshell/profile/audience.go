package profile

import (
	"cmp"
	"slices"
	"strings"
)

// checkAudienceOverrides is validate_token_grant_audience_overrides
// (profiles.rs:2139-2211 @ v0.0.111, v0.0.61 on): two overrides of one
// credential that bind the same port with equal specificity and overlapping
// host and path selectors are ambiguous.
func (c *checker) checkAudienceOverrides(base string, cr Credential) {
	var bindings []binding
	for i, o := range cr.TokenGrant.AudienceOverrides {
		for _, e := range c.p.Endpoints {
			for _, port := range endpointPorts(e.Port, e.Ports) {
				if !overrideMatchesEndpoint(o, e.Host, port) {
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

// binding is audience override index bound to an endpoint port: its host
// and path selectors (the endpoint's where the override has none) and
// their specificity.
type binding struct {
	index      int
	host, path string
	port       uint32
	score      uint32
}

func newBinding(index int, o AudienceOverride, e Endpoint, port uint32) binding {
	host := cmp.Or(strings.TrimSpace(o.Host), strings.TrimSpace(e.Host))
	p := cmp.Or(strings.TrimSpace(o.Path), strings.TrimSpace(e.Path))
	return binding{index: index, host: strings.ToLower(host), port: port, path: p,
		score: hostSpecificity(host) + pathSpecificity(p)}
}

// ambiguous reports two bindings of different overrides on one port, with
// equal specificity and selectors that can overlap.
func (b binding) ambiguous(o binding) bool {
	return b.index != o.index && b.port == o.port && b.score == o.score &&
		hostPatternsCanOverlap(b.host, o.host) && pathPatternsCanOverlap(b.path, o.path)
}

// endpointPorts is profiles.rs:2213-2219.
func endpointPorts(port uint32, ports []uint32) []uint32 {
	if len(ports) == 0 {
		if port == 0 {
			return nil
		}
		return []uint32{port}
	}
	var out []uint32
	for _, p := range ports {
		if p != 0 {
			out = append(out, p)
		}
	}
	return out
}

// overrideMatchesEndpoint is token_grant_override_matches_endpoint (profiles.rs:2221-2232).
func overrideMatchesEndpoint(o AudienceOverride, host string, port uint32) bool {
	oh := strings.TrimSpace(o.Host)
	hostOK := oh == "" || hostPatternMatches(oh, host) || hostPatternMatches(host, oh)
	return hostOK && (o.Port == 0 || o.Port == port)
}

// hostPatternMatches is host_pattern_matches (profiles.rs:2234-2264): `*`
// one label, `**` any number.
func hostPatternMatches(pattern, host string) bool {
	pattern, host = strings.ToLower(pattern), strings.ToLower(host)
	if pattern == host {
		return true
	}
	if !strings.Contains(pattern, "*") {
		return false
	}
	return labelsMatch(strings.Split(pattern, "."), strings.Split(host, "."))
}

// labelsMatch is host_pattern_labels_match.
func labelsMatch(p, h []string) bool {
	return memoized(func(m func(i, j int) bool, i, j int) bool {
		switch {
		case i == len(p):
			return j == len(h)
		case p[i] == "**":
			return m(i+1, j) || j < len(h) && m(i, j+1)
		case j == len(h):
			return false
		}
		return (p[i] == "*" || h[j] == p[i]) && m(i+1, j+1)
	})(0, 0)
}

// memoized returns the recursion step defines over index pairs, each pair
// computed once, so that the label matchers cost O(len(a)*len(b)) with
// many `**` labels, not exponential time.
func memoized(step func(rec func(i, j int) bool, i, j int) bool) func(i, j int) bool {
	memo := map[[2]int]bool{}
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		r := step(rec, i, j)
		memo[key] = r
		return r
	}
	return rec
}

// hostSpecificity and pathSpecificity are host_pattern_specificity and
// endpoint_path_specificity (profiles.rs:2270-2287).
func hostSpecificity(p string) uint32 {
	labels := 0
	for _, l := range strings.Split(p, ".") {
		if l != "" {
			labels++
		}
	}
	stars := strings.Count(p, "*")
	score := int64(100000) - int64(stars)*10000
	if score < 0 {
		score = 0
	}
	return uint32(score + int64(labels)*100 + int64(len([]rune(p))-stars))
}

func pathSpecificity(p string) uint32 {
	if p == "" || p == "**" {
		return 0
	}
	return 1000000 + uint32(len([]rune(p))-strings.Count(p, "*"))
}

// hostPatternsCanOverlap is host_patterns_can_overlap (profiles.rs:2293-2336).
func hostPatternsCanOverlap(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if !strings.Contains(a, "*") {
		return hostPatternMatches(b, a)
	}
	if !strings.Contains(b, "*") {
		return hostPatternMatches(a, b)
	}
	return labelsOverlap(strings.Split(a, "."), strings.Split(b, "."))
}

// labelsOverlap is host_pattern_labels_can_overlap.
func labelsOverlap(a, b []string) bool {
	return memoized(func(m func(i, j int) bool, i, j int) bool {
		switch {
		case i == len(a) || j == len(b):
			// One side is used up: the rest of the other must be `**`s.
			return allGlobstars(a[i:]) && allGlobstars(b[j:])
		case a[i] == "**" || b[j] == "**":
			// A `**` matches no more labels, or the other side's next.
			return m(i+1, j) || m(i, j+1)
		}
		return (a[i] == "*" || b[j] == "*" || a[i] == b[j]) && m(i+1, j+1)
	})(0, 0)
}

func allGlobstars(labels []string) bool {
	return !slices.ContainsFunc(labels, func(l string) bool { return l != "**" })
}

// pathPatternsCanOverlap is path_patterns_can_overlap (profiles.rs:2338-2362).
func pathPatternsCanOverlap(a, b string) bool {
	if matchesAllPaths(a) || matchesAllPaths(b) {
		return true
	}
	if !strings.Contains(a, "*") {
		return endpointPathMatches(b, a)
	}
	if !strings.Contains(b, "*") {
		return endpointPathMatches(a, b)
	}
	pa, okA := strings.CutSuffix(a, "/**")
	pb, okB := strings.CutSuffix(b, "/**")
	if okA && okB {
		return pa == pb || strings.HasPrefix(pa, pb+"/") || strings.HasPrefix(pb, pa+"/")
	}
	return true
}

// endpointPathMatches is openshell_core::endpoint_path::matches
// (endpoint_path.rs:24-69 @ v0.0.111): empty, ** and /** match all; a
// trailing /** the path and its descendants; else a glob (an invalid one
// matches only itself).
func endpointPathMatches(pattern, p string) bool {
	if pattern == p || matchesAllPaths(pattern) {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "/**"); ok {
		return p == prefix || strings.HasPrefix(p, prefix+"/")
	}
	ok, err := pathMatch(pattern, p)
	return err == nil && ok
}

// matchesAllPaths reports the path patterns that match every path: empty,
// ** and /**.
func matchesAllPaths(pattern string) bool {
	return pattern == "" || pattern == "**" || pattern == "/**"
}
