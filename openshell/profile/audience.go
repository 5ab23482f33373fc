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
				host, p := strings.TrimSpace(o.Host), strings.TrimSpace(o.Path)
				if host == "" {
					host = strings.TrimSpace(e.Host)
				}
				if p == "" {
					p = strings.TrimSpace(e.Path)
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

// labelsMatch is host_pattern_labels_match, memoised so that many `**`
// labels cost O(len(p)*len(h)), not exponential time.
func labelsMatch(p, h []string) bool {
	memo := map[[2]int]bool{}
	var m func(i, j int) bool
	m = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var r bool
		switch {
		case i == len(p):
			r = j == len(h)
		case p[i] == "**":
			r = m(i+1, j) || j < len(h) && m(i, j+1)
		case p[i] == "*":
			r = j < len(h) && m(i+1, j+1)
		default:
			r = j < len(h) && h[j] == p[i] && m(i+1, j+1)
		}
		memo[key] = r
		return r
	}
	return m(0, 0)
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

// labelsOverlap is host_pattern_labels_can_overlap, memoised.
func labelsOverlap(a, b []string) bool {
	memo := map[[2]int]bool{}
	var m func(i, j int) bool
	m = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var r bool
		switch {
		case i == len(a) && j == len(b):
			r = true
		case i == len(a) && b[j] == "**":
			r = m(i, j+1)
		case j == len(b) && a[i] == "**":
			r = m(i+1, j)
		case i == len(a) || j == len(b):
			r = false
		case a[i] == "**":
			r = m(i+1, j) || m(i, j+1)
		case b[j] == "**":
			r = m(i, j+1) || m(i+1, j)
		default:
			r = (a[i] == "*" || b[j] == "*" || a[i] == b[j]) && m(i+1, j+1)
		}
		memo[key] = r
		return r
	}
	return m(0, 0)
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
