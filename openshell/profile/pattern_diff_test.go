package profile

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

func genFrom(r *rand.Rand, parts []string, sep string, max int) string {
	n := 1 + r.Intn(max)
	out := make([]string, n)
	for i := range out {
		out[i] = parts[r.Intn(len(parts))]
	}
	return strings.Join(out, sep)
}

// TestProfilePatternDifferential compares glob.ProfileHost and
// glob.EndpointPath with the profile package's former helpers.
func TestProfilePatternDifferential(t *testing.T) {
	hosts := []string{"a", "b", "ab", "*", "**", "a*", "*b", "?", "A", "", "com"}
	// No `**` inside a path glob, no `[` left open and no "[]]": there the
	// former regexp matcher read the glob otherwise than the glob crate
	// (rust_test.go and path_test.go hold those cases).
	paths := []string{"", "v1", "v*", "*", "a?", "[ab]", "[!a]", "x", "-"}
	r := rand.New(rand.NewSource(31))
	var hm, ho, pm, po int
	for range 200000 {
		a, b := genFrom(r, hosts, ".", 5), genFrom(r, hosts, ".", 5)
		if got, want := glob.NewProfileHost(a).Match(b), hostPatternMatches(a, b); got != want {
			t.Fatalf("host match %q %q: old %v", a, b, want)
		} else if got {
			hm++
		}
		if got, want := glob.NewProfileHost(a).Overlaps(glob.NewProfileHost(b)), hostPatternsCanOverlap(a, b); got != want {
			t.Fatalf("host overlap %q %q: old %v", a, b, want)
		} else if got {
			ho++
		}
		p, q := genFrom(r, paths, "/", 4), genFrom(r, paths, "/", 4)
		if r.Intn(4) == 0 {
			p += "/**" // a subtree, or with p empty every path
		}
		if r.Intn(4) == 0 {
			q += "/**"
		}
		if got, want := glob.NewEndpointPath(p).Match(q), endpointPathMatches(p, q); got != want {
			t.Errorf("path match %q %q: old %v", p, q, want)
		} else if got {
			pm++
		}
		if got, want := glob.NewEndpointPath(p).Overlaps(glob.NewEndpointPath(q)), pathPatternsCanOverlap(p, q); got != want {
			t.Errorf("path overlap %q %q: old %v", p, q, want)
		} else if got {
			po++
		}
	}
	t.Logf("host match %d overlap %d, path match %d overlap %d", hm, ho, pm, po)
}
