package validate

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// genHost builds a host or pattern from labels that exercise every branch
// of both matchers.
func genHost(r *rand.Rand) string {
	parts := []string{"a", "b", "ab", "api", "*", "**", "a*", "*b", "a*b", "?", "a?", "[ab]", "[!a]", "A", "", "x-y", "***", "a**", "[", "{a}", " ", "com"}
	n := 1 + r.Intn(5)
	out := make([]string, n)
	for i := range out {
		out[i] = parts[r.Intn(len(parts))]
	}
	return strings.Join(out, ".")
}

// TestHostPatternDifferential compares glob.Host and glob.HostSelector with
// the validator's former matcher on generated patterns.
func TestHostPatternDifferential(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	var compiled, matched, overlapped, selected int
	for range 200000 {
		a, b, h := genHost(r), genHost(r), genHost(r)
		oa, reason := newHostPattern(a)
		na, err := glob.CompileHost(a)
		if (reason == "") != (err == nil) || err != nil && err.Error() != reason {
			t.Fatalf("compile %q: old %q new %v", a, reason, err)
		}
		if err != nil {
			continue
		}
		compiled++
		if na.Match(h) {
			matched++
		}
		if oa.matches(h) != na.Match(h) {
			t.Fatalf("match %q %q: old %v", a, h, oa.matches(h))
		}
		ob, _ := newHostPattern(b)
		nb, err := glob.CompileHost(b)
		if err != nil {
			continue
		}
		if na.Overlaps(nb) {
			overlapped++
		}
		if oa.overlaps(ob) != na.Overlaps(nb) {
			t.Fatalf("overlap %q %q: old %v", a, b, oa.overlaps(ob))
		}
		oc, _ := newHostPattern(h)
		nc, err := glob.CompileHost(h)
		if err != nil {
			continue
		}
		old := (&hostSelector{includes: []*hostPattern{oa}, excludes: []*hostPattern{ob}}).mayMatchPattern(oc)
		got := glob.NewHostSelector([]*glob.Host{na}, []*glob.Host{nb}).MayMatch(nc)
		if got {
			selected++
		}
		if got != old {
			t.Fatalf("selector +%q -%q ~ %q: old %v", a, b, h, old)
		}
	}
	t.Logf("compiled %d, matched %d, overlapped %d, selected %d", compiled, matched, overlapped, selected)
	if matched == 0 || overlapped == 0 || selected == 0 {
		t.Fatal("the generator reaches no positive case")
	}
}
