package policydiff

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The Markdown helpers render untrusted text (PR content: hosts, paths,
// reasons) literally: they create no link, image, HTML or table cell. They
// are runner/diag.go's mdText and mdCode (the runner's job summary), kept
// here because policydiff must not import the runner.

// hidden reports characters a reviewer cannot see or that reorder text.
// (runner/logtext.go's hidden, plus the replacement character itself).
func hidden(r rune) bool {
	return r == utf8.RuneError || r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029')
}

// mdText escapes every ASCII punctuation and symbol character, so no
// Markdown or HTML construct can start, and turns line breaks into <br>.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range strings.ReplaceAll(s, "\r\n", "\n") {
		switch {
		case r == '\n':
			b.WriteString("<br>")
		case r < utf8.RuneSelf && (unicode.IsPunct(r) || unicode.IsSymbol(r)):
			b.WriteByte('\\')
			b.WriteRune(r)
		case hidden(r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode renders s as a code span that is safe in a table cell: fenced by
// one backtick more than its longest run of backticks, '|' escaped (GFM
// splits cells before it parses spans), line breaks and hidden characters
// replaced.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r':
			return ' '
		case hidden(r):
			return utf8.RuneError
		}
		return r
	}, s)
	s = strings.ReplaceAll(s, "|", "\\|")
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
