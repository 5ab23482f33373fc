package ciout

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The job summary is GitHub Flavored Markdown
// (https://github.github.com/gfm/): a value quoted in it (an error message
// quoting openshell or a sandbox, a signer identity, a tag) must render as
// the text it is and add no link, image, HTML or table cell. MarkdownText
// and MarkdownCode are the only ways fullsend puts a value into Markdown.

// MarkdownText renders s as literal text in a Markdown table cell: every
// ASCII punctuation character backslash-escaped (CommonMark allows it for
// all of them, https://spec.commonmark.org/0.31.2/#backslash-escapes; it
// also keeps `|` from ending the cell and stops autolinks), line breaks as
// <br>, hidden characters (Hidden) as U+FFFD.
func MarkdownText(s string) string {
	var b strings.Builder
	for _, r := range strings.ReplaceAll(s, "\r\n", "\n") {
		switch {
		case r == '\n':
			b.WriteString("<br>")
		case r < utf8.RuneSelf && unicode.IsPunct(r) || r < utf8.RuneSelf && unicode.IsSymbol(r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case Hidden(r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// MarkdownCode renders s as a code span in a table cell: fenced by one
// backtick more than its longest run of backticks, `|` escaped (GFM splits
// cells before it parses spans,
// https://github.github.com/gfm/#tables-extension-), line breaks and hidden
// characters replaced. The empty string stays empty.
func MarkdownCode(s string) string {
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
		case Hidden(r):
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
