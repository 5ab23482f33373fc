package didyoumean

import (
	"strings"

	"github.com/agnivade/levenshtein"
)

// Closest returns the entry of known closest to s, or "" when none is close:
// the same letters ignoring case, '-' and '_' (allowed_tools for
// allowed-tools, disallowed-tools for disallowedTools), or an edit distance
// of at most a third of the length (at least 1), two swapped neighbouring
// letters counting as one edit (culr for curl, Raed for Read).
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
		if swapped(strings.ToLower(s), strings.ToLower(k)) {
			dist = 1
		}
		limit := max(1, min(len(k), len(s))/3)
		if dist <= limit && (bestDist < 0 || dist < bestDist) {
			best, bestDist = k, dist
		}
	}
	return best
}

// Distance is the Levenshtein edit distance between two short strings, in
// runes (github.com/agnivade/levenshtein, which the binary links through
// OPA already); strings over 64 bytes are never close, which bounds the
// work a hostile key can cause.
func Distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	return levenshtein.ComputeDistance(a, b)
}

// swapped reports whether a is b with two neighbouring runes swapped.
func swapped(a, b string) bool {
	x, y := []rune(a), []rune(b)
	if len(x) != len(y) {
		return false
	}
	i := 0
	for i < len(x) && x[i] == y[i] {
		i++
	}
	if i+1 >= len(x) || x[i] != y[i+1] || x[i+1] != y[i] {
		return false
	}
	return string(x[i+2:]) == string(y[i+2:])
}
