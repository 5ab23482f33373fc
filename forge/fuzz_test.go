package forge

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/fullsend-ai/agent-sandbox/secretscan"
)

func FuzzMatch(f *testing.F) {
	for _, r := range Routes() {
		f.Add(r.Method, strings.NewReplacer("{owner}", "acme", "{repo}", "widgets", "{number}", "42").Replace(r.Path))
	}
	f.Add("GET", "/repos/a/b/issues/../1")
	f.Add("POST", "/repos/a%2F/b/issues/1/labels")
	f.Fuzz(func(t *testing.T, method, path string) {
		rt, p, _, err := Match(method, path)
		if err != nil {
			return
		}
		if rt.Method != method {
			t.Fatalf("matched %s for method %s", rt.Method, method)
		}
		// A match must render back to exactly the input path.
		back := strings.NewReplacer("{owner}", p.Owner, "{repo}", p.Repo, "{number}", strconv.Itoa(p.Number)).Replace(rt.Path)
		if back != path {
			t.Fatalf("path %q matched %s but renders back as %q", path, rt.Path, back)
		}
		if strings.Contains(path, "..") && (p.Owner == ".." || p.Repo == "..") {
			t.Fatalf("dot-dot segment accepted: %q", path)
		}
	})
}

// FuzzScopeSearch checks that a query ScopeSearch accepts reaches the
// forge confined to the repository however the forge tokenizes it:
// whether a backslash escapes the next character or not, and whether a
// double quote inside a token toggles a phrase or is a literal character.
// Under every reading, no token outside a phrase is a repo qualifier for
// another repository, an org/user/owner qualifier or a boolean operator.
func FuzzScopeSearch(f *testing.F) {
	for _, s := range []string{"crash on start", `"a b" is:open label:"x y"`, "repo:o/r x", "a OR b", `"unbalanced`, "org:o", "-repo:o/r",
		"label:bug\u00a0repo:x/y", "x\u3000y\u200bz", `label:\" repo:other/x \"`, `label:x"y repo:other/x"`, `-"a b" repo:"o/r"`,
		`"repo:x/y"`, `label:"a"" repo:x/y"`, `"a \" repo:x/y \" b"`, `(repo:x/y)`, `label:"(a)"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		out, err := ScopeSearch(q, "o", "r")
		if err != nil {
			return
		}
		if !strings.HasSuffix(out, " repo:o/r") && out != "repo:o/r" {
			t.Fatalf("scoped query %q does not end with the repo", out)
		}
		for _, r := range forgeReadings {
			checkForgeReading(t, r, out)
		}
		// Scoping is idempotent.
		again, err := ScopeSearch(out, "o", "r")
		if len(out) <= maxSearchBytes && (err != nil || again != out) {
			t.Fatalf("rescoping %q gave %q, %v", out, again, err)
		}
	})
}

// checkForgeReading fails when the scoped query out, tokenized as reading r,
// names a scope other than repo:o/r or holds a boolean operator.
func checkForgeReading(t *testing.T, r forgeReading, out string) {
	t.Helper()
	repos := 0
	for _, tk := range r.tokens(out) {
		if tk.phrase {
			continue
		}
		switch tk.text {
		case "OR", "AND", "NOT":
			t.Fatalf("%s: boolean operator %s in %q", r.name, tk.text, out)
		}
		key, val, isQual := strings.Cut(strings.ToLower(strings.TrimPrefix(tk.text, "-")), ":")
		if !isQual {
			continue
		}
		switch key {
		case "repo":
			if val != "o/r" {
				t.Fatalf("%s: %q holds repo:%s", r.name, out, val)
			}
			repos++
		case "org", "user", "owner":
			t.Fatalf("%s: %q holds %s:%s", r.name, out, key, val)
		}
	}
	if repos == 0 {
		t.Fatalf("%s: %q has no repo qualifier", r.name, out)
	}
}

// forgeReading is one way a search engine could tokenize a query. It is
// written independently of searchTokens: tokens are separated by white
// space, invisible and control characters and parentheses outside a
// phrase.
type forgeReading struct {
	name      string
	escapes   bool // a backslash escapes the next character
	midQuotes bool // a quote inside a token opens a phrase too (else only at its start, after '-' or ':')
}

var forgeReadings = []forgeReading{
	{"no escapes, quotes anywhere", false, true},
	{"backslash escapes, quotes anywhere", true, true},
	{"no escapes, quotes at boundaries", false, false},
	{"backslash escapes, quotes at boundaries", true, false},
}

// forgeToken is a token of a forgeReading: its text without the phrase
// quotes, and whether it is one phrase and nothing else.
type forgeToken struct {
	text   string
	phrase bool
}

// forgeTokenizer is the state of a forgeReading over a query.
type forgeTokenizer struct {
	forgeReading
	toks             []forgeToken
	cur              strings.Builder
	started, escaped bool
	inQuote          bool
	opened           bool // the token began with a phrase
	quotes, closedAt int  // quote toggles in the token; cur.Len() when the last phrase closed
}

func (r forgeReading) tokens(q string) []forgeToken {
	z := &forgeTokenizer{forgeReading: r}
	for _, c := range q {
		z.step(c)
	}
	z.flush()
	return z.toks
}

func (z *forgeTokenizer) step(c rune) {
	switch {
	case z.escaped:
		z.escaped = false
		z.add(c)
	case z.escapes && c == '\\':
		z.escaped, z.started = true, true
	case c == '"' && z.quoteToggles():
		z.opened = z.opened || (!z.inQuote && (z.cur.Len() == 0 || z.cur.String() == "-"))
		z.inQuote, z.started = !z.inQuote, true
		z.quotes++
		z.closedAt = z.cur.Len()
	case !z.inQuote && (unicode.IsSpace(c) || secretscan.IsIgnorable(c) || unicode.IsControl(c) || c == '(' || c == ')'):
		z.flush()
	default:
		z.add(c)
	}
}

// quoteToggles reports whether a double quote at this point opens or
// closes a phrase.
func (z *forgeTokenizer) quoteToggles() bool {
	if z.inQuote || z.midQuotes {
		return true
	}
	s := z.cur.String()
	return s == "" || s == "-" || strings.HasSuffix(s, ":")
}

func (z *forgeTokenizer) add(c rune) {
	z.cur.WriteRune(c)
	z.started = true
}

func (z *forgeTokenizer) flush() {
	if z.started {
		phrase := z.opened && !z.inQuote && z.quotes == 2 && z.closedAt == z.cur.Len()
		z.toks = append(z.toks, forgeToken{text: z.cur.String(), phrase: phrase})
	}
	z.cur.Reset()
	z.started, z.escaped, z.opened, z.quotes, z.closedAt = false, false, false, 0, 0
}

func FuzzDecodeBodies(f *testing.F) {
	for _, s := range []string{`{"body":"hi"}`, `["bug"]`, `{"labels":["bug","x"]}`, `{"body":1}`, `[]`, `{"body":"a"} x`} {
		f.Add([]byte(s))
	}
	sc := testScope()
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := sc.decodeComment(b); err == nil {
			if strings.TrimSpace(c) == "" || len(c) > sc.maxComment() {
				t.Fatalf("accepted comment %q", c)
			}
		}
		if ls, err := sc.decodeLabels(b); err == nil {
			if len(ls) == 0 {
				t.Fatal("accepted no labels")
			}
			for _, l := range ls {
				found := false
				for _, a := range sc.Labels {
					found = found || a == l
				}
				if !found {
					t.Fatalf("accepted label %q outside the allowlist", l)
				}
			}
		}
	})
}

// FuzzCredentialAppearsIn checks the response withholding against
// encoding/json: whenever a JSON text decodes to a string or key holding
// the token, appearsIn sees it, however the text escapes it.
func FuzzCredentialAppearsIn(f *testing.F) {
	for _, s := range []string{`{"a":"ghs_k"}`, `["\u0067hs_k"]`, `{"\u0067hs\u005fk":1}`, `"gh\u0073_\k"`, `"\\u0067hs_k"`, `"\ud83d\ude00ghs_k"`} {
		f.Add([]byte(s))
	}
	c, err := NewCredential("ghs_k")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := c.appearsIn(b)
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		if !got && jsonHolds(v, "ghs_k") {
			t.Fatalf("%q decodes to a value holding the token, appearsIn missed it", b)
		}
	})
}

// jsonHolds reports whether a decoded JSON value holds s in a string or key.
func jsonHolds(v any, s string) bool {
	switch v := v.(type) {
	case string:
		return strings.Contains(v, s)
	case []any:
		for _, e := range v {
			if jsonHolds(e, s) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.Contains(k, s) || jsonHolds(e, s) {
				return true
			}
		}
	}
	return false
}
