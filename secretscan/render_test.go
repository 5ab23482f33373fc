package secretscan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestRendered(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain text is returned as is", "a duplicate of #12", "a duplicate of #12"},
		{"empty comment", "ab<!---->cd", "abcd"},
		{"abrupt empty comments", "a<!-->b<!--->c", "abc"},
		{"comment with text", "a<!-- hidden -- text -->b", "ab"},
		{"comment closed by --!>", "a<!-- x --!>b", "ab"},
		{"unclosed comment stays text", "a<!-- b", "a<!-- b"},
		{"empty span", "ab<span></span>cd", "abcd"},
		{"tag with attributes", `a<b class="x" title='y'>b</b>c`, "abc"},
		{"quoted > in an attribute", `a<span title=">">b`, "ab"},
		{"quoted > after = and space", `a<span title = '>'>b`, "ab"},
		{"unclosed tag stays text", "a<span b", "a<span b"},
		{"not a tag", "a < b and 3<4", "a < b and 3<4"},
		{"declaration, PI, CDATA", "a<!x>b<?php x?>c<![CDATA[y]]>d", "abcd"},
		{"bogus end tag", "a</ x>b", "ab"},
		{"script content dropped", "a<script>x</script>b<STYLE>p{}</style>c", "abc"},
		{"decimal reference", "&#103;hp", "ghp"},
		{"hex reference", "&#x67;&#X68;p", "ghp"},
		{"named references", "a&lowbar;b&UnderBar;c&amp;d", "a_b_c&d"},
		{"reference after tags", "&lt;span&gt;x", "<span>x"},
		{"double-escaped reference", "&amp;#103;", "&#103;"},
		{"backslash escape", `ghp\_x \\ \a`, `ghp_x \ \a`},
		{"emphasis, strike, code", "a**b**c~~d~~e`f`g", "abcdefg"},
		{"inline link", "a[b](http://x/(y))c[d]e", "abcde"},
		{"reference link", "a[b][ref]c[d][]e", "abcde"},
		{"invalid UTF-8 kept", "a\xff<b>c", "a\xffc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Rendered(tc.in); got != tc.want {
				t.Fatalf("Rendered(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// hiders are markup a Markdown renderer does not show, which the fuzzer
// inserts into a known key.
var hiders = []string{"<!---->", "<!-->", "<span></span>", "<b>", "</b>", "<!-- x -->", `<a href=">" title='>'>`, "</a>",
	"<?x?>", "<!x>", "**", "~~", "`", "<script>x</script>"}

// disguise hides markup in key at the places cuts say: a hider between two
// characters, or a character written as a character reference.
func disguise(key string, cuts []byte) string {
	var b strings.Builder
	last := 0
	for i, c := range cuts {
		at := last + int(c)%8
		if at >= len(key) {
			break
		}
		b.WriteString(key[last:at])
		switch c % 4 {
		case 0:
			b.WriteString(fmt.Sprintf("&#%d;", key[at]))
			at++
		case 1:
			b.WriteString(fmt.Sprintf("&#x%x;", key[at]))
			at++
		default:
			b.WriteString(hiders[(int(c)+i)%len(hiders)])
		}
		last = at
	}
	b.WriteString(key[last:])
	return b.String()
}

// FuzzFindRendered checks that Rendered never panics nor grows a text, and
// that a known key split by markup a renderer hides (inserted where the
// fuzzer says, inside any text without markup of its own) is always found
// by FindRendered.
func FuzzFindRendered(f *testing.F) {
	f.Add("", []byte{0, 3, 7}, uint8(0))
	f.Add("See <b>this</b> &amp; [that](x).", []byte{1, 2, 6, 200}, uint8(1))
	f.Add("a<!-- \xff", []byte{9, 40, 2, 3}, uint8(5))
	keys := fakeKeys()
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	})
	s := Default()
	f.Fuzz(func(t *testing.T, text string, cuts []byte, which uint8) {
		if r := Rendered(text); len(r) > len(text) {
			t.Fatalf("Rendered(%q) = %q is longer", text, r)
		}
		_ = s.FindRendered(text)
		plain := strings.Map(func(r rune) rune {
			if strings.ContainsRune(renderChars, r) {
				return -1
			}
			return r
		}, text)
		name := names[int(which)%len(names)]
		disguised := plain + " " + disguise(keys[name], cuts) + " " + plain
		if s.FindRendered(disguised) == "" {
			t.Fatalf("key %s not found in %q (rendered %q)", name, disguised, Rendered(disguised))
		}
	})
}
