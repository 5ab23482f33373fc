package prover

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

func genHost(r *rand.Rand) string {
	parts := []string{"a", "b", "ab", "api", "*", "**", "a*", "*b", "a*b", "*a*", "a*a", "?", "[ab]", "A", "", "x-y", "***", "com", "aab", "bab"}
	n := 1 + r.Intn(5)
	out := make([]string, n)
	for i := range out {
		out[i] = parts[r.Intn(len(parts))]
	}
	s := strings.Join(out, ".")
	switch r.Intn(6) {
	case 0:
		s += "."
	case 1:
		s = " " + s + " "
	}
	return s
}

// TestHostsOverlapDifferential compares glob.CredentialHost with the
// prover's former port on generated patterns.
func TestHostsOverlapDifferential(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	overlapped := 0
	for range 300000 {
		a, b := genHost(r), genHost(r)
		if strings.HasSuffix(strings.TrimSpace(a), "..") || strings.HasSuffix(strings.TrimSpace(b), "..") {
			continue // the port trimmed one trailing dot, OpenShell trims them all
		}
		got := glob.NewCredentialHost(a).Overlaps(glob.NewCredentialHost(b))
		if got {
			overlapped++
		}
		if want := HostsOverlap(a, b); got != want {
			t.Fatalf("overlap %q %q: old %v", a, b, want)
		}
	}
	t.Logf("overlapped %d", overlapped)
}
