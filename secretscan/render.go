package secretscan

import (
	"html"
	"strings"
)

// renderChars are the bytes of the markup Rendered reads; a text without
// any of them renders as itself.
const renderChars = "<&\\*~`[]"

// Rendered returns the text a Markdown renderer with an HTML sanitizer
// (GitHub's, GitLab's) could show for s, so that a secret split by markup
// the reader never sees is scanned whole. It is not a renderer but a
// conservative equivalent: where readings differ it removes rather than
// keeps, so it may join text a renderer shows apart (a false alarm at
// worst) and should not keep anything a renderer hides. In order:
//
//   - HTML comments (`<!-- -->`, and the empty `<!-->` and `<!--->`),
//     declarations, CDATA sections and processing instructions (`<!...>`,
//     `<?...>`, `</` not followed by a letter) are removed, as an HTML
//     parser drops them;
//   - tags (`<span>`, `</span>`, `<a href=">">`: a quoted attribute value
//     may hold '>') are removed and the element's content kept, except the
//     content of script and style elements, which sanitizers drop with
//     the element;
//   - character references (`&#103;`, `&#x67;`, `&lowbar;`, and the legacy
//     names without a semicolon) are decoded, after the tags, as the
//     parser does (`&lt;b&gt;` shows as text);
//   - Markdown's backslash before ASCII punctuation is removed, as are the
//     emphasis, strikethrough and code-span delimiters (*, ~, `), link
//     brackets, an inline link's destination and a reference link's label
//     (`[text](dest)` and `[text][ref]` show text).
//
// A comment or tag that is not closed is left as text. Invisible
// characters and white space are left to Normalize and Join. s is
// returned unchanged (no copy) when it holds none of the markup.
func Rendered(s string) string {
	if !strings.ContainsAny(s, renderChars) {
		return s
	}
	return markdownText(html.UnescapeString(stripHTML(s)))
}

// stripHTML removes the comments, declarations, processing instructions
// and tags of s, and the content of script and style elements.
func stripHTML(s string) string {
	if strings.IndexByte(s, '<') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		b.WriteString(s[i : i+j])
		i += j
		if n := markupLen(s[i:]); n > 0 {
			i += n
			continue
		}
		b.WriteByte('<')
		i++
	}
	return b.String()
}

// markupLen returns the length of the comment, declaration, processing
// instruction or tag (with a script or style element's content) at the
// start of s, which starts with '<'; 0 when there is none or it is not
// closed.
func markupLen(s string) int {
	switch {
	case strings.HasPrefix(s, "<!--"):
		return commentLen(s)
	case strings.HasPrefix(s, "<!"), strings.HasPrefix(s, "<?"):
		return closeLen(s, ">")
	case strings.HasPrefix(s, "</"):
		if len(s) > 2 && isASCIILetter(s[2]) {
			return tagLen(s)
		}
		return closeLen(s, ">") // a bogus comment to an HTML parser
	case len(s) > 1 && isASCIILetter(s[1]):
		return elementLen(s)
	}
	return 0
}

// commentLen returns the length of the HTML comment at the start of s
// (which starts with "<!--"), ended by "-->" or "--!>", or abruptly by
// "<!-->" and "<!--->"; 0 when it is not closed.
func commentLen(s string) int {
	if strings.HasPrefix(s, "<!-->") {
		return len("<!-->")
	}
	if strings.HasPrefix(s, "<!--->") {
		return len("<!--->")
	}
	end := -1
	for _, closer := range []string{"-->", "--!>"} {
		if j := strings.Index(s[4:], closer); j >= 0 && (end < 0 || 4+j+len(closer) < end) {
			end = 4 + j + len(closer)
		}
	}
	return max(end, 0)
}

// closeLen returns the length of s up to and including the first closer,
// or 0 when there is none.
func closeLen(s, closer string) int {
	if j := strings.Index(s, closer); j >= 0 {
		return j + len(closer)
	}
	return 0
}

// elementLen returns the length of the start tag at the start of s, and,
// for a script or style element, of its content up to its end tag; 0 when
// the tag is not closed.
func elementLen(s string) int {
	n := tagLen(s)
	if n == 0 {
		return 0
	}
	name := strings.ToLower(tagName(s[1:]))
	if name != "script" && name != "style" {
		return n
	}
	if j := strings.Index(strings.ToLower(s[n:]), "</"+name); j >= 0 {
		return n + j // the end tag is removed as a tag of its own
	}
	return n
}

// tagName returns the name at the start of s: the bytes up to white
// space, '/' or '>'.
func tagName(s string) string {
	if j := strings.IndexAny(s, " \t\n\f\r/>"); j >= 0 {
		return s[:j]
	}
	return s
}

// tagLen returns the length of the tag at the start of s up to and
// including its '>', skipping quoted attribute values (a double or single quote
// right after '=' and white space opens one); 0 when the tag is not closed.
func tagLen(s string) int {
	for i := 1; i < len(s); {
		switch s[i] {
		case '>':
			return i + 1
		case '=':
			i = skipQuotedValue(s, i+1)
			if i < 0 {
				return 0
			}
		default:
			i++
		}
	}
	return 0
}

// skipQuotedValue returns the index after the attribute value that starts
// at s[i] (after white space) when it is quoted, i when it is not, and -1
// when its quote is not closed.
func skipQuotedValue(s string, i int) int {
	for i < len(s) && strings.IndexByte(" \t\n\f\r", s[i]) >= 0 {
		i++
	}
	if i == len(s) || (s[i] != '"' && s[i] != '\'') {
		return i
	}
	j := strings.IndexByte(s[i+1:], s[i])
	if j < 0 {
		return -1
	}
	return i + 1 + j + 1
}

func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// markdownText removes from s the Markdown that does not show: a
// backslash before ASCII punctuation, emphasis, strikethrough and
// code-span delimiters, link brackets, inline link destinations and
// reference labels.
func markdownText(s string) string {
	if !strings.ContainsAny(s, "\\*~`[]") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			i++
			b = append(b, s[i])
		case c == ']':
			i += linkTargetLen(s[i+1:])
		case c == '*' || c == '~' || c == '`' || c == '[':
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// linkTargetLen returns the length of what follows a link's text at the
// start of s and does not show: an inline destination "(...)", parentheses
// nested, or a reference label "[...]"; 0 when there is none.
func linkTargetLen(s string) int {
	if strings.HasPrefix(s, "[") {
		return closeLen(s, "]")
	}
	if !strings.HasPrefix(s, "(") {
		return 0
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return 0
}

func isASCIIPunct(c byte) bool {
	return strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) >= 0
}
