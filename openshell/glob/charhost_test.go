package glob

import (
	"strings"
	"testing"
)

func TestCharHostOverlaps(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		// ambiguity.rs:754-760 @ v0.0.111 (exact_and_wildcard_hosts_overlap).
		{"api.example.com", "*.example.com", true},
		{"us-aiplatform.googleapis.com", "*-aiplatform.googleapis.com", true},
		{"api.example.com", "*.other.com", false},
		// ambiguity.rs:764-767 @ v0.0.111 (intersecting_wildcards_are_detected).
		{"*.example.com", "api.*.com", true},
		{"**.example.com", "api.example.com", true},
		{"*.example.com", "*.example.org", false},
		// ambiguity.rs:879-881 @ v0.0.111: a wildcard and an exact host compete.
		{"*.example.com", "api.example.com", true},
		// ambiguity.rs:400-402: an empty host overlaps everything.
		{"", "api.example.com", true},
		{"", "", true},
		// Our own rows: the character-level reading.
		{"API.Example.COM", "api.example.com", true}, // ASCII case folded
		{"*.github.com", "a.b.github.com", false},    // * never takes '.'
		{"**.github.com", "a.b.github.com", true},
		{"**.github.com", "github.com", false},
		{"*.github.com", ".github.com", true}, // * may take nothing
		{"**.github.com", "**.gitlab.com", false},
		{"api.**.example.com", "api.eu.west.example.com", true}, // ** in the middle
		{"a*b*c.example.com", "abxc.example.com", true},         // two stars in a label
		{"a**", "*z", true},                                     // a.z
		{"a*", "*.z", false},
		{"a?.com", "ab.com", false}, // ? is a literal here
		{"a?.com", "a?.com", true},
		{"api-*.example.com", "*-eu.example.com", true},
	} {
		a, b := CompileCharHost(tc.a), CompileCharHost(tc.b)
		if a.Overlaps(b) != tc.want || b.Overlaps(a) != tc.want {
			t.Errorf("%q overlaps %q, want %v", tc.a, tc.b, tc.want)
		}
	}
	// Many stars stay polynomial: the product has at most (n+1)(m+1) pairs.
	bomb := CompileCharHost(strings.Repeat("*a", 200) + "b")
	if bomb.Overlaps(CompileCharHost(strings.Repeat("**a", 200) + "c")) {
		t.Error("bomb overlapped")
	}
}

func TestCharHostMatch(t *testing.T) {
	for _, tc := range []struct {
		pat, host string
		want      bool
	}{
		{"*.example.com", "api.example.com", true},
		{"*.example.com", "a.b.example.com", false},
		{"**.example.com", "a.b.example.com", true},
		{"**.example.com", "example.com", false},
		{"", "anything", true},
		{"API.x", "api.X", true},
	} {
		if got := CompileCharHost(tc.pat).Match(tc.host); got != tc.want {
			t.Errorf("%q matches %q = %v, want %v", tc.pat, tc.host, got, tc.want)
		}
	}
}

// FuzzCharHost checks what must hold of every pair of ambiguity-check
// patterns: overlap is symmetric, a pattern overlaps itself, a host both
// match proves overlap, and an overlap's witness is matched by both.
func FuzzCharHost(f *testing.F) {
	for _, s := range [][3]string{{"*.example.com", "api.*.com", "api.example.com"}, {"**.a", "*.b", "x.a"}, {"a*b*c", "a**c", "abc"}, {"", "*", "."}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, host string) {
		ha, hb := CompileCharHost(a), CompileCharHost(b)
		ov := ha.Overlaps(hb)
		if ov != hb.Overlaps(ha) {
			t.Fatalf("overlap of %q and %q is not symmetric", a, b)
		}
		if !ha.Overlaps(ha) {
			t.Fatalf("%q does not overlap itself", a)
		}
		if ha.Match(host) && hb.Match(host) && !ov {
			t.Fatalf("%q and %q both match %q but do not overlap", a, b, host)
		}
		if w, ok := ha.Witness(hb); ok && (!ha.Match(w) || !hb.Match(w)) {
			t.Fatalf("witness %q of %q and %q is not matched by both", w, a, b)
		}
	})
}
