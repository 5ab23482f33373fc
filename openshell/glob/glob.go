package glob

import (
	"errors"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file is the glob engine of OpenShell's decisions. OpenShell evaluates
// data/sandbox-policy.rego with regorus 0.9.1 (Cargo.lock @ v0.0.83 and
// v0.0.111), whose glob.match builtin (regorus src/builtins/glob.rs @
// regorus-v0.9.1) rewrites pattern and value and then runs Rust globset
// (0.4.18) with literal_separator(true):
//
//   - delimiters null: every '/' becomes NUL, so nothing is a separator;
//   - delimiters [] means ["."] (glob.rs: "if delimiters.is_empty() push '.'");
//   - '/' in the list keeps '/' as globset's separator; without it every
//     '/' becomes NUL first;
//   - every other delimiter d becomes "/d/" in both strings, so it acts as a
//     separator ("a.b" is "a/./b"); ':' becomes NUL instead.
//
// A value that already holds NUL is an evaluation error in regorus; we answer
// "no match", which is what the failed rule body amounts to.
//
// globset (crates/globset/src/glob.rs, Parser::parse_star and
// Tokens::to_regex_with) then reads:
//
//   - '?' one byte but not '/'; '*' any bytes but not '/';
//   - "**" is recursive only as a whole segment: at the start followed by '/'
//     or the end ("**/x": zero or more leading directories), after '/' at the
//     end ("x/**": '/' then anything, so not "x" itself), or between slashes
//     ("a/**/b": "/" or "/.../", so zero directories too); any other "**" is
//     two '*' (so "/files/**.json" stays in one segment); "**" alone matches
//     everything;
//   - [...] classes ('!' or '^' negate; a negated class matches '/'),
//     {a,b} alternates (nested), '\' escapes the next character;
//   - matching is on bytes ("(?-u)"), anchored at both ends.
//
// An unclosed '[' or '{', an unopened '}', a reversed range and a trailing
// '\' are invalid globs: regorus fails the evaluation
// and we treat the pattern as matching nothing.

// globTok is one globset token.
type globTok struct {
	kind   globKind
	lit    byte
	neg    bool
	ranges [][2]rune
	alts   [][]globTok
}

type globKind uint8

const (
	gLit globKind = iota
	gAny
	gStar
	gRecPrefix // (?:/?|.*/)
	gRecSuffix // /.*
	gRecZero   // (?:/|/.*/)
	gClass
	gAlts
)

// globMeta holds every byte globParser.parse does not read as itself: the
// wildcards, a class, an alternate and its end, and the escape. A ',' is
// special only inside an alternate, which needs a '{'.
const globMeta = "?*[{}\\"

// errGlob reports a pattern globset refuses.
var errGlob = errors.New("invalid glob")

// Glob is a compiled globset pattern (literal_separator on, '/' separator).
type Glob struct {
	toks  []globTok
	all   bool   // the pattern is "**": matches everything
	exact string // the pattern has no metacharacters: compare bytes
	plain bool
}

// Compile parses a globset pattern with '/' as the separator.
func Compile(pattern string) (*Glob, error) {
	// Most patterns (hosts, paths, names) have no metacharacter at all:
	// they match themselves, byte for byte, and need no tokens. Every
	// byte the parser treats specially is in globMeta, so this is the
	// parser's own answer for them, without one token per byte.
	if !strings.ContainsAny(pattern, globMeta) {
		return &Glob{exact: pattern, plain: true}, nil
	}
	p := globParser{s: pattern}
	toks, err := p.parse()
	if err != nil {
		return nil, err
	}
	g := &Glob{toks: toks}
	if len(toks) == 1 && toks[0].kind == gRecPrefix {
		g.all = true
	}
	if lit, ok := literalOf(toks); ok {
		g.exact, g.plain = lit, true
	}
	return g, nil
}

func literalOf(toks []globTok) (string, bool) {
	b := make([]byte, 0, len(toks))
	for _, t := range toks {
		if t.kind != gLit {
			return "", false
		}
		b = append(b, t.lit)
	}
	return string(b), true
}

type globParser struct {
	s        string
	i        int
	branches [][]globTok // branches[0] is the top level
	stack    []int       // index in branches where each open alternate starts
}

func (p *globParser) push(t globTok) {
	p.branches[len(p.branches)-1] = append(p.branches[len(p.branches)-1], t)
}

func (p *globParser) peek() (byte, bool) {
	if p.i < len(p.s) {
		return p.s[p.i], true
	}
	return 0, false
}

func (p *globParser) parse() ([]globTok, error) {
	p.branches = [][]globTok{nil}
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		if err := p.token(c); err != nil {
			return nil, err
		}
	}
	if len(p.branches) != 1 {
		return nil, errGlob
	}
	return p.branches[0], nil
}

// token reads the token that starts with c (already consumed).
func (p *globParser) token(c byte) error {
	switch c {
	case '?':
		p.push(globTok{kind: gAny})
	case '*':
		p.star()
	case '[':
		return p.class()
	case '{':
		p.stack = append(p.stack, len(p.branches))
		p.branches = append(p.branches, nil)
	case '}':
		return p.closeAlternate()
	case ',':
		p.comma()
	case '\\':
		return p.escape()
	default:
		p.push(globTok{kind: gLit, lit: c})
	}
	return nil
}

// closeAlternate reads the '}' that ends the innermost alternate: its
// branches become one alternate token of the enclosing branch.
func (p *globParser) closeAlternate() error {
	if len(p.stack) == 0 {
		return errGlob
	}
	start := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	alts := append([][]globTok(nil), p.branches[start:]...)
	p.branches = p.branches[:start]
	p.push(globTok{kind: gAlts, alts: alts})
	return nil
}

// comma reads ',': a new branch inside an alternate, else itself.
func (p *globParser) comma() {
	if len(p.stack) == 0 {
		p.push(globTok{kind: gLit, lit: ','})
	} else {
		p.branches = append(p.branches, nil)
	}
}

// escape reads the character after '\' as a literal; a trailing '\' is
// invalid.
func (p *globParser) escape() error {
	if p.i >= len(p.s) {
		return errGlob
	}
	// globset escapes one char; a multi-byte char is its bytes.
	p.push(globTok{kind: gLit, lit: p.s[p.i]})
	p.i++
	return nil
}

// star reads '*' or '**' (the first '*' consumed), as Parser::parse_star.
func (p *globParser) star() {
	var prev byte // the byte before the first '*'; 0 at the start
	if p.i >= 2 {
		prev = p.s[p.i-2]
	}
	if c, _ := p.peek(); c != '*' {
		p.push(globTok{kind: gStar})
		return
	}
	p.i++ // second '*'
	switch {
	case len(p.branches[len(p.branches)-1]) == 0:
		p.leadingRecursive()
	case p.afterSeparator(prev):
		p.recursive()
	default:
		p.twoStars()
	}
}

// afterSeparator reports whether a '**' that follows prev may be
// recursive: after '/', or after ',' or '{' inside an alternate; elsewhere
// it is two '*'.
func (p *globParser) afterSeparator(prev byte) bool {
	inAlternate := len(p.branches) > 1
	return prev == '/' || inAlternate && (prev == ',' || prev == '{')
}

// twoStars pushes '**' read as two '*'.
func (p *globParser) twoStars() {
	p.push(globTok{kind: gStar})
	p.push(globTok{kind: gStar})
}

// leadingRecursive reads '**' at the start of a branch: a recursive prefix
// ('**/' or '**' at the end), else two '*'.
func (p *globParser) leadingRecursive() {
	if c, ok := p.peek(); ok && c != '/' {
		p.twoStars()
	} else {
		p.push(globTok{kind: gRecPrefix})
		if ok {
			p.i++ // the '/'
		}
	}
}

// recursive reads '**' after a separator: a recursive suffix at the end of
// the pattern or of an alternate's branch, a recursive zero-or-more
// ('/**/') before a '/', else two '*'. The recursive token replaces the
// token before it (the separator), unless that one is already recursive.
func (p *globParser) recursive() {
	isSuffix := false
	switch c, ok := p.peek(); {
	case !ok:
		isSuffix = true
	case (c == ',' || c == '}') && len(p.branches) >= 2:
		isSuffix = true
	case c == '/':
		p.i++
	default:
		p.twoStars()
		return
	}
	p.replaceSeparator(isSuffix)
}

// replaceSeparator replaces the last token of the branch (the separator
// before '**') with a recursive suffix or zero-or-more token, unless it is
// already recursive.
func (p *globParser) replaceSeparator(isSuffix bool) {
	br := p.branches[len(p.branches)-1]
	last := br[len(br)-1]
	p.branches[len(p.branches)-1] = br[:len(br)-1]
	switch {
	case last.kind == gRecPrefix || last.kind == gRecSuffix:
		p.push(last)
	case isSuffix:
		p.push(globTok{kind: gRecSuffix})
	default:
		p.push(globTok{kind: gRecZero})
	}
}

// class reads a [...] class (the '[' consumed), as Parser::parse_class
// without allow_unclosed_class. Ranges are of chars; when matching, globset's
// byte regex sees a non-ASCII char as its UTF-8 bytes (compileClass).
func (p *globParser) class() error {
	b := classBuilder{tok: globTok{kind: gClass}, first: true}
	if c, _ := p.peek(); c == '!' || c == '^' {
		b.tok.neg = true
		p.i++
	}
	for p.i < len(p.s) {
		c, w := utf8.DecodeRuneInString(p.s[p.i:])
		p.i += w
		if c == ']' && !b.first {
			p.push(b.finish())
			return nil
		}
		if err := b.add(c); err != nil {
			return err
		}
	}
	return errGlob
}

// classBuilder collects the members of a [...] class as its characters
// are read.
type classBuilder struct {
	tok     globTok
	first   bool // no member read yet: ']' and '-' are themselves
	inRange bool // a '-' after a member: the next character ends its range
}

// add reads one character of the class body (not its closing ']').
func (b *classBuilder) add(c rune) error {
	first := b.first
	b.first = false
	switch {
	case first && (c == ']' || c == '-'):
		b.tok.ranges = append(b.tok.ranges, [2]rune{c, c})
	case c == '-' && !b.inRange:
		b.inRange = true
	case b.inRange:
		b.inRange = false
		r := &b.tok.ranges[len(b.tok.ranges)-1]
		r[1] = c
		if r[1] < r[0] {
			return errGlob
		}
	default:
		b.tok.ranges = append(b.tok.ranges, [2]rune{c, c})
	}
	return nil
}

// finish returns the class token; a '-' left open before the ']' is a
// member.
func (b *classBuilder) finish() globTok {
	if b.inRange {
		b.tok.ranges = append(b.tok.ranges, [2]rune{'-', '-'})
	}
	return b.tok
}

// classHas reports whether byte b is in the class as globset's byte regex
// sees it: an ASCII range is a byte range; a non-ASCII endpoint is escaped
// as its UTF-8 bytes, so "[é]" is the class of bytes 0xC3 and 0xA9, and
// "[a-é]" the range a..0xC3 plus byte 0xA9 (char_to_escaped_literal).
func classHas(t *globTok, b byte) bool {
	in := slices.ContainsFunc(t.ranges, func(r [2]rune) bool { return rangeHas(r, b) })
	return in != t.neg
}

// rangeHas reports whether byte b is in the class range r (a single char
// when r[0] == r[1]) as classHas reads it.
func rangeHas(r [2]rune, b byte) bool {
	lo, hi := []byte(string(r[0])), []byte(string(r[1]))
	if r[0] == r[1] {
		return slices.Contains(lo, b)
	}
	// The regex text is lo-bytes '-' hi-bytes: the range joins the last
	// byte of lo and the first byte of hi; other bytes stand alone.
	return slices.Contains(lo[:len(lo)-1], b) || slices.Contains(hi[1:], b) ||
		(b >= lo[len(lo)-1] && b <= hi[0])
}

// regexEmpty reports whether globset renders toks as the empty regex: no
// tokens, or only alternates whose branches all render empty (such a branch
// is dropped, since empty_alternates is off).
func regexEmpty(toks []globTok) bool {
	for i := range toks {
		if toks[i].kind != gAlts {
			return false
		}
		for _, br := range toks[i].alts {
			if !regexEmpty(br) {
				return false
			}
		}
	}
	return true
}

// Match reports whether the whole of s matches the pattern.
func (g *Glob) Match(s string) bool {
	switch {
	case g.all:
		return true
	case g.plain:
		return s == g.exact
	}
	n := len(s)
	cur := make(bitset, n/64+1)
	cur.set(0)
	cur = g.step(g.toks, cur, s)
	return cur.has(n)
}

type bitset []uint64

func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// step advances the set of positions reachable in s through toks. It is a
// position-set simulation of globset's regex, linear in len(toks)*len(s).
func (g *Glob) step(toks []globTok, in bitset, s string) bitset {
	cur := in
	for ti := range toks {
		t := &toks[ti]
		next := make(bitset, len(cur))
		switch t.kind {
		case gLit, gAny, gClass:
			stepByte(t, cur, next, s)
		case gStar:
			stepStar(cur, next, s)
		case gRecPrefix:
			stepRecPrefix(cur, next, s)
		case gRecSuffix:
			stepRecSuffix(cur, next, s)
		case gRecZero:
			stepRecZero(cur, next, s)
		case gAlts:
			g.stepAlts(t, cur, next, s)
		}
		cur = next
		if cur.empty() {
			return cur
		}
	}
	return cur
}

// byteMatches reports whether the one-byte token t (a literal, `?` or a
// class) matches c.
func byteMatches(t *globTok, c byte) bool {
	switch t.kind {
	case gLit:
		return c == t.lit
	case gAny:
		return c != '/'
	case gClass:
		return classHas(t, c)
	}
	return false
}

// stepByte: a literal, `?` ([^/]) or a class consumes one byte.
func stepByte(t *globTok, cur, next bitset, s string) {
	for i := 0; i < len(s); i++ {
		if cur.has(i) && byteMatches(t, s[i]) {
			next.set(i + 1)
		}
	}
}

// stepStar: `*` is [^/]*, a run that stops at a slash.
func stepStar(cur, next bitset, s string) {
	n := len(s)
	active := false
	for i := 0; i <= n; i++ {
		if cur.has(i) {
			active = true
		}
		if active {
			next.set(i)
		}
		if i < n && s[i] == '/' {
			active = false
		}
	}
}

// stepRecPrefix: a leading `**/` is (?:/?|.*/).
func stepRecPrefix(cur, next bitset, s string) {
	seen := false
	for i := 0; i <= len(s); i++ {
		if cur.has(i) {
			next.set(i)
		}
		if i > 0 && seen && s[i-1] == '/' {
			next.set(i)
		}
		if cur.has(i) {
			seen = true
		}
	}
}

// stepRecSuffix: a trailing `/**` is /.*.
func stepRecSuffix(cur, next bitset, s string) {
	n := len(s)
	seen := false
	for i := 0; i <= n; i++ {
		if seen {
			next.set(i)
		}
		if i < n && cur.has(i) && s[i] == '/' {
			seen = true
		}
	}
}

// stepRecZero: an inner `/**/` is (?:/|/.*/).
func stepRecZero(cur, next bitset, s string) {
	n := len(s)
	seen := false
	for i := 0; i <= n; i++ {
		if i > 0 && seen && s[i-1] == '/' {
			next.set(i)
		}
		if i < n && cur.has(i) && s[i] == '/' {
			seen = true
		}
	}
}

// stepAlts: `{a,b}` is the union of its branches. globset drops empty
// alternatives (empty_alternates off); an alternate whose branches are all
// empty emits nothing.
func (g *Glob) stepAlts(t *globTok, cur, next bitset, s string) {
	any := false
	for _, br := range t.alts {
		if regexEmpty(br) {
			continue
		}
		any = true
		out := g.step(br, cur, s)
		for w := range next {
			next[w] |= out[w]
		}
	}
	if !any {
		copy(next, cur)
	}
}
