package glob

import "testing"

func TestRustGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		ok, match  bool
	}{
		{"tools/*", "tools/call", true, true},
		{"*", "tools/call", true, true},
		{"tools/c?ll", "tools/call", true, true},
		{"t[a-z]ols/call", "tools/call", true, true},
		{"t[!o]ols/call", "tools/call", true, false},
		{"[]]x", "]x", true, true},
		{"**", "tools/call", true, true},
		{"tools/**", "tools/call", true, true},
		{"a**", "", false, false},
		{"***", "", false, false},
		{"[abc", "", false, false},
		{"[!]", "", false, false},
		{"a/**b", "", false, false},
		{"tools*", "tools", true, true},
		{"resources/*", "tools/call", true, false},
		{"api", "API", true, false},
		// `**` takes nothing, a run ending in '/', or the rest: glob
		// 0.3.3's matches_from (src/lib.rs:805-830 @ v0.3.3), each row
		// checked against the crate.
		{"a/**/b", "a/b", true, true},
		{"a/**/b", "a/x/y/b", true, true},
		{"a/**/b", "a/xb", true, false},
		{"**/x", "x", true, true},
		{"**/x", "a/x", true, true},
		{"**/x", "ax", true, false},
		{"**/", "x", true, true},
		{"**/[!a]", "/a/!-", true, false},
		{"**/[!a]", "b/c", true, true},
		{"**/*", "abc", true, true},
		{"**/**/x", "a/b/x", true, true},
		{"v1**", "", false, false},
	} {
		toks, ok := parseRustGlob(tc.pattern)
		if ok != tc.ok {
			t.Errorf("parse %q: ok %v, want %v", tc.pattern, ok, tc.ok)
			continue
		}
		if ok && matchRustGlob(toks, []rune(tc.s)) != tc.match {
			t.Errorf("%q ~ %q: want %v", tc.pattern, tc.s, tc.match)
		}
	}
}

// FuzzRustGlob checks the automaton against a naive recursive matcher
// over the same tokens (differential), and that parsing never panics.
func FuzzRustGlob(f *testing.F) {
	for _, s := range [][2]string{{"tools/*", "tools/call"}, {"t[!o]o?s/*l", "tools/call"}, {"*a*b*", "xaybz"}, {"[]]*", "]]"}, {"**/x", "a/b/x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		toks, ok := parseRustGlob(pattern)
		if !ok {
			return
		}
		rs := []rune(s)
		if got, want := matchRustGlob(toks, rs), naiveRustGlob(toks, rs); got != want {
			t.Fatalf("%q ~ %q: linear %v, naive %v", pattern, s, got, want)
		}
	})
}

func naiveRustGlob(toks []rustGlobTok, s []rune) bool {
	if len(toks) == 0 {
		return len(s) == 0
	}
	switch t := toks[0]; t.kind {
	case '*':
		for i := 0; i <= len(s); i++ {
			if naiveRustGlob(toks[1:], s[i:]) {
				return true
			}
		}
		return false
	case 'R':
		// nothing, a run ending in '/', or all of s.
		if naiveRustGlob(toks[1:], s) || naiveRustGlob(toks[1:], nil) {
			return true
		}
		for i, c := range s {
			if c == '/' && naiveRustGlob(toks[1:], s[i+1:]) {
				return true
			}
		}
		return false
	}
	return len(s) > 0 && toks[0].matchesOne(s[0]) && naiveRustGlob(toks[1:], s[1:])
}
