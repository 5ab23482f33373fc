package secretscan

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// keywordIndex finds which rules' keywords occur in a text in one pass
// over its (lowercased) bytes: keywords of two bytes are looked up by
// those bytes, longer ones by a hash of their first three, in tables of
// bucket numbers; a bucket lists the keywords to compare.
type keywordIndex struct {
	two     [1 << 16]uint16 // bucket number + 1, by the two bytes
	three   [1 << 16]uint16 // bucket number + 1, by hash3 of the first three
	buckets [][]keyword
}

type keyword struct {
	text  string
	rules []int
}

func newKeywordIndex() *keywordIndex { return &keywordIndex{} }

func hash2(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }
func hash3(a, b, c byte) uint16 {
	return uint16((uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * 0x9E3779B1 >> 16)
}

func (x *keywordIndex) add(k string, rule int) error {
	if len(k) < 2 || k != strings.ToLower(k) {
		return fmt.Errorf("keyword %q: want at least two bytes, lowercase", k)
	}
	slot := &x.two[hash2(k[0], k[1])]
	if len(k) > 2 {
		slot = &x.three[hash3(k[0], k[1], k[2])]
	}
	if *slot == 0 {
		x.buckets = append(x.buckets, nil)
		*slot = uint16(len(x.buckets))
	}
	b := &x.buckets[*slot-1]
	for i := range *b {
		if (*b)[i].text == k {
			(*b)[i].rules = append((*b)[i].rules, rule)
			return nil
		}
	}
	*b = append(*b, keyword{text: k, rules: []int{rule}})
	return nil
}

// match sets in set the bit of every rule with a keyword in text, compared
// in lower case (strings.ToLower, as gitleaks does, for non-ASCII text).
func (x *keywordIndex) match(text string, set []uint64) {
	lower := text
	if !isASCII(text) {
		lower = strings.ToLower(text)
	}
	if len(lower) < 2 {
		return
	}
	a, b := asciiLower[lower[0]], asciiLower[lower[1]]
	for i := 0; i+1 < len(lower); i++ {
		if n := x.two[hash2(a, b)]; n != 0 {
			x.check(lower[i:], n, set)
		}
		if i+2 >= len(lower) {
			break
		}
		c := asciiLower[lower[i+2]]
		if n := x.three[hash3(a, b, c)]; n != 0 {
			x.check(lower[i:], n, set)
		}
		a, b = b, c
	}
}

// check compares the keywords of bucket n with the start of s.
func (x *keywordIndex) check(s string, n uint16, set []uint64) {
	for _, k := range x.buckets[n-1] {
		if hasPrefixLower(s, k.text) {
			for _, r := range k.rules {
				set[r/64] |= 1 << (r % 64)
			}
		}
	}
}

// hasPrefixLower reports whether s, lowercased byte by byte over ASCII,
// starts with the lowercase k.
func hasPrefixLower(s, k string) bool {
	if len(s) < len(k) {
		return false
	}
	for i := 0; i < len(k); i++ {
		if asciiLower[s[i]] != k[i] {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiLower maps ASCII upper-case letters to lower case and every other
// byte to itself.
var asciiLower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return t
}()
