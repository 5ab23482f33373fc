package glob

import "strings"

// EndpointPath is a provider profile endpoint's path selector as OpenShell
// matches it (openshell-core/src/endpoint_path.rs:6-69 @ v0.0.111; at
// v0.0.83 the same rules sat in profiles.rs:1583-1602):
//
//   - "", "**" and "/**" select every path;
//   - a pattern ending in "/**" selects the path before it and everything
//     below it ("/v1/**" selects "/v1" and "/v1/chat", not "/v10");
//   - any other pattern is a Rust glob::Pattern with the default options
//     (`*` crosses '/'); one the glob crate refuses selects only the path
//     spelled exactly like it;
//   - a path spelled exactly like the pattern is always selected.
type EndpointPath struct {
	src    string
	all    bool
	prefix string // for a "/**" subtree, the path before it
	sub    bool
	glob   *RustPattern // nil: no glob (all, a subtree, or refused)
}

// NewEndpointPath reads a path selector.
func NewEndpointPath(pattern string) EndpointPath {
	e := EndpointPath{src: pattern}
	if matchesEveryPath(pattern) {
		e.all = true
		return e
	}
	if prefix, ok := strings.CutSuffix(pattern, "/**"); ok {
		e.prefix, e.sub = prefix, true
		return e
	}
	if g, ok := ParseRust(pattern); ok {
		e.glob = &g
	}
	return e
}

// matchesEveryPath reports the selectors that select every path.
func matchesEveryPath(p string) bool { return p == "" || p == "**" || p == "/**" }

// Match reports whether the selector selects path.
func (e EndpointPath) Match(path string) bool {
	switch {
	case e.all || path == e.src:
		return true
	case e.sub:
		rest, ok := strings.CutPrefix(path, e.prefix)
		return ok && (rest == "" || rest[0] == '/')
	case e.glob != nil:
		return e.glob.Match(path)
	}
	return false
}

// Overlaps reports whether the two selectors may select a common path, as
// the profile loader tells two audience overrides apart
// (path_patterns_can_overlap, profiles.rs:2517-2535 @ v0.0.111,
// 1563-1581 @ v0.0.83). It is exact when one side has no `*` (that side is
// then read as a path, `?` and `[` included) or both are subtrees; two
// other wildcard selectors are assumed to overlap.
func (e EndpointPath) Overlaps(o EndpointPath) bool {
	switch {
	case e.all || o.all:
		return true
	case !strings.Contains(e.src, "*"):
		return o.Match(e.src)
	case !strings.Contains(o.src, "*"):
		return e.Match(o.src)
	case e.sub && o.sub:
		return nested(e.prefix, o.prefix) || nested(o.prefix, e.prefix)
	}
	return true
}

// nested reports whether the path inner is outer or below it.
func nested(inner, outer string) bool {
	rest, ok := strings.CutPrefix(inner, outer)
	return ok && (rest == "" || rest[0] == '/')
}
