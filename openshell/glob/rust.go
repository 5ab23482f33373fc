package glob

// A small model of the Rust glob crate's Pattern (glob 0.3, the version
// OpenShell builds with), which OpenShell uses for MCP method matchers
// (method_matcher_matches_tools_call, l7/mod.rs:752 @ v0.0.83) and for each
// label of a middleware host pattern (HostPattern::new,
// openshell-core/src/host_pattern.rs:118 @ v0.0.111). Only what those
// callers need: Pattern::new's errors and matching with the default
// MatchOptions (case-sensitive, `*` and `?` cross `/`).

type rustGlobTok struct {
	kind  byte // 'c' char, '?' any char, '*' any sequence, 'R' recursive `**`, '[' within, '!' except
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
// end. It is one 'R' token (see matchRustGlob).
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
	p.toks = append(p.toks, rustGlobTok{kind: 'R'})
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
// `*` or `**`), matches r.
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

// matchRustGlob matches s against toks as glob 0.3.3's Pattern::matches
// does with the default options (src/lib.rs:796-869 @ v0.3.3):
//
//   - `*` takes any run of characters, '/' included;
//   - `**` (an 'R' token) takes nothing, or a run that ends just after a
//     '/', or everything left: after taking a character that is not '/',
//     the crate tries the rest of the pattern only once a '/' comes or the
//     input ends. So "a/**/b" matches "a/b" and "a/x/b" but not "a/xb",
//     and "**/x" does not match "ax".
//
// It runs the tokens as an automaton over the characters, carrying the set
// of token positions reached (rustGlobRun): linear in len(toks)×len(s).
func matchRustGlob(toks []rustGlobTok, s []rune) bool {
	m := rustGlobRun{toks: toks}
	cur := m.start()
	for _, c := range s {
		cur = m.read(cur, c)
	}
	return m.accepts(cur)
}

// rustGlobRun simulates a token list on a string. A state set has one
// slot per token position (at the token, or at the end) and one per 'R'
// token being inside its run ("deep": it has taken a character that was
// not '/', so it can only go on).
type rustGlobRun struct{ toks []rustGlobTok }

type rustGlobSet struct{ at, deep []bool }

func (m rustGlobRun) newSet() rustGlobSet {
	return rustGlobSet{at: make([]bool, len(m.toks)+1), deep: make([]bool, len(m.toks))}
}

func (m rustGlobRun) start() rustGlobSet {
	set := m.newSet()
	m.enter(set, 0)
	return set
}

// enter marks position i and, past every `*` and `**` (which may take
// nothing), the positions after it.
func (m rustGlobRun) enter(set rustGlobSet, i int) {
	for ; i <= len(m.toks); i++ {
		set.at[i] = true
		if i == len(m.toks) || (m.toks[i].kind != '*' && m.toks[i].kind != 'R') {
			return
		}
	}
}

// read returns the states cur moves to on character c.
func (m rustGlobRun) read(cur rustGlobSet, c rune) rustGlobSet {
	next := m.newSet()
	for i, t := range m.toks {
		switch {
		case !cur.at[i] && !cur.deep[i]:
		case t.kind == '*':
			m.enter(next, i)
		case t.kind == 'R' && c == '/':
			next.deep[i] = true
			m.enter(next, i+1)
		case t.kind == 'R':
			next.deep[i] = true
		case t.matchesOne(c):
			m.enter(next, i+1)
		}
	}
	return next
}

// accepts reports whether the input may end in set: at the end of the
// tokens, or inside a `**` run followed only by tokens that take nothing.
func (m rustGlobRun) accepts(set rustGlobSet) bool {
	if set.at[len(m.toks)] {
		return true
	}
	for i, deep := range set.deep {
		if deep && m.emptyFrom(i+1) {
			return true
		}
	}
	return false
}

// emptyFrom reports whether the tokens from i on can all take nothing.
func (m rustGlobRun) emptyFrom(i int) bool {
	for _, t := range m.toks[i:] {
		if t.kind != '*' && t.kind != 'R' {
			return false
		}
	}
	return true
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
