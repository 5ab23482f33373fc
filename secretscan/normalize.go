package secretscan

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// IgnorablePattern is the RE2 character class of the characters Normalize
// removes: Unicode format characters (category Cf: zero-width space,
// joiners, BOM, soft hyphen, bidi controls, tags) and the other invisible,
// default-ignorable code points (combining grapheme joiner, Hangul fillers,
// variation selectors, and the unassigned ranges reserved for them).
const IgnorablePattern = `[\p{Cf}\x{034F}\x{115F}\x{1160}\x{17B4}\x{17B5}\x{180B}-\x{180F}\x{2060}-\x{206F}\x{3164}\x{FE00}-\x{FE0F}\x{FFA0}\x{FFF0}-\x{FFF8}\x{E0000}-\x{E0FFF}]`

// SpacePattern is the RE2 character class of the characters Join removes:
// Unicode White_Space (unicode.IsSpace), NBSP and the ideographic space
// included.
const SpacePattern = `[\t\n\v\f\r\x{85}\p{Z}]`

// ignorableRanges are the default-ignorable code points outside Cf.
var ignorableRanges = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x034F, Hi: 0x034F, Stride: 1},
		{Lo: 0x115F, Hi: 0x1160, Stride: 1},
		{Lo: 0x17B4, Hi: 0x17B5, Stride: 1},
		{Lo: 0x180B, Hi: 0x180F, Stride: 1},
		{Lo: 0x2060, Hi: 0x206F, Stride: 1},
		{Lo: 0x3164, Hi: 0x3164, Stride: 1},
		{Lo: 0xFE00, Hi: 0xFE0F, Stride: 1},
		{Lo: 0xFFA0, Hi: 0xFFA0, Stride: 1},
		{Lo: 0xFFF0, Hi: 0xFFF8, Stride: 1},
	},
	R32: []unicode.Range32{{Lo: 0xE0000, Hi: 0xE0FFF, Stride: 1}},
}

// IsIgnorable reports whether r is an invisible character Normalize
// removes (IgnorablePattern).
func IsIgnorable(r rune) bool {
	return r >= 0x80 && (unicode.Is(unicode.Cf, r) || unicode.Is(ignorableRanges, r))
}

// Normalize removes the invisible characters of IgnorablePattern from s,
// so "sk-ant-\u200bapi03-..." reads as "sk-ant-api03-...". Invalid UTF-8
// is kept as is. s is returned unchanged (no copy) when there is nothing
// to remove.
func Normalize(s string) string {
	if isASCII(s) {
		return s // no ASCII character is ignorable
	}
	return remove(s, false, IsIgnorable)
}

// Join removes white space (SpacePattern) from s, so a secret wrapped over
// lines or split by spaces reads as one run. Only Joinable rules run on the
// result.
func Join(s string) string {
	return remove(s, true, unicode.IsSpace)
}

// remove drops the runes of s for which drop holds, and the ASCII white
// space when spaces is set (drop is asked about non-ASCII runes only),
// keeping invalid UTF-8 bytes as they are. s is returned unchanged when
// nothing is dropped.
func remove(s string, spaces bool, drop func(rune) bool) string {
	var b strings.Builder
	kept := 0 // s[kept:i] is still to be written
	for i := 0; i < len(s); {
		c := s[i]
		n := 1
		if c < utf8.RuneSelf {
			if !spaces || !asciiSpace[c] {
				i++
				continue
			}
		} else {
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			if (r == utf8.RuneError && n == 1) || !drop(r) {
				i += n
				continue
			}
		}
		if b.Cap() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[kept:i])
		i += n
		kept = i
	}
	if b.Cap() == 0 {
		return s
	}
	b.WriteString(s[kept:])
	return b.String()
}

// asciiSpace marks the ASCII white space.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}
