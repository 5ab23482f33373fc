package containment

import (
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// Glob subsumption: whether every string a child pattern matches, a parent
// pattern matches too, with the semantics the decision engine gives each
// field (openshell/decide match.go and l4.go, after sandbox-policy.rego
// @ v0.0.111): a path is globset with '/' as separator, "**" alone
// matching everything; a host or binary without '*' compares as text
// (hosts case-insensitively) and with '*' is a glob over '.' (hosts) or '/'
// (binaries). A true answer is a proof; false means not proven.
//
// The segment proof reads globset's recursive forms as openshell/glob
// parses them: "**/" leading (zero or more segments), "/**/" in the middle
// (zero or more), "/**" trailing (a separator and anything after it, so at
// least one, possibly empty, segment); "**" inside a segment is two '*'.
// A host's leading "**." is one or more labels; "**" elsewhere in a host is
// not read and proves nothing.

// globMeta are the bytes globset reads as more than themselves.
const globMeta = "?*[{}\\"

// opaqueMeta are the constructs the segment proof does not read: a class,
// an alternate (which may span separators) and an escape.
const opaqueMeta = "[{}\\"

// pathCovers reports whether the rule path glob parent matches every path
// child matches.
func pathCovers(parent, child string) bool {
	switch {
	case parent == "**" || parent == child:
		return true
	case child == "**":
		// Every request path the engine matches is canonical origin-form,
		// so it starts with '/' (decide's canonicalRequestPath, after
		// l7/path.rs canonicalize_request_target @ v0.0.111), and "/**"
		// matches every such path.
		return parent == "/**"
	case !strings.ContainsAny(child, globMeta):
		return glob.Match(parent, child, '/')
	case strings.ContainsAny(parent+child, opaqueMeta):
		return false
	}
	return segmentsCover(strings.Split(parent, "/"), strings.Split(child, "/"), pathRecursion)
}

// binaryCovers reports whether the binary path (or '*' glob) parent
// matches every process path child matches.
func binaryCovers(parent, child string) bool {
	return segmentGlobCovers(parent, child, '/', pathRecursion, nil)
}

// hostCovers reports whether the endpoint host parent matches every host
// child matches (both non-empty).
func hostCovers(parent, child string) bool {
	return segmentGlobCovers(strings.ToLower(parent), strings.ToLower(child), '.', hostRecursion, innerRecursion)
}

// segmentGlobCovers is binaryCovers and hostCovers: a pattern without '*'
// compares as text, a literal child is matched by the parent glob over
// sep, and two globs go to the segment proof unless either holds what it
// does not read (opaqueMeta, or what unread reports).
func segmentGlobCovers(parent, child string, sep rune, rec recursion, unread func(string) bool) bool {
	switch {
	case parent == child:
		return true
	case !strings.Contains(parent, "*"):
		return false
	case !strings.Contains(child, "*"):
		return glob.Match(parent, child, sep)
	case strings.ContainsAny(parent+child, opaqueMeta) || unread != nil && (unread(parent) || unread(child)):
		return false
	}
	return segmentsCover(strings.Split(parent, string(sep)), strings.Split(child, string(sep)), rec)
}

// innerRecursion reports a "**" anywhere in a host but as its whole first
// label, which the segment proof does not read.
func innerRecursion(host string) bool {
	i := strings.Index(host, "**")
	return i >= 0 && (i != 0 || !strings.HasPrefix(host, "**.") || strings.Contains(host[2:], "**"))
}

// hostsMayOverlap reports whether some host could match both endpoint
// hosts: false only when that is certain (two different literal hosts, or
// literal suffixes after their wildcard labels that cannot both hold).
// An empty host (an allowed_ips endpoint) overlaps every host.
func hostsMayOverlap(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if a == "" || b == "" || a == b {
		return true
	}
	sa, oka := literalSuffix(a)
	sb, okb := literalSuffix(b)
	if !oka || !okb {
		return true
	}
	wa, wb := sa != a, sb != b
	switch {
	case !wa && !wb:
		return false
	case !wa:
		return strings.HasSuffix(a, "."+sb)
	case !wb:
		return strings.HasSuffix(b, "."+sa)
	}
	return sa == sb || strings.HasSuffix(sa, "."+sb) || strings.HasSuffix(sb, "."+sa)
}

// literalSuffix is host after its leading wildcard labels ("*." or
// "**."), the host itself without one; false when a wildcard or other
// glob byte remains.
func literalSuffix(h string) (string, bool) {
	s := h
	for strings.HasPrefix(s, "*.") || strings.HasPrefix(s, "**.") {
		s = s[strings.IndexByte(s, '.')+1:]
	}
	return s, !strings.ContainsAny(s, globMeta)
}

// recursion says where a "**" segment of a pattern is recursive and how
// many segments it must take at least there (-1: not recursive).
type recursion func(i, n int) int

// pathRecursion: leading and middle "**" take zero or more segments, a
// trailing one (after a separator) at least one.
func pathRecursion(i, n int) int {
	if i == n-1 && i > 0 {
		return 1
	}
	return 0
}

// hostRecursion: only a leading "**" label is recursive, one label or more.
func hostRecursion(i, _ int) int {
	if i == 0 {
		return 1
	}
	return -1
}

// segmentsCover reports whether the parent segments match every string the
// child segments match.
func segmentsCover(p, c []string, rec recursion) bool {
	memo := map[[2]int]bool{}
	seen := map[[2]int]bool{}
	var cover func(i, j int) bool
	cover = func(i, j int) bool {
		k := [2]int{i, j}
		if seen[k] {
			return memo[k]
		}
		seen[k] = true
		memo[k] = coverAt(p, c, i, j, rec, cover)
		return memo[k]
	}
	return cover(0, 0)
}

// coverAt is one step of segmentsCover: parent segment i against child
// segment j onwards.
func coverAt(p, c []string, i, j int, rec recursion, cover func(i, j int) bool) bool {
	if i == len(p) {
		return j == len(c)
	}
	if p[i] == "**" {
		if min := rec(i, len(p)); min >= 0 {
			for k := j + min; k <= len(c); k++ {
				if cover(i+1, k) {
					return true
				}
			}
			return false
		}
	}
	if j == len(c) || (c[j] == "**" && rec(j, len(c)) >= 0) {
		return false
	}
	return segmentCovers(p[i], c[j]) && cover(i+1, j+1)
}

// segmentCovers reports whether one parent segment matches every string
// one child segment matches (neither holds a separator).
func segmentCovers(p, c string) bool {
	switch {
	case p == c || p == "*" || p == "**":
		return true
	case !strings.ContainsAny(c, globMeta):
		return glob.Match(p, c, '/')
	}
	return false
}
