package profile

import (
	"strings"
	"testing"
)

// TestHostPatterns pins host_pattern_matches and host_patterns_can_overlap
// (profiles.rs:2234-2336 @ v0.0.111), and that many ** labels stay fast.
func TestHostPatterns(t *testing.T) {
	for _, tc := range []struct {
		p, h string
		want bool
	}{
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "a.b.example.com", false},
		{"**.example.com", "a.b.example.com", true},
		{"**.example.com", "example.com", true},
		{"API.example.com", "api.EXAMPLE.com", true},
		{"api.example.com", "api.example.org", false},
	} {
		if got := hostPatternMatches(tc.p, tc.h); got != tc.want {
			t.Errorf("match(%q, %q) = %v", tc.p, tc.h, got)
		}
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"*.s3.amazonaws.com", "s3.*.amazonaws.com", true},
		{"*.a.com", "*.b.com", false},
		{"**.a.com", "*.x.a.com", true},
	} {
		if got := hostPatternsCanOverlap(tc.a, tc.b); got != tc.want {
			t.Errorf("overlap(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
	bomb := strings.Repeat("**.a.", 40) + "b"
	host := strings.Repeat("a.", 80) + "c"
	if hostPatternMatches(bomb, host) || hostPatternsCanOverlap(bomb, strings.Repeat("**.", 40)+"c") {
		t.Error("bomb matched")
	}
}
