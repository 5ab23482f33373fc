package glob

// A small model of the Rust glob crate's Pattern (glob 0.3, the version
// OpenShell builds with), which OpenShell uses for MCP method matchers
// (method_matcher_matches_tools_call, l7/mod.rs:752 @ v0.0.83) and for each
// label of a middleware host pattern (HostPattern::new,
// openshell-core/src/host_pattern.rs:118 @ v0.0.111). Only what those
// callers need: Pattern::new's errors and matching with the default
// MatchOptions (case-sensitive, `*` and `?` cross `/`).

type rustGlobTok struct {
	kind  byte // 'c' char, '?' any char, '*' any sequence, '[' within, '!' except
	ch    rune
	specs []rustGlobSpec
}

type rustGlobSpec struct{ lo, hi rune }

// parseRustGlob tokenizes a pattern as glob::Pattern::new does; false for
// a pattern it rejects (three or more `*`, `**` not a whole path component,
// an unclosed `[`).
func parseRustGlob(pattern string) ([]rustGlobTok, bool) {
	p := rustGlobParser{cs: []rune(pattern)}
	for p.i < len(p.cs) {
		if !p.token() {
			return nil, false
		}
	}
	return p.toks, true
}

// rustGlobParser is the state of parseRustGlob: the pattern's characters,
// the position in them, and the tokens read.
type rustGlobParser struct {
	cs   []rune
	i    int
	toks []rustGlobTok
}

// token reads the token at cs[i]; false for an invalid one.
func (p *rustGlobParser) token() bool {
	switch c := p.cs[p.i]; c {
	case '?':
		p.toks = append(p.toks, rustGlobTok{kind: '?'})
		p.i++
	case '*':
		return p.stars()
	case '[':
		tok, next, ok := parseRustGlobClass(p.cs, p.i)
		if !ok {
			return false
		}
		p.toks = append(p.toks, tok)
		p.i = next
	default:
		p.toks = append(p.toks, rustGlobTok{kind: 'c', ch: c})
		p.i++
	}
	return true
}

// stars reads the run of `*` at cs[i]: one is any sequence, two are the
// recursive wildcard, three or more are invalid.
func (p *rustGlobParser) stars() bool {
	start := p.i
	for p.i < len(p.cs) && p.cs[p.i] == '*' {
		p.i++
	}
	switch p.i - start {
	case 1:
		p.toks = append(p.toks, rustGlobTok{kind: '*'})
		return true
	case 2:
		return p.recursive(start)
	}
	return false
}

// recursive reads the `**` at cs[start:i], valid only as a whole path
// component: at the start or after `/`, and then `/` (consumed) or the
// end. It matches any sequence, as one `*` token merged with a `*` just
// before it.
func (p *rustGlobParser) recursive(start int) bool {
	if start > 0 && p.cs[start-1] != '/' {
		return false
	}
	switch {
	case p.i == len(p.cs):
	case p.cs[p.i] == '/':
		p.i++
	default:
		return false
	}
	if len(p.toks) == 0 || p.toks[len(p.toks)-1].kind != '*' {
		p.toks = append(p.toks, rustGlobTok{kind: '*'})
	}
	return true
}

// parseRustGlobClass parses the class starting at cs[i] == '['. The first
// character after `[` (or `[!`) is always a member, so `[]]` is valid.
func parseRustGlobClass(cs []rune, i int) (rustGlobTok, int, bool) {
	if i+4 <= len(cs) && cs[i+1] == '!' {
		if j := indexRune(cs[i+3:], ']'); j >= 0 {
			return rustGlobTok{kind: '!', specs: rustGlobSpecs(cs[i+2 : i+3+j])}, i + j + 4, true
		}
	} else if i+3 <= len(cs) && cs[i+1] != '!' {
		if j := indexRune(cs[i+2:], ']'); j >= 0 {
			return rustGlobTok{kind: '[', specs: rustGlobSpecs(cs[i+1 : i+2+j])}, i + j + 3, true
		}
	}
	return rustGlobTok{}, 0, false
}

func indexRune(cs []rune, r rune) int {
	for i, c := range cs {
		if c == r {
			return i
		}
	}
	return -1
}

func rustGlobSpecs(s []rune) []rustGlobSpec {
	var out []rustGlobSpec
	for i := 0; i < len(s); {
		if i+3 <= len(s) && s[i+1] == '-' {
			out = append(out, rustGlobSpec{s[i], s[i+2]})
			i += 3
			continue
		}
		out = append(out, rustGlobSpec{s[i], s[i]})
		i++
	}
	return out
}

func (t rustGlobTok) classHas(r rune) bool {
	for _, s := range t.specs {
		if s.lo <= r && r <= s.hi {
			return true
		}
	}
	return false
}

// matchesOne reports whether t, a token that matches one character (not
// `*`), matches r.
func (t rustGlobTok) matchesOne(r rune) bool {
	switch t.kind {
	case '?':
		return true
	case 'c':
		return t.ch == r
	case '[':
		return t.classHas(r)
	case '!':
		return !t.classHas(r)
	}
	return false
}

// matchRustGlob matches s against toks: linear backtracking on the last
// `*`, which is exact for patterns whose only multi-character token is `*`.
func matchRustGlob(toks []rustGlobTok, s []rune) bool {
	ti, si := 0, 0
	starT, starS := -1, 0
	for si < len(s) {
		switch {
		case ti == len(toks):
		case toks[ti].kind == '*':
			starT, starS = ti, si
			ti++
			continue
		case toks[ti].matchesOne(s[si]):
			ti++
			si++
			continue
		}
		if starT < 0 {
			return false
		}
		starS++
		ti, si = starT+1, starS
	}
	for ti < len(toks) && toks[ti].kind == '*' {
		ti++
	}
	return ti == len(toks)
}

// RustPattern is a pattern compiled as glob::Pattern::new does (ParseRust).
type RustPattern struct{ toks []rustGlobTok }

// ParseRust compiles a Rust glob::Pattern; false for a pattern glob 0.3
// rejects (three or more `*`, `**` not a whole path component, an unclosed
// `[`).
func ParseRust(pattern string) (RustPattern, bool) {
	toks, ok := parseRustGlob(pattern)
	return RustPattern{toks}, ok
}

// Match reports whether s matches the pattern with the default
// MatchOptions.
func (p RustPattern) Match(s string) bool { return matchRustGlob(p.toks, []rune(s)) }

// MatchRust matches s against a Rust glob::Pattern (the glob crate,
// default options): `*` any run, `?` one character, `[...]`/`[!...]`
// classes with ranges, no escapes; an invalid pattern matches nothing.
func MatchRust(pattern, s string) bool {
	p, ok := ParseRust(pattern)
	return ok && p.Match(s)
}
