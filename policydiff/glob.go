package policydiff

import (
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// Path comparison for L7 rules. OpenShell matches a rule path with
// glob.match(pattern, ["/"], path), "**" alone matching everything
// (sandbox-policy.rego:736-741 @ v0.0.111; openshell/decide/match.go and
// openshell/glob/glob.go model it): '*' stays inside one segment, a whole "**"
// segment spans segments. A {{PLACEHOLDER}} is an unknown single segment
// value (the validators refuse '/', '*' and ".." in one), so '*' covers it
// and nothing else but itself does.

// covers reports whether every request path pattern b matches is matched
// by a. It is sound, not complete: when it cannot tell it answers false, and
// the caller reports a change instead of a widen or narrow.
func covers(a, b string) bool {
	if a == b || a == "**" {
		return true
	}
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	c := &coverage{as: as, bs: bs, memo: make([]int8, (len(as)+1)*(len(bs)+1))}
	return c.match(0, 0)
}

// coverage matches the segments of pattern as against those of pattern
// bs, memoizing each (i, j) suffix pair: 1 covered, -1 not, 0 unknown.
type coverage struct {
	as, bs []string
	memo   []int8
}

// match reports whether as[i:] covers bs[j:].
func (c *coverage) match(i, j int) bool {
	k := i*(len(c.bs)+1) + j
	if c.memo[k] != 0 {
		return c.memo[k] > 0
	}
	ok := c.step(i, j)
	c.memo[k] = -1
	if ok {
		c.memo[k] = 1
	}
	return ok
}

// step compares as[i] with bs[j] and matches the rest.
func (c *coverage) step(i, j int) bool {
	switch {
	case i == len(c.as):
		return j == len(c.bs)
	case c.as[i] == "**":
		return c.globstar(i, j)
	case j == len(c.bs) || c.bs[j] == "**":
		return false
	}
	return segCovers(c.as[i], c.bs[j]) && c.match(i+1, j+1)
}

// globstar matches a "**" segment as[i] against bs[j:]: globset lets a
// trailing "/**" take at least one more segment ("x/**" does not match
// "x"), a "**" elsewhere zero or more.
func (c *coverage) globstar(i, j int) bool {
	least := 0
	if i == len(c.as)-1 && i > 0 {
		least = 1
	}
	for n := j + least; n <= len(c.bs); n++ {
		if c.match(i+1, n) {
			return true
		}
	}
	return false
}

// segCovers compares one segment of each pattern.
func segCovers(a, b string) bool {
	switch {
	case a == b:
		return true
	case a == "*":
		return true
	case isLiteral(b) && !strings.Contains(a, "{{"):
		return glob.Match(a, b, '/')
	}
	return false
}

// isLiteral reports whether s has no glob metacharacter and no placeholder.
func isLiteral(s string) bool {
	return !strings.ContainsAny(s, "?*[{}\\")
}

// hasPlaceholder reports whether s holds a {{NAME}} placeholder.
func hasPlaceholder(s string) bool {
	i := strings.Index(s, "{{")
	return i >= 0 && strings.Contains(s[i:], "}}")
}

// similar reports whether two paths are the same shape and differ only
// where one side has a placeholder: a concrete value that became a
// placeholder, or the reverse, is one change, not a remove and an add.
func similar(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	if len(as) != len(bs) {
		return false
	}
	diff := 0
	for i := range as {
		if as[i] == bs[i] {
			continue
		}
		if !hasPlaceholder(as[i]) && !hasPlaceholder(bs[i]) {
			return false
		}
		diff++
	}
	return diff > 0
}

// pathWidenedAcrossPlaceholder reports a widening that a reviewer must see
// (B.4 "high"): the new path holds "**", or a glob where the old path held a
// placeholder (/issues/{{ISSUE_NUMBER}} -> /issues/*).
func pathWidenedAcrossPlaceholder(before, after string) bool {
	if strings.Contains(after, "**") && !strings.Contains(before, "**") {
		return true
	}
	bs, as := strings.Split(before, "/"), strings.Split(after, "/")
	for i := range min(len(bs), len(as)) {
		if hasPlaceholder(bs[i]) && !hasPlaceholder(as[i]) && !isLiteral(as[i]) {
			return true
		}
	}
	return false
}
