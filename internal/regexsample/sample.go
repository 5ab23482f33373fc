// Package regexsample generates strings that match a regular expression,
// for tests that need an example of every rule in a rule set (the
// secretscan rules, and their Rego copy in lint). Assertions (\b, ^, $)
// are not enforced: callers pad the sample with spaces.
//
// It is test support: only _test.go files import it.
package regexsample

import (
	"fmt"
	"math/rand/v2"
	"regexp/syntax"
	"strings"
	"unicode"
)

// String returns a random string matching pattern (RE2, Perl flags), with
// each repetition at most extra times beyond its minimum.
func String(pattern string, r *rand.Rand, extra int) (string, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", fmt.Errorf("parsing %q: %w", pattern, err)
	}
	var b strings.Builder
	gen(&b, re.Simplify(), r, extra)
	return b.String(), nil
}

func gen(b *strings.Builder, re *syntax.Regexp, r *rand.Rand, extra int) {
	switch re.Op {
	case syntax.OpLiteral:
		genLiteral(b, re, r)
	case syntax.OpCharClass:
		b.WriteRune(pick(re.Rune, r))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[r.IntN(62)])
	case syntax.OpCapture:
		gen(b, re.Sub[0], r, extra)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			gen(b, s, r, extra)
		}
	case syntax.OpAlternate:
		gen(b, re.Sub[r.IntN(len(re.Sub))], r, extra)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		genRepeat(b, re, r, extra)
	}
	// Empty-width assertions and empty matches write nothing.
}

// genLiteral writes a literal, each letter of a case-folded one in a
// random case.
func genLiteral(b *strings.Builder, re *syntax.Regexp, r *rand.Rand) {
	for _, c := range re.Rune {
		if re.Flags&syntax.FoldCase != 0 && r.IntN(2) == 0 {
			c = unicode.SimpleFold(c)
		}
		b.WriteRune(c)
	}
}

// genRepeat writes a random number of samples of a repetition's operand,
// within bounds.
func genRepeat(b *strings.Builder, re *syntax.Regexp, r *rand.Rand, extra int) {
	lo, hi := bounds(re, extra)
	for range lo + r.IntN(hi-lo+1) {
		gen(b, re.Sub[0], r, extra)
	}
}

func bounds(re *syntax.Regexp, extra int) (int, int) {
	switch re.Op {
	case syntax.OpStar:
		return 0, extra
	case syntax.OpPlus:
		return 1, 1 + extra
	case syntax.OpQuest:
		return 0, 1
	}
	hi := re.Min + extra
	if re.Max >= 0 {
		hi = min(hi, re.Max)
	}
	return re.Min, hi
}

// pick returns a random rune of a character class (pairs of lo, hi),
// preferring printable ASCII other than space when the class has some.
func pick(ranges []rune, r *rand.Rand) rune {
	if ascii := printableASCII(ranges); len(ascii) > 0 {
		return ascii[r.IntN(len(ascii))]
	}
	i := r.IntN(len(ranges)/2) * 2
	return ranges[i] + rune(r.IntN(int(ranges[i+1]-ranges[i])+1))
}

// printableASCII lists the runes of a character class (pairs of lo, hi)
// that are printable ASCII other than space.
func printableASCII(ranges []rune) []rune {
	var ascii []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for c := max(ranges[i], '!'); c <= min(ranges[i+1], '~'); c++ {
			ascii = append(ascii, c)
		}
	}
	return ascii
}
