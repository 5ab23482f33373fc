package glob

import (
	"strings"
	"testing"
)

// hostRow is one case of a host pattern dialect: does pattern a match (or
// overlap) b.
type hostRow struct {
	a, b string
	want bool
}

// compileAll compiles patterns that must be valid.
func compileAll(t *testing.T, ps ...string) []*Host {
	t.Helper()
	var out []*Host
	for _, p := range ps {
		h, err := CompileHost(p)
		if err != nil {
			t.Fatalf("CompileHost(%q): %v", p, err)
		}
		out = append(out, h)
	}
	return out
}

// The cases of OpenShell's own host pattern tests
// (crates/openshell-core/src/host_pattern.rs:287-352 @ v0.0.111), replayed.
func TestHostUpstream(t *testing.T) {
	matches := []hostRow{
		// host_matching_is_case_insensitive (:288-295)
		{"*.Example.COM", "API.example.com", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "deep.api.example.com", false},
		{"**.example.com", "deep.api.example.com", true},
		{"*-api.example.com", "tenant-api.example.com", true},
		{"*", "deep.api.example.com", false},
		// recursive_wildcard_requires_at_least_one_label (:307-312)
		{"**.example.com", "api.example.com", true},
		{"**.example.com", "example.com", false},
		{"api.**.com", "api.x.y.com", true},
		{"api.**.com", "api.com", false},
		// universal_wildcard_matches_any_host (:315-333)
		{"**", "com", true},
		{"**", "localhost", true},
		{"**", "example.com", true},
		{"**", "deep.api.example.com", true},
		{"**", "xn--bcher-kva.example", true},
		{"**", "tenant-api.internal", true},
		{"**", "192.168.1.1", true},
		{"**", "[::1]", true},
		{"**", "", false},
		{"**", "api.example.com.", false},
		{"**", "api..example.com", false},
	}
	for _, tc := range matches {
		if got := compileAll(t, tc.a)[0].Match(tc.b); got != tc.want {
			t.Errorf("%q matches %q = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	// host_matching_rejects_invalid_patterns (:298-304)
	for _, bad := range []string{"", "api .example.com", "api[.example.com", "*.{prod,staging}.example.com", "api**.example.com"} {
		if _, err := CompileHost(bad); err == nil {
			t.Errorf("CompileHost(%q) accepted", bad)
		}
	}
	// host_pattern_overlap_handles_concrete_and_wildcard_hosts (:336-343)
	for _, tc := range []hostRow{
		{"*.example.com", "api.example.com", true},
		{"**.example.com", "deep.api.example.com", true},
		{"*.example.com", "deep.api.example.com", false},
		{"*.example.com", "*.other.com", false},
		{"**.example.com", "*.api.example.com", true},
		{"**.example.com", "example.com", false},
	} {
		checkOverlap(t, tc)
	}
	// selector_pattern_overlap_honors_concrete_exclusions (:346-352)
	sel := NewHostSelector(compileAll(t, "*.example.com"), compileAll(t, "api.example.com"))
	if sel.MayMatch(compileAll(t, "api.example.com")[0]) || !sel.MayMatch(compileAll(t, "*.example.com")[0]) {
		t.Error("a concrete exclusion is not honoured")
	}
}

// checkOverlap checks a Host overlap row both ways round.
func checkOverlap(t *testing.T, tc hostRow) {
	t.Helper()
	hs := compileAll(t, tc.a, tc.b)
	if got := hs[0].Overlaps(hs[1]); got != tc.want {
		t.Errorf("%q overlaps %q = %v, want %v", tc.a, tc.b, got, tc.want)
	}
	if got := hs[1].Overlaps(hs[0]); got != tc.want {
		t.Errorf("%q overlaps %q = %v, want %v", tc.b, tc.a, got, tc.want)
	}
}

// TestHost: our own cases, where the dialect could be misread.
func TestHost(t *testing.T) {
	for _, tc := range []hostRow{
		{"a?.example.com", "ab.example.com", true},
		{"[ab]pi.example.com", "api.example.com", true},
		{"[!a]pi.example.com", "api.example.com", false},
		{"**.**.com", "a.com", false}, // each ** takes a label
		{"**.**.com", "a.b.com", true},
		{"a.**", "a.b.c", true},
		{"API.EXAMPLE.COM", "api.example.com", true},
	} {
		if got := compileAll(t, tc.a)[0].Match(tc.b); got != tc.want {
			t.Errorf("%q matches %q = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	for _, tc := range []hostRow{
		{"a*.example.com", "*b.example.com", true},  // two globs: assumed
		{"a*.example.com", "x*.example.com", true},  // even when disjoint
		{"a*.example.com", "xb.example.com", false}, // a glob and a literal: exact
		{"**.example.com", "**.api.example.com", true},
		{"**.example.com", "**.example.org", false},
		{"**", "a.b", true},
		{"a.**.b", "a.c.**", true},
		{"a.**.b", "a.b", false},
	} {
		checkOverlap(t, tc)
	}
	for bad, msg := range map[string]string{
		"a..com":   "empty DNS labels",
		".a.com":   "empty DNS labels",
		"a.com.":   "empty DNS labels",
		"a\u00a0b": "whitespace",
		"***.com":  `label "***" is not a valid glob`,
		"[a.com":   `label "[a" is not a valid glob`,
		"a{b}.c":   "brace alternates",
	} {
		if _, err := CompileHost(bad); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("CompileHost(%q) = %v, want %q", bad, err, msg)
		}
	}
	if h := compileAll(t, "API.example.com")[0]; h.String() != "api.example.com" {
		t.Errorf("String() = %q", h.String())
	}
	if host, ok := compileAll(t, "api.example.com")[0].Literal(); !ok || host != "api.example.com" {
		t.Error("a literal host is not one")
	}
	if _, ok := compileAll(t, "a?.example.com")[0].Literal(); ok {
		t.Error("a glob is taken for a literal host")
	}
}

// TestHostSelector: the validator's cases for middleware selectors
// (middleware.rs:286-308 @ v0.0.111 asks may_match_pattern).
func TestHostSelector(t *testing.T) {
	for _, tc := range []struct {
		include, exclude []string
		cand             string
		want             bool
	}{
		{[]string{"*.example.com"}, nil, "api.example.com", true},
		{[]string{"*.example.com"}, nil, "example.com", false},
		{[]string{"**.example.com"}, nil, "a.b.example.com", true},
		{[]string{"*.example.com"}, []string{"api.example.com"}, "api.example.com", false},
		{[]string{"*.example.com"}, []string{"api.example.com"}, "*.example.com", true},
		{[]string{"*.example.com"}, []string{"*.example.com"}, "*.example.com", false},
		{[]string{"**"}, nil, "anything.at.all", true},
		{[]string{"API.Example.com"}, nil, "api.example.com", true},
		{[]string{"api-*.example.com"}, nil, "web.example.com", false},
		{[]string{"*.example.com"}, nil, "**.example.com", true},
		{[]string{"**.example.com"}, nil, "**.com", true},
		{[]string{"*.example.com"}, []string{"**.example.com"}, "api.example.com", false},
		{[]string{"*.example.com"}, []string{"web.example.com"}, "api.example.com", true},
		{[]string{"a*.example.com"}, []string{"**"}, "*b.example.com", false},
		{[]string{"a*.example.com"}, []string{"*b.example.com"}, "*b.example.com", false},
		{[]string{"a*.example.com"}, []string{"*c.example.com"}, "*b.example.com", true},
		{[]string{"a*.example.com", "api.example.com"}, []string{"a*.example.com"}, "*.example.com", false},
		{[]string{"a*.example.com", "api.example.com"}, []string{"b*.example.com"}, "*.example.com", true},
	} {
		sel := NewHostSelector(compileAll(t, tc.include...), compileAll(t, tc.exclude...))
		if got := sel.MayMatch(compileAll(t, tc.cand)[0]); got != tc.want {
			t.Errorf("include %v exclude %v ~ %s: got %v", tc.include, tc.exclude, tc.cand, got)
		}
	}
}

// TestHostsOverlap: the function form reports an invalid side.
func TestHostsOverlap(t *testing.T) {
	if ok, err := HostsOverlap("*.github.com", "api.github.com"); err != nil || !ok {
		t.Errorf("HostsOverlap = %v, %v", ok, err)
	}
	for _, pair := range [][2]string{{"a..b", "a.b"}, {"a.b", ""}} {
		if _, err := HostsOverlap(pair[0], pair[1]); err == nil {
			t.Errorf("HostsOverlap(%q, %q): no error", pair[0], pair[1])
		}
	}
}

// The cases of OpenShell's prover tests of host_patterns_overlap
// (crates/openshell-prover/src/credentials.rs:406-477 @ v0.0.111), replayed.
// At v0.0.83 the row api.*.github.com ~ api.v3.github.com was false
// (credentials.rs:422-425 @ v0.0.83): see CredentialHost.
func TestCredentialHostUpstream(t *testing.T) {
	checkCredential(t, []hostRow{
		// host_patterns_overlap_matches_exact_case_and_trailing_dot (:407-413)
		{"API.GITHUB.COM.", "api.github.com", true},
		{"api.github.com", "uploads.github.com", false},
		// ..._first_label_wildcard_only (:416-423)
		{"*.github.com", "api.github.com", true},
		{"*.github.com", "github.com", false},
		{"*.github.com", "deep.api.github.com", false},
		// ..._intra_label_first_label_wildcard (:426-435)
		{"api-*.github.com", "api-v3.github.com", true},
		{"api-*.github.com", "uploads.github.com", false},
		// ..._whole_middle_label_wildcard (:438-467)
		{"api.*.github.com", "api.v3.github.com", true},
		{"*.s3.*.amazonaws.com", "bucket.s3.us-east-1.amazonaws.com", true},
		{"s3.*.amazonaws.com", "s3.eu-west-1.amazonaws.com", true},
		{"s3.*.amazonaws.com", "s3.amazonaws.com", false},
		{"*.s3.*.amazonaws.com", "bucket.s3.dualstack.us-east-1.amazonaws.com", false},
		{"api.*.github.com", "api.v3.gitlab.com", false},
		// ..._recursive_first_label_wildcard (:470-477)
		{"**.github.com", "api.github.com", true},
		{"**.github.com", "deep.api.github.com", true},
		{"**.github.com", "github.com", false},
	})
}

func checkCredential(t *testing.T, rows []hostRow) {
	t.Helper()
	for _, tc := range rows {
		a, b := NewCredentialHost(tc.a), NewCredentialHost(tc.b)
		if got := a.Overlaps(b); got != tc.want {
			t.Errorf("%q overlaps %q = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := b.Overlaps(a); got != tc.want {
			t.Errorf("%q overlaps %q = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}

// TestCredentialHost: our own cases of the prover's reading
// (credentials.rs:169-260 @ v0.0.111).
func TestCredentialHost(t *testing.T) {
	checkCredential(t, []hostRow{
		{"", "github.com", false},
		{"  ", "  ", false},
		{"**", "**", true},                          // equal
		{"**", "github.com", false},                 // a lone ** covers nothing
		{"*", "**", true},                           // "**" read as a host is one label
		{"a*.example.com", "*b.example.com", false}, // no meeting of languages
		{"a*b.example.com", "ab.example.com", true},
		{"a*a.example.com", "a.example.com", false},
		{"*a*a", "xaa", true},
		{"a?.example.com", "ab.example.com", false}, // ? is a plain character
		{"a?.example.com", "a?.example.com", true},
		{"**.*.com", "a.b.com", true},
		{"**.**.com", "a.b.com", true}, // a later ** is one label
		{"**.**.com", "b.com", false},
		{"*.a..b", "x.a..b", true}, // empty labels compare as labels
		{"*..b", "..b", false},     // but no * takes an empty one
		// Every trailing dot goes, as trim_end_matches('.') drops them
		// all; the former port dropped one.
		{"api.github.com..", "api.github.com", true},
		{"*.github.com...", "api.github.com", true},
		// Case is folded in ASCII only (to_ascii_lowercase): the Kelvin
		// sign is not a 'k'; the former port folded it.
		{"\u212a.example.com", "k.example.com", false},
		{" api.github.com. ", "api.github.com", true},
	})
	if NewCredentialHost("*.github.com").Covers("github.com") || !NewCredentialHost("*.github.com").Covers("API.github.com.") {
		t.Error("Covers")
	}
}

// TestProfileHost: the profile loader's host semantics
// (profiles.rs:2421-2451,2478-2515 @ v0.0.111).
func TestProfileHost(t *testing.T) {
	for _, tc := range []hostRow{
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "a.b.example.com", false},
		{"**.example.com", "a.b.example.com", true},
		{"**.example.com", "example.com", true}, // ** takes no label too
		{"API.example.com", "api.EXAMPLE.com", true},
		{"api.example.com", "api.example.org", false},
		{"api-*.example.com", "api-v1.example.com", false}, // only a whole-label * is a wildcard
		{"api-*.example.com", "api-*.example.com", true},
		{"*.example.com", ".example.com", true}, // * takes an empty label
		{"a.**", "a", true},
		{"**", "", true},
	} {
		if got := NewProfileHost(tc.a).Match(tc.b); got != tc.want {
			t.Errorf("%q matches %q = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	for _, tc := range []hostRow{
		{"*.s3.amazonaws.com", "s3.*.amazonaws.com", true},
		{"*.a.com", "*.b.com", false},
		{"**.a.com", "*.x.a.com", true},
		{"**.a.com", "a.com", true},
		{"api.example.com", "*.example.com", true},
		{"api.example.com", "API.example.com", true},
		{"a-*.example.com", "b-*.example.com", false},
		{"**.x.**", "y.**.z", true}, // y.x.z
		{"**.x", "y.**.z", false},
		{"**.x.**", "y.**.x", true},
	} {
		a, b := NewProfileHost(tc.a), NewProfileHost(tc.b)
		if a.Overlaps(b) != tc.want || b.Overlaps(a) != tc.want {
			t.Errorf("%q overlaps %q, want %v", tc.a, tc.b, tc.want)
		}
	}
	// Many ** labels stay linear: no exponential search.
	bomb := NewProfileHost(strings.Repeat("**.a.", 40) + "b")
	if bomb.Match(strings.Repeat("a.", 80)+"c") || bomb.Overlaps(NewProfileHost(strings.Repeat("**.", 40)+"c")) {
		t.Error("bomb matched")
	}
}

// FuzzHostPatterns checks what must hold of every pattern pair in each
// dialect: compiling never panics, overlap is symmetric, a pattern matches
// its own text where that text is a plain host, and a plain host overlaps
// exactly the patterns that match it.
func FuzzHostPatterns(f *testing.F) {
	for _, s := range [][2]string{{"*.example.com", "api.example.com"}, {"**.a.com", "*.x.a.com"}, {"a?.b", "[ab]c.b"}, {"**", "**.com"}, {"API.**", "api.x.y"}, {"*a*a.com", "xaa.com"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		fuzzHost(t, a, b)
		fuzzCredential(t, a, b)
		fuzzProfile(t, a, b)
	})
}

func plainHost(s string) bool { return !strings.ContainsAny(s, "*?[") }

func fuzzHost(t *testing.T, a, b string) {
	ha, errA := CompileHost(a)
	hb, errB := CompileHost(b)
	if errA != nil || errB != nil {
		return
	}
	if ha.Overlaps(hb) != hb.Overlaps(ha) {
		t.Fatalf("Host overlap of %q and %q is not symmetric", a, b)
	}
	if plainHost(b) && ha.Overlaps(hb) != ha.Match(b) {
		t.Fatalf("Host %q: overlap with the host %q is not a match", a, b)
	}
	if plainHost(a) && !ha.Match(a) {
		t.Fatalf("Host %q does not match itself", a)
	}
}

func fuzzCredential(t *testing.T, a, b string) {
	ca, cb := NewCredentialHost(a), NewCredentialHost(b)
	if ca.Overlaps(cb) != cb.Overlaps(ca) {
		t.Fatalf("CredentialHost overlap of %q and %q is not symmetric", a, b)
	}
	if ca.Covers(b) && !ca.Overlaps(cb) {
		t.Fatalf("CredentialHost %q covers %q but does not overlap it", a, b)
	}
}

func fuzzProfile(t *testing.T, a, b string) {
	pa, pb := NewProfileHost(a), NewProfileHost(b)
	if pa.Overlaps(pb) != pb.Overlaps(pa) {
		t.Fatalf("ProfileHost overlap of %q and %q is not symmetric", a, b)
	}
	if !strings.Contains(b, "*") && pa.Overlaps(pb) != pa.Match(b) {
		t.Fatalf("ProfileHost %q: overlap with the host %q is not a match", a, b)
	}
	if !pa.Match(a) {
		t.Fatalf("ProfileHost %q does not match itself", a)
	}
}
