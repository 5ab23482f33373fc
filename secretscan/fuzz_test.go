package secretscan

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// invisible are the format and default-ignorable characters the fuzzer
// inserts into a known key.
var invisible = []rune{0x00AD, 0x034F, 0x061C, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x202A, 0x202E,
	0x2060, 0x2063, 0x2066, 0xFE0F, 0xFEFF, 0xFFF9, 0xE0001, 0xE0041, 0xE0100, 0x3164, 0x115F}

// FuzzFind checks that the scanner never panics on any text, that the text
// normalises the way IgnorablePattern says, and that a known key with
// invisible characters (and, with ws set, white space) inserted where the
// fuzzer says, inside any text, is always found.
func FuzzFind(f *testing.F) {
	f.Add("", []byte{0, 3, 7}, uint8(0), false)
	f.Add("This looks like a duplicate of #3.", []byte{1, 1, 1, 200}, uint8(1), true)
	f.Add("token: \u200b\xff", []byte{9, 40, 2, 2}, uint8(5), false)
	keys := fakeKeys()
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	})
	s := Default()
	f.Fuzz(func(t *testing.T, text string, cuts []byte, which uint8, ws bool) {
		_ = s.Find(text)
		_ = s.FindAll(text)
		if n := Normalize(text); utf8.ValidString(text) && strings.ContainsFunc(n, IsIgnorable) {
			t.Fatalf("Normalize(%q) = %q still has an ignorable character", text, n)
		}
		key := keys[names[int(which)%len(names)]]
		var b strings.Builder
		last := 0
		for i, c := range cuts {
			at := last + int(c)%8
			if at >= len(key) {
				break
			}
			b.WriteString(key[last:at])
			b.WriteRune(invisible[(int(c)+i)%len(invisible)])
			if ws && c%3 == 0 {
				b.WriteString([]string{"\n", " ", "\u00a0", "\r\n", "\t"}[int(c)%5])
			}
			last = at
		}
		b.WriteString(key[last:])
		disguised := text + " " + b.String() + " " + text
		if s.Find(disguised) == "" {
			t.Fatalf("key %s not found in %q", names[int(which)%len(names)], disguised)
		}
	})
}
