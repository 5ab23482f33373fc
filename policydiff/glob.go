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
	memo := make([]int8, (len(as)+1)*(len(bs)+1))
	var match func(i, j int) bool
	match = func(i, j int) bool {
		k := i*(len(bs)+1) + j
		if memo[k] != 0 {
			return memo[k] > 0
		}
		ok := false
		switch {
		case i == len(as):
			ok = j == len(bs)
		case as[i] == "**":
			// globset: a trailing "/**" needs at least one more segment
			// ("x/**" does not match "x"); elsewhere zero or more.
			min := 0
			if i == len(as)-1 && i > 0 {
				min = 1
			}
			for n := j + min; n <= len(bs) && !ok; n++ {
				ok = match(i+1, n)
			}
		case j == len(bs) || bs[j] == "**":
			ok = false
		default:
			ok = segCovers(as[i], bs[j]) && match(i+1, j+1)
		}
		memo[k] = -1
		if ok {
			memo[k] = 1
		}
		return ok
	}
	return match(0, 0)
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
