package profile

import "strings"

// checkAudienceOverrides is validate_token_grant_audience_overrides
// (profiles.rs:2139-2211 @ v0.0.111, v0.0.61 on): two overrides of one
// credential that bind the same port with equal specificity and overlapping
// host and path selectors are ambiguous.
func (c *checker) checkAudienceOverrides(base string, cr Credential) {
	type binding struct {
		index      int
		host, path string
		port       uint32
		score      uint32
	}
	var bindings []binding
	for i, o := range cr.TokenGrant.AudienceOverrides {
		for _, e := range c.p.Endpoints {
			for _, port := range endpointPorts(e.Port, e.Ports) {
				if !overrideMatchesEndpoint(o, e.Host, port) {
					continue
				}
				host, p := trimSpace(o.Host), trimSpace(o.Path)
				if host == "" {
					host = trimSpace(e.Host)
				}
				if p == "" {
					p = trimSpace(e.Path)
				}
				cand := binding{index: i, host: strings.ToLower(host), port: port, path: p,
					score: hostSpecificity(host) + pathSpecificity(p)}
				for _, b := range bindings {
					if b.index != cand.index && b.port == cand.port && b.score == cand.score &&
						hostPatternsCanOverlap(b.host, cand.host) && pathPatternsCanOverlap(b.path, cand.path) {
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
	oh := trimSpace(o.Host)
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

func labelsMatch(p, h []string) bool {
	if len(p) == 0 {
		return len(h) == 0
	}
	switch p[0] {
	case "**":
		return labelsMatch(p[1:], h) || len(h) > 0 && labelsMatch(p, h[1:])
	case "*":
		return len(h) > 0 && labelsMatch(p[1:], h[1:])
	}
	return len(h) > 0 && h[0] == p[0] && labelsMatch(p[1:], h[1:])
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

func labelsOverlap(a, b []string) bool {
	switch {
	case len(a) == 0 && len(b) == 0:
		return true
	case len(a) == 0 && b[0] == "**":
		return labelsOverlap(a, b[1:])
	case len(b) == 0 && a[0] == "**":
		return labelsOverlap(a[1:], b)
	case len(a) == 0 || len(b) == 0:
		return false
	case a[0] == "**":
		return labelsOverlap(a[1:], b) || labelsOverlap(a, b[1:])
	case b[0] == "**":
		return labelsOverlap(a, b[1:]) || labelsOverlap(a[1:], b)
	}
	return (a[0] == "*" || b[0] == "*" || a[0] == b[0]) && labelsOverlap(a[1:], b[1:])
}

// pathPatternsCanOverlap is path_patterns_can_overlap (profiles.rs:2338-2362).
func pathPatternsCanOverlap(a, b string) bool {
	all := func(p string) bool { return p == "" || p == "**" || p == "/**" }
	if all(a) || all(b) {
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
	if pattern == p || pattern == "" || pattern == "**" || pattern == "/**" {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "/**"); ok {
		return p == prefix || strings.HasPrefix(p, prefix+"/")
	}
	ok, err := pathMatch(pattern, p)
	return err == nil && ok
}
