package runner

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Everything the runner logs that it does not control (file names from the
// sandbox, openshell's stderr, error text, values from the CI environment)
// is untrusted: the agent may have chosen it to issue CI commands through
// the runner's own log. It goes through runLog, which escapes every
// argument with the escaping function of the CI (escapeGitHub or
// escapeText), and the agent's own output goes through the Reporter's
// Untrusted filters.
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

// escapeGitHub renders an untrusted string inert in one line of a GitHub
// Actions log: `%`, CR and LF take the workflow-command data encoding
// (`%25`, `%0D`, `%0A`), every other control or format character and every
// byte that is not UTF-8 is percent-encoded the same way (`%1B` for ESC),
// and what could still read as a command is defused (defuseGitHub). A
// percent-decoder gives s back exactly; GitHub's own data decoding gives s
// back whenever s needed only the three data escapes.
func escapeGitHub(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '%':
			b.WriteString("%25")
		case r == utf8.RuneError && n == 1, hidden(r):
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return defuseGitHub(b.String())
}

// hidden reports whether r is a character a log must not carry raw: a
// control character other than tab, a format character (bidirectional
// overrides, zero-width characters) or a Unicode line or paragraph
// separator.
func hidden(r rune) bool {
	return r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029')
}

// defuseGitHub makes sure no line of s (lines end at CR or LF, as GitHub
// reads them) can be read as a workflow command: the first visible
// character of a line, when it is `:`, becomes `%3A`, and a `[` after `##`
// becomes `%5B`. Characters that a culture-sensitive comparison may ignore
// (white space, controls, format characters, marks) do not count as
// visible, so they cannot smuggle a command past the check. It changes
// nothing else and is idempotent.
func defuseGitHub(s string) string {
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
		case ignorable(r):
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

// ignorable reports whether r may be skipped when GitHub's runner trims a
// line or compares it with the culture-sensitive String.StartsWith and
// IndexOf of .NET.
func ignorable(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) ||
		unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// escapeText renders an untrusted string inert in one line of a GitLab CI
// log or a terminal: backslash as `\\`, every control character but tab
// (CR, LF, ESC...), format character and line separator as a Go escape
// (`\r`, `\n`, `\x1b`, `\u202e`), bytes that are not UTF-8 as `\xNN`. With
// no CR and no ESC left, no section marker and no ANSI sequence can be
// formed; strconv.Unquote gives s back.
func escapeText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case hidden(r):
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

// EscapeLog renders s, text the runner does not control (an error message
// quoting openshell or the sandbox), inert in one line of the log of the CI
// kind: escapeGitHub on GitHub Actions, escapeText elsewhere.
func EscapeLog(kind CIKind, s string) string {
	if kind == CIGitHub {
		return escapeGitHub(s)
	}
	return escapeText(s)
}

// runLog writes the runner's own log lines. It is the only way the runner
// writes to its log besides the Reporter's commands: the format is the
// runner's text (a constant), and every argument, whatever its type, is
// formatted with its verb, masked and escaped for the CI before it joins
// the line, so no call site can log an untrusted value raw.
type runLog struct {
	w      *maskWriter
	mask   *masker
	escape func(string) string
	// line is applied to the composed line: on GitHub a command can span
	// two values ("%s%s" with ":" and ":x").
	line func(string) string
}

// newRunLog returns the log of one run on the CI kind, writing to w.
func newRunLog(kind CIKind, m *masker, w io.Writer) *runLog {
	l := &runLog{w: &maskWriter{m: m, w: w}, mask: m, escape: escapeText, line: func(s string) string { return s }}
	if kind == CIGitHub {
		l.escape, l.line = escapeGitHub, defuseGitHub
	}
	return l
}

// Printf writes one line. args is reused to hold the escaped values.
func (l *runLog) Printf(format string, args ...any) {
	for i, a := range args {
		args[i] = logValue{v: a, l: l}
	}
	_, _ = io.WriteString(l.w, l.line(fmt.Sprintf(format, args...))+"\n")
}

// Flush writes a pending partial line.
func (l *runLog) Flush() error { return l.w.Flush() }

// logValue is one untrusted argument of Printf.
type logValue struct {
	v any
	l *runLog
}

// Format formats the value as its verb asks, then masks and escapes it.
func (v logValue) Format(f fmt.State, verb rune) {
	_, _ = io.WriteString(f, v.l.escape(v.l.mask.String(fmt.Sprintf(fmt.FormatString(f, verb), v.v))))
}

// lineFilter passes a stream line by line through fn (given each line
// without its LF). A line longer than maxLine is cut, the cut ending in a
// LF, so that fn always sees where a line starts. Close writes the last
// partial line terminated by a LF, so that nothing the runner writes next
// can be glued to it. The filters of one command's stdout and stderr share
// mu: each line reaches the log in one piece, even when both streams end up
// in the same pipe (`-o json`, `2>&1`), where a long write could otherwise
// be split by the other stream's.
type lineFilter struct {
	w   io.Writer
	fn  func(string) string
	mu  *sync.Mutex
	buf []byte
}

// newLineFilters returns the filters of a command's stdout and stderr.
func newLineFilters(stdout, stderr io.Writer, fn func(string) string) (out, errOut *lineFilter) {
	mu := &sync.Mutex{}
	return &lineFilter{w: stdout, fn: fn, mu: mu}, &lineFilter{w: stderr, fn: fn, mu: mu}
}

func (f *lineFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf = append(f.buf, p...)
	for {
		i := bytes.IndexByte(f.buf, '\n')
		if i < 0 {
			break
		}
		if err := f.emit(f.buf[:i]); err != nil {
			return len(p), err
		}
		f.buf = f.buf[i+1:]
	}
	if len(f.buf) > maxLine {
		if err := f.emit(f.buf); err != nil {
			return len(p), err
		}
		f.buf = f.buf[:0]
	}
	return len(p), nil
}

func (f *lineFilter) emit(line []byte) error {
	_, err := io.WriteString(f.w, f.fn(string(line))+"\n")
	return err
}

// Close writes the pending partial line, if any.
func (f *lineFilter) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.buf) == 0 {
		return nil
	}
	err := f.emit(f.buf)
	f.buf = f.buf[:0]
	return err
}

// defuseGitLab keeps a line of the agent's output from forging GitLab
// sections or moving the cursor: colours (SGR, `ESC [ ... m`) stay, every
// other escape sequence, a CR that does not end the line, and every other
// control character but tab are shown as Go escapes. Format characters
// stay: the agent's text is shown as written (emoji sequences use them).
func defuseGitLab(line string) string {
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
