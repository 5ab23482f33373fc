package glob

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// naiveGlobRegexp is the second implementation the fuzz test compares
// against: globset's own translation of tokens to a regex
// (Tokens::to_regex_with, crates/globset/src/glob.rs), run by Go's regexp
// on a Latin-1 view of the bytes so that it matches byte by byte as
// globset's "(?-u)" regex does.
func naiveGlobRegexp(pattern string) (*regexp.Regexp, error) {
	p := globParser{s: pattern}
	toks, err := p.parse()
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(`(?s)^`)
	if len(toks) == 1 && toks[0].kind == gRecPrefix {
		b.WriteString(`.*$`)
		return regexp.Compile(b.String())
	}
	naiveTokens(&b, toks)
	b.WriteString(`$`)
	return regexp.Compile(b.String())
}

func naiveByte(b byte) string { return fmt.Sprintf(`\x{%02x}`, b) }

func naiveTokens(b *strings.Builder, toks []globTok) {
	for _, t := range toks {
		switch t.kind {
		case gLit:
			b.WriteString(naiveByte(t.lit))
		case gAny:
			b.WriteString(`[^/]`)
		case gStar:
			b.WriteString(`[^/]*`)
		case gRecPrefix:
			b.WriteString(`(?:/?|.*/)`)
		case gRecSuffix:
			b.WriteString(`/.*`)
		case gRecZero:
			b.WriteString(`(?:/|/.*/)`)
		case gClass:
			b.WriteString(`[`)
			if t.neg {
				b.WriteString(`^`)
			}
			for _, r := range t.ranges {
				for _, x := range []byte(string(r[0])) {
					b.WriteString(naiveByte(x))
				}
				if r[0] != r[1] {
					b.WriteString(`-`)
					for _, x := range []byte(string(r[1])) {
						b.WriteString(naiveByte(x))
					}
				}
			}
			b.WriteString(`]`)
		case gAlts:
			var parts []string
			for _, br := range t.alts {
				var sb strings.Builder
				naiveTokens(&sb, br)
				if sb.Len() > 0 {
					parts = append(parts, sb.String())
				}
			}
			if len(parts) > 0 {
				b.WriteString(`(?:` + strings.Join(parts, `|`) + `)`)
			}
		}
	}
}

// latin1 maps each byte to the rune of the same value, so a Go regexp
// matches bytes.
func latin1(s string) string {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

// TestGlobsetSemantics pins globset's matching (literal_separator on) with
// cases from globset's own tests (crates/globset/src/glob.rs matchrec*,
// matchrange*, re12..re37) and OpenShell's paths.
func TestGlobsetSemantics(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"a", "a", true},
		{"a*b", "a_b", true},
		{"*.rs", ".rs", true},
		{"some/**/needle.txt", "some/needle.txt", true},     // matchrec1
		{"some/**/needle.txt", "some/a/b/needle.txt", true}, // matchrec3
		{"**", "", true},                                    // matchrec6
		{"**", "/x/.asdf", true},                            // matchrec8
		{"**/test", "test", true},                           // matchrec15
		{"/**/test", "/test", true},                         // matchrec18
		{"test/**", "test/", true},                          // matchrec23
		{"test/**", "test", false},
		{"some/*/needle.txt", "some/one/needle.txt", true}, // matchrec26
		{"some/*/needle.txt", "some/a/b/needle.txt", false},
		{"a[0-9]b", "a9b", true},
		{"a[!0-9]b", "a_b", true},
		{"a[!0-9]b", "a/b", true}, // a negated class matches '/'
		{"[-]", "-", true},
		{"_[[]_[]]_[?]_[*]_!_", "_[_]_?_*_!_", true}, // matchescape
		{"{a,b}", "b", true},
		{"{a,{b,c}}", "c", true}, // re36
		{"{,a}", "", false},      // empty alternates dropped
		{"a**", "a/b", false},    // re28: a.*.* with literal_separator is a[^/]*[^/]*
		{"a?", "a/", false},
		{"\\*", "*", true},
		{"\\*", "a", false},
		// OpenShell paths (issue 10): "**" is recursive only as a segment.
		{"/files/**.json", "/files/a.json", true},
		{"/files/**.json", "/files/a/b.json", false},
		{"/repos/**/pulls", "/repos/pulls", true},
		{"/repos/**/pulls", "/repos/a/b/pulls", true},
		{"/**/info/refs*", "/o/r.git/info/refs", true},
		{"/**/info/refs*", "/info/refs", true},
		{"/repos/o/r/**", "/repos/o/r", false},
		{"/repos/o/r/**", "/repos/o/r/", true},
		{"/x/*", "/x/", true},
		{"/x/*", "/x/a/b", false},
		{"**/", "anything/at/all", true}, // re13
		{"**/*", "a/b", true},            // re14
		// "**" at a branch start not before '/' is two '*'; a recursive
		// suffix may end an alternate's branch; a recursive token after a
		// recursive one adds nothing; a '-' before ']' is a member.
		{"**a", "xa", true},
		{"**a", "x/a", false},
		{"{a/**,b}", "a/x/y", true},
		{"{a/**,b}", "a", false},
		{"{a/**,b}", "b", true},
		{"**/**", "a/b", true},
		{"[a-]", "-", true},
		{"[a-]", "b", false},
	}
	for _, c := range cases {
		g, err := Compile(c.pat)
		if err != nil {
			t.Fatalf("CompileGlob(%q): %v", c.pat, err)
		}
		if got := g.Match(c.s); got != c.want {
			t.Errorf("globset %q on %q = %v, want %v", c.pat, c.s, got, c.want)
		}
		re, _ := naiveGlobRegexp(c.pat)
		if got := re.MatchString(latin1(c.s)); got != c.want {
			t.Errorf("naive %q on %q = %v, want %v (%s)", c.pat, c.s, got, c.want, re)
		}
	}
}

// TestGlobsetErrors: globset refuses these (syntaxerr! cases), so regorus
// fails the rule and nothing matches.
func TestGlobsetErrors(t *testing.T) {
	for _, pat := range []string{"[", "[]", "[!", "[!]", "[z-a]", "[z--]", "{a,b", "{a,{b,c}", "a,b}", "{a,b}}", "a\\"} {
		if _, err := Compile(pat); err == nil {
			t.Errorf("CompileGlob(%q) = nil error, want invalid", pat)
		}
		if Match(pat, pat) {
			t.Errorf("GlobMatch(%q) matched; an invalid glob matches nothing", pat)
		}
	}
}

// TestRegoGlobMatch pins regorus's delimiter rewriting (src/builtins/glob.rs
// @ regorus-v0.9.1) as sandbox-policy.rego calls it.
func TestRegoGlobMatch(t *testing.T) {
	dot := []rune{'.'}
	slash := []rune{'/'}
	none := []rune{}
	cases := []struct {
		pat    string
		delims []rune
		s      string
		want   bool
		why    string
	}{
		// Hosts: glob.match(lower(host), ["."], ...) sandbox-policy.rego:121 @ v0.0.111.
		{"*.example.com", dot, "api.example.com", true, "one label"},
		{"*.example.com", dot, "a.b.example.com", false, "* is one label"},
		{"*.example.com", dot, "example.com", false, "not the apex"},
		{"**.example.com", dot, "a.b.example.com", true, "** many labels"},
		{"**.example.com", dot, "example.com", false, "** not the apex"},
		{"api.*.example.com", dot, "api.eu.example.com", true, "middle label"},
		// Paths: glob.match(pattern, ["/"], actual) sandbox-policy.rego:762 @ v0.0.111.
		{"/files/**.json", slash, "/files/a/b.json", false, "** inside a segment is *"},
		{"/repos/**/pulls", slash, "/repos/pulls", true, "/**/ zero dirs"},
		{"/a/*.json", slash, "/a/x.y.json", true, "'.' is no delimiter for paths"},
		// Query values: glob.match(matcher, [], value) is ["."], sandbox-policy.rego:796.
		{"repo:acme/widgets *", none, "repo:acme/widgets foo.bar", false, "* never crosses '.'"},
		{"repo:acme/widgets *", none, "repo:acme/widgets foo/bar", true, "'/' is not a delimiter"},
		{"*", none, "1.2", false, "* stops at '.'"},
		{"**", none, "1.2", true, "** alone matches all"},
		{"v*", none, "v1.2", false, "* stops at '.'"},
		{"v**", none, "v1.2", false, "** not next to a delimiter is *"},
		{"v*.*", none, "v1.2", true, "dots in the pattern too"},
		{"*", none, "a\x00b", false, "NUL in a value is a regorus error"},
		{"a:b", []rune{':'}, "a:b", true, "':' becomes NUL"},
		{"*", nil, "a/b", true, "null delimiters: '/' is plain"},
	}
	for _, c := range cases {
		if got := RegoMatch(c.pat, c.delims, c.s); got != c.want {
			t.Errorf("glob.match(%q, %q, %q) = %v, want %v (%s)", c.pat, string(c.delims), c.s, got, c.want, c.why)
		}
	}
}

// FuzzGlob differentially compares the position-set matcher against
// globset's regex translation run by Go's regexp.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"/files/**.json", "/files/a/b.json"}, {"/repos/**/pulls", "/repos/pulls"},
		{"{a,{b,**/c}}", "x/c"}, {"[!a-z]?*", "A/b"}, {"a/**", "a/"}, {"**/x/**", "/x/y"},
		{"[é-ü]", "\xc3"}, {"*.*", "a.b"}, {"{{},a}", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, s string) {
		if len(pat) > 64 || len(s) > 256 {
			return
		}
		g, err := Compile(pat)
		re, rerr := naiveGlobRegexp(pat)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("compile disagree %q: %v vs %v", pat, err, rerr)
		}
		if err != nil {
			return
		}
		if got, want := g.Match(s), re.MatchString(latin1(s)); got != want {
			t.Fatalf("%q on %q: matcher %v, regex %v (%s)", pat, s, got, want, re)
		}
	})
}

func BenchmarkGlobMatch(b *testing.B) {
	g, _ := Compile("/repos/*/*/issues/**")
	for b.Loop() {
		g.Match("/repos/acme/widgets/issues/5/comments")
	}
}
