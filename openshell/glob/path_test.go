package glob

import "testing"

// The cases of OpenShell's endpoint path tests
// (crates/openshell-core/src/endpoint_path.rs:75-101 @ v0.0.111), replayed,
// and ours after them.
func TestEndpointPath(t *testing.T) {
	for _, tc := range []hostRow{
		// matches_canonical_endpoint_patterns (:76-85)
		{"", "/v1/messages", true},
		{"/**", "/v1/messages", true},
		{"/v1/**", "/v1", true},
		{"/v1/**", "/v1/messages", true},
		{"/v*/messages", "/v1/messages", true},
		{"/v1/*", "/v1/chat/messages", true},
		{"/v1/**", "/v2/messages", false},
		{"/v1/*/messages", "/v1/chat/completions", false},
		// compiled_patterns_preserve_canonical_matching (:88-101)
		{"/v1/**", "/v1/chat/messages", true},
		{"/v*/messages", "/v1/completions", false},
		{"[", "[", true},
		{"[", "/v1/messages", false},
		// Ours: a subtree ends at a '/', and the glob is glob 0.3.3's
		// (see rust.go), which the former profile matcher misread.
		{"/v1/**", "/v10", false},
		{"**", "/anything", true},
		{"/v1/a?", "/v1/ab", true},
		{"/v1/[!a]b", "/v1/ab", false},
		{"**/x", "/a/x", true},
		{"**/x", "ax", false},
		{"/a/**/b", "/a/xb", false},
		{"/a/**/b", "/a/b", true},
		{"/v1**", "/v1x", false}, // refused by the glob crate: only itself
		{"/v1**", "/v1**", true},
		{"[]]", "]", true},
	} {
		if got := NewEndpointPath(tc.a).Match(tc.b); got != tc.want {
			t.Errorf("%q selects %q = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestEndpointPathOverlaps: path_patterns_can_overlap (profiles.rs:2517-2535
// @ v0.0.111) on our cases.
func TestEndpointPathOverlaps(t *testing.T) {
	for _, tc := range []hostRow{
		{"", "/x", true},
		{"/**", "/x/*", true},
		{"/v1/**", "/v1/admin/**", true},
		{"/v1/**", "/v2/**", false},
		{"/v1/**", "/v10/**", false},
		{"/v1/**", "/v1/*", true}, // two wildcards, not both subtrees: assumed
		{"/a/*", "/b/*", true},
		{"/v1/x", "/v1/*", true},
		{"/v1/x", "/v2/*", false},
		{"/v1/x", "/v1/x", true},
		{"/v1/x", "/v1/y", false},
		// The first side without '*' is read as a path, '?' and all, so
		// the answer depends on the order (as OpenShell's does).
		{"/v?", "/vx", false},
		{"/vx", "/v?", true},
	} {
		if got := NewEndpointPath(tc.a).Overlaps(NewEndpointPath(tc.b)); got != tc.want {
			t.Errorf("%q overlaps %q = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// FuzzEndpointPath: a selector always selects its own spelling, a selector
// of every path overlaps every other, and nothing panics.
func FuzzEndpointPath(f *testing.F) {
	for _, s := range [][2]string{{"/v1/**", "/v1/x"}, {"/v*/m", "/v1/m"}, {"[", "/"}, {"**/x", "a/x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		pa, pb := NewEndpointPath(a), NewEndpointPath(b)
		if !pa.Match(a) {
			t.Fatalf("%q does not select itself", a)
		}
		if pa.all && !pa.Overlaps(pb) {
			t.Fatalf("%q selects every path but does not overlap %q", a, b)
		}
		_ = pa.Match(b)
	})
}
