package ciout

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fullsend-ai/agent-sandbox/cienv"
)

// The log formats the escapers defend.
//
// GitHub Actions (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands):
// a line is a workflow command when, after leading white space, it starts
// with `::`; the runner also still parses the legacy `##[command]` form
// anywhere in a line (actions/runner, src/Runner.Common/ActionCommand.cs,
// TryParseV2 and TryParse), and it splits lines at LF, CR and CRLF
// (StreamReader.ReadLine). Command data is encoded `%` as `%25`, CR as
// `%0D`, LF as `%0A` ("Escaping" in the page above, and actions/toolkit
// core/src/command.ts).
//
// GitLab CI (https://docs.gitlab.com/ci/jobs/job_logs/#custom-collapsible-sections):
// `section_start:TIME:NAME[OPTIONS]\r\e[0K` and `section_end:TIME:NAME\r\e[0K`
// open and close sections wherever they appear in a line, and the log
// renders ANSI escape sequences: CR and ESC are what an attacker needs.

// Escape renders s, text fullsend does not control (a path or name from a
// checkout or a sandbox, an error message quoting openshell), inert in one
// line of the log of the CI kind: EscapeGitHub on GitHub Actions,
// EscapeText on GitLab CI and in a terminal.
func Escape(kind cienv.Kind, s string) string {
	if kind == cienv.GitHubActions {
		return EscapeGitHub(s)
	}
	return EscapeText(s)
}

// Lines is Escape applied to each line of s: the line breaks (LF) of s stay
// line breaks, everything else in a line, a CR included, is escaped. It is
// for text of several lines a command prints, such as a list of
// diagnostics or a diff.
func Lines(kind cienv.Kind, s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(kind, l)
	}
	return strings.Join(lines, "\n")
}

// EscapeData is the data encoding of a GitHub workflow command
// (actions/toolkit core/src/command.ts escapeData): `%` as `%25`, CR as
// `%0D`, LF as `%0A`, which GitHub decodes back exactly
// (ActionCommand.UnescapeData). It is for the data of a command fullsend
// issues itself whose value GitHub must see as it is (the secret of
// `::add-mask::`, the message of a `policy lint -o github` annotation); a
// value merely shown in the log takes EscapeGitHub.
func EscapeData(s string) string {
	return dataEscaper.Replace(s)
}

// EscapeProperty is the encoding of a workflow command property value
// (actions/toolkit core/src/command.ts escapeProperty): EscapeData, and
// `:` as `%3A`, `,` as `%2C`, which would otherwise end the value.
func EscapeProperty(s string) string {
	return propertyEscaper.Replace(s)
}

var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// EscapeGitHub renders an untrusted string inert in one line of a GitHub
// Actions log: `%`, CR and LF take the workflow-command data encoding
// (`%25`, `%0D`, `%0A`), every other control or format character and every
// byte that is not UTF-8 is percent-encoded the same way (`%1B` for ESC),
// and what could still read as a command is defused (DefuseGitHub). A
// percent-decoder gives s back exactly; GitHub's own data decoding gives s
// back whenever s needed only the three data escapes.
func EscapeGitHub(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '%':
			b.WriteString("%25")
		case r == utf8.RuneError && n == 1, Hidden(r):
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return DefuseGitHub(b.String())
}

// Hidden reports whether r is a character a log must not carry raw: a
// control character other than tab, a format character (bidirectional
// overrides, zero-width characters) or a Unicode line or paragraph
// separator.
func Hidden(r rune) bool {
	return r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029')
}

// DefuseGitHub makes sure no line of s (lines end at CR or LF, as GitHub
// reads them) can be read as a workflow command: the first visible
// character of a line, when it is `:`, becomes `%3A`, and a `[` after `##`
// becomes `%5B`. Characters that a culture-sensitive comparison may ignore
// (white space, controls, format characters, marks) do not count as
// visible, so they cannot smuggle a command past the check. It changes
// nothing else and is idempotent.
func DefuseGitHub(s string) string {
	if !strings.ContainsAny(s, ":[") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 3)
	lineStart, hashes := true, 0
	for _, r := range s {
		switch {
		case r == '\r' || r == '\n':
			lineStart, hashes = true, 0
			b.WriteRune(r)
			continue
		case Ignorable(r):
			b.WriteRune(r)
			continue
		case r == ':' && lineStart:
			b.WriteString("%3A")
		case r == '[' && hashes >= 2:
			b.WriteString("%5B")
		default:
			b.WriteRune(r)
		}
		lineStart = false
		if r == '#' {
			hashes++
		} else {
			hashes = 0
		}
	}
	return b.String()
}

// Ignorable reports whether r may be skipped when GitHub's runner trims a
// line or compares it with the culture-sensitive String.StartsWith and
// IndexOf of .NET.
func Ignorable(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) ||
		unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// EscapeText renders an untrusted string inert in one line of a GitLab CI
// log or a terminal: backslash as `\\`, every control character but tab
// (CR, LF, ESC...), format character and line separator as a Go escape
// (`\r`, `\n`, `\x1b`, `\u202e`), bytes that are not UTF-8 as `\xNN`. With
// no CR and no ESC left, no section marker and no ANSI sequence can be
// formed; strconv.Unquote gives s back.
func EscapeText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Hidden(r):
			writeRuneEscape(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func writeRuneEscape(b *strings.Builder, r rune) {
	switch {
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r < utf8.RuneSelf:
		fmt.Fprintf(b, `\x%02x`, r)
	case r <= 0xffff:
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		fmt.Fprintf(b, `\U%08x`, r)
	}
}

// DefuseGitLab keeps a line of the agent's output from forging GitLab
// sections or moving the cursor: colours (SGR, `ESC [ ... m`) stay, every
// other escape sequence, a CR that does not end the line, and every other
// control character but tab are shown as Go escapes. Format characters
// stay: the agent's text is shown as written (emoji sequences use them).
func DefuseGitLab(line string) string {
	if !strings.ContainsFunc(line, control) {
		return line
	}
	var b strings.Builder
	b.Grow(len(line) + 8)
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRuneInString(line[i:])
		switch {
		case r == '\x1b':
			if m := sgrLen(line[i:]); m > 0 {
				b.WriteString(line[i : i+m])
				i += m
				continue
			}
			writeRuneEscape(&b, r)
		case r == '\r' && i+n == len(line):
			b.WriteByte('\r') // CRLF line end
		case control(r):
			writeRuneEscape(&b, r)
		default:
			b.WriteString(line[i : i+n])
		}
		i += n
	}
	return b.String()
}

// control reports whether r is a control character other than tab.
func control(r rune) bool { return r != '\t' && unicode.IsControl(r) }

// sgrLen returns the length of the SGR sequence (`ESC [ digits/; m`) s
// starts with, or 0.
func sgrLen(s string) int {
	if len(s) < 3 || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c >= '0' && c <= '9' || c == ';':
		default:
			return 0
		}
	}
	return 0
}
