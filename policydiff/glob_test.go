package policydiff

import "testing"

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"/issues/*", "/issues/{{ISSUE_NUMBER}}", true},
		{"/issues/{{ISSUE_NUMBER}}", "/issues/*", false},
		{"/repos/{{OWNER}}/x", "/repos/acme/x", false},
		{"/repos/acme/x", "/repos/{{OWNER}}/x", false},
		{"**", "/anything/at/all", true},
		{"/a/**", "/a/b/c", true},
		{"/a/**", "/a", false},
		{"/a/**", "/a/*", true},
		{"/a/*", "/a/**", false},
		{"/a/**/z", "/a/z", true},
		{"/a/**/z", "/a/b/c/z", true},
		{"/a/v*", "/a/v1", true},
		{"/a/v*", "/a/w1", false},
		{"/a/*.json", "/a/x.json", true},
		{"/a/b", "/a/b/c", false},
		{"/**", "/x/{{OWNER}}", true},
	} {
		if got := covers(tc.a, tc.b); got != tc.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSimilar(t *testing.T) {
	if !similar("/repos/acme/x", "/repos/{{OWNER}}/x") {
		t.Error("literal to placeholder is not similar")
	}
	if similar("/repos/acme/x", "/repos/evil/x") || similar("/a", "/a") || similar("/a/{{X}}", "/a/{{X}}/b") {
		t.Error("similar too broad")
	}
}

func FuzzCovers(f *testing.F) {
	f.Add("/a/**/b", "/a/x/b")
	f.Add("**", "/x")
	f.Add("/issues/*", "/issues/{{ISSUE_NUMBER}}")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 256 || len(b) > 256 {
			return
		}
		// A pattern covers itself; covering is decided without panics.
		if !covers(a, a) {
			t.Fatalf("covers(%q, itself) = false", a)
		}
		_ = covers(a, b)
	})
}
