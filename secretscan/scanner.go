package secretscan

import (
	"fmt"
	"maps"
	"math"
	"math/bits"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Scanner applies a rule set to texts. It is immutable and safe for
// concurrent use.
type Scanner struct {
	rules    []rule
	global   []allowlist
	index    *keywordIndex
	joinable []uint64 // bit set of the rules that run on joined text
	always   []uint64 // bit set of the rules without keywords
}

type rule struct {
	Rule
	// compiled returns the rule's regex and allowlists: compiled by New,
	// or on the rule's first run in Default's scanner.
	compiled func() compiledRule
}

type compiledRule struct {
	re    *regexp.Regexp
	allow []allowlist
}

type allowlist struct {
	target    string
	res       []*regexp.Regexp
	stopWords []string
	and       bool
}

// Default returns the scanner of the built-in rule set (Rules and
// GlobalAllow), built on first use. Each rule's regular expressions are
// compiled when its keywords first occur in a text: most texts wake few
// rules, and compiling all of them was most of the scanner's cost in a
// short-lived command (TestBuiltinRulesCompile compiles them all).
func Default() *Scanner { return defaultScanner() }

var defaultScanner = sync.OnceValue(func() *Scanner {
	s, err := build(Rules(), GlobalAllow(), true)
	if err != nil {
		panic(err) // the built-in rules are tested to compile
	}
	return s
})

// New compiles a rule set; global is the allowlist of rules with
// GlobalAllow set.
func New(rules []Rule, global []Allow) (*Scanner, error) {
	return build(rules, global, false)
}

// build makes a scanner; lazy leaves each rule's regular expressions to
// its first run, where an error panics (for rule sets known to compile).
func build(rules []Rule, global []Allow, lazy bool) (*Scanner, error) {
	s := &Scanner{rules: make([]rule, len(rules))}
	var err error
	if s.global, err = compileAllows(global); err != nil {
		return nil, fmt.Errorf("global allowlist: %w", err)
	}
	words := len(rules)/64 + 1
	s.joinable, s.always = make([]uint64, words), make([]uint64, words)
	s.index = newKeywordIndex()
	for i, r := range rules {
		if lazy {
			s.rules[i] = rule{Rule: r, compiled: sync.OnceValue(func() compiledRule {
				c, err := compileRule(&r)
				if err != nil {
					panic(err)
				}
				return c
			})}
		} else {
			c, err := compileRule(&r)
			if err != nil {
				return nil, err
			}
			s.rules[i] = rule{Rule: r, compiled: func() compiledRule { return c }}
		}
		if r.Joinable {
			s.joinable[i/64] |= 1 << (i % 64)
		}
		if len(r.Keywords) == 0 {
			s.always[i/64] |= 1 << (i % 64)
		}
		for _, k := range r.Keywords {
			if err := s.index.add(k, i); err != nil {
				return nil, fmt.Errorf("rule %s: %w", r.ID, err)
			}
		}
	}
	return s, nil
}

// compileRule compiles r's regex and allowlists and checks its secret group.
func compileRule(r *Rule) (compiledRule, error) {
	re, err := regexp.Compile(r.Regex)
	if err != nil {
		return compiledRule{}, fmt.Errorf("rule %s: %w", r.ID, err)
	}
	if r.SecretGroup < 0 || r.SecretGroup > re.NumSubexp() {
		return compiledRule{}, fmt.Errorf("rule %s: secret group %d out of range (the regex has %d)", r.ID, r.SecretGroup, re.NumSubexp())
	}
	allow, err := compileAllows(r.Allow)
	if err != nil {
		return compiledRule{}, fmt.Errorf("rule %s: %w", r.ID, err)
	}
	return compiledRule{re: re, allow: allow}, nil
}

func compileAllows(as []Allow) ([]allowlist, error) {
	out := make([]allowlist, len(as))
	for i, a := range as {
		switch a.Target {
		case "", "match", "line":
		default:
			return nil, fmt.Errorf("allowlist target %q: want \"\", match or line", a.Target)
		}
		if len(a.Regexes) == 0 && len(a.StopWords) == 0 {
			return nil, fmt.Errorf("allowlist %d has neither regexes nor stop words", i)
		}
		out[i] = allowlist{target: a.Target, stopWords: a.StopWords, and: a.And}
		for _, p := range a.Regexes {
			re, err := regexp.Compile(p)
			if err != nil {
				return nil, fmt.Errorf("allowlist: %w", err)
			}
			out[i].res = append(out[i].res, re)
		}
	}
	return out, nil
}

// Find returns the kind (Rule.ID) of the first credential found in text,
// or "" when it looks clean. It never returns the secret itself, so callers
// can log the result. Text is normalised first, and scanned a second time
// with its white space removed by the joinable rules.
func (s *Scanner) Find(text string) string {
	var found string
	s.scan(text, func(r *rule) bool {
		found = r.ID
		return false
	})
	return found
}

// FindRendered is Find over text and then, when it differs, over
// Rendered(text): the text as a Markdown renderer could show it, so a
// secret split by hidden markup (`<!---->`, `<span></span>`, `&#103;`) is
// found too. It is for text a forge will render (comments, labels).
func (s *Scanner) FindRendered(text string) string {
	if kind := s.Find(text); kind != "" {
		return kind
	}
	if r := Rendered(text); r != text {
		return s.Find(r)
	}
	return ""
}

// FindAll returns the distinct kinds of every credential in text, in rule
// order.
func (s *Scanner) FindAll(text string) []string {
	var kinds []string
	seen := map[string]bool{}
	s.scan(text, func(r *rule) bool {
		if !seen[r.ID] {
			seen[r.ID] = true
			kinds = append(kinds, r.ID)
		}
		return true
	})
	return kinds
}

// scan calls hit for each rule that fires on text (normalised) or on its
// joined form, until hit returns false.
func (s *Scanner) scan(text string, hit func(*rule) bool) {
	n := Normalize(text)
	fired := make([]uint64, len(s.always))
	if !s.pass(n, nil, fired, hit) {
		return
	}
	if j := Join(n); j != n {
		s.pass(j, s.joinable, fired, hit)
	}
}

// pass runs the rules whose keywords occur in text (restricted to mask
// when not nil) and that have not fired yet; it returns false when hit
// asked to stop.
func (s *Scanner) pass(text string, mask, fired []uint64, hit func(*rule) bool) bool {
	cand := make([]uint64, len(s.always))
	copy(cand, s.always)
	s.index.match(text, cand)
	for w := range cand {
		if mask != nil {
			cand[w] &= mask[w]
		}
		cand[w] &^= fired[w]
		for set := cand[w]; set != 0; set &= set - 1 {
			i := w*64 + bits.TrailingZeros64(set)
			r := &s.rules[i]
			if !s.fires(r, text) {
				continue
			}
			fired[w] |= 1 << (i % 64)
			if !hit(r) {
				return false
			}
		}
	}
	return true
}

// fires applies rule r to text the way gitleaks' detector does.
func (s *Scanner) fires(r *rule, text string) bool {
	c := r.compiled()
	for _, m := range c.re.FindAllStringIndex(text, -1) {
		match := strings.Trim(text[m[0]:m[1]], "\n")
		secret, ok := r.secret(c.re, match)
		if !ok || (r.Entropy != 0 && entropy(secret) <= r.Entropy) {
			continue
		}
		line := lineAround(text, m[0], m[1])
		if r.GlobalAllow && anyAllows(s.global, secret, match, line) {
			continue
		}
		if anyAllows(c.allow, secret, match, line) {
			continue
		}
		return true
	}
	return false
}

// secret picks the secret out of a match: the rule's capture group, or the
// first non-empty one, or the whole match.
func (r *rule) secret(re *regexp.Regexp, match string) (string, bool) {
	groups := re.FindStringSubmatch(match)
	if len(groups) < 2 {
		return match, true
	}
	if r.SecretGroup > 0 {
		return groups[r.SecretGroup], true
	}
	for _, g := range groups[1:] {
		if g != "" {
			return g, true
		}
	}
	return match, true
}

// lineAround returns the line(s) of text holding text[start:end].
func lineAround(text string, start, end int) string {
	lo := strings.LastIndexByte(text[:start], '\n') + 1
	hi := strings.IndexByte(text[end:], '\n')
	if hi < 0 {
		return text[lo:]
	}
	return text[lo : end+hi]
}

func anyAllows(as []allowlist, secret, match, line string) bool {
	for i := range as {
		if as[i].allows(secret, match, line) {
			return true
		}
	}
	return false
}

// allows applies one allowlist as gitleaks does: regexes against the
// target (never matching an empty one), stop words against the lowercased
// secret; either suffices unless And is set.
func (a *allowlist) allows(secret, match, line string) bool {
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	regexHit := target != "" && a.regexMatches(target)
	stopHit := secret != "" && a.hasStopWord(secret)
	if !a.and {
		return regexHit || stopHit
	}
	return (len(a.res) == 0 || regexHit) && (len(a.stopWords) == 0 || stopHit)
}

// regexMatches reports whether any of the allowlist's regexes matches
// target.
func (a *allowlist) regexMatches(target string) bool {
	for _, re := range a.res {
		if re.MatchString(target) {
			return true
		}
	}
	return false
}

// hasStopWord reports whether the lowercased secret holds any of the
// allowlist's stop words.
func (a *allowlist) hasStopWord(secret string) bool {
	lower := strings.ToLower(secret)
	for _, w := range a.stopWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// entropy is gitleaks' Shannon entropy of s (rune frequencies over its
// length in bytes), summed in rune order so the result does not depend on
// map iteration.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	inv := 1.0 / float64(len(s))
	h := 0.0
	for _, c := range slices.Sorted(maps.Keys(counts)) {
		f := float64(counts[c]) * inv
		h -= f * math.Log2(f)
	}
	return h
}
