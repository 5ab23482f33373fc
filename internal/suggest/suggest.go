package suggest

import "strings"

// Closest returns the entry of known closest to s, or "" when none is close:
// the same letters ignoring case, '-' and '_' (allowed_tools for
// allowed-tools, disallowed-tools for disallowedTools), or an edit distance
// of at most a third of the length (at least 1).
func Closest(s string, known []string) string {
	norm := func(x string) string {
		return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(x))
	}
	best, bestDist := "", -1
	for _, k := range known {
		if norm(k) == norm(s) {
			return k
		}
		dist := Distance(strings.ToLower(s), strings.ToLower(k))
		limit := max(1, min(len(k), len(s))/3)
		if dist <= limit && (bestDist < 0 || dist < bestDist) {
			best, bestDist = k, dist
		}
	}
	return best
}

// Distance is the Levenshtein edit distance between two short strings;
// strings over 64 bytes are never close.
func Distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
