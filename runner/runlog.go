package runner

import (
	"fmt"
	"io"

	"github.com/fullsend-ai/agent-sandbox/ciout"
	"github.com/fullsend-ai/agent-sandbox/runner/redact"
)

// Everything the runner logs that it does not control (file names from the
// sandbox, openshell's stderr, error text, values from the CI environment)
// is untrusted: the agent may have chosen it to issue CI commands through
// the runner's own log. It goes through runLog, which masks every argument
// and escapes it with the escaper of the CI (ciout.EscapeGitHub or
// ciout.EscapeText), and the agent's own output goes through the
// Reporter's Untrusted filters.

// runLog writes the runner's own log lines. It is the only way the runner
// writes to its log besides the Reporter's commands: the format is the
// runner's text (a constant), and every argument, whatever its type, is
// formatted with its verb, masked and escaped for the CI before it joins
// the line, so no call site can log an untrusted value raw.
type runLog struct {
	w      *redact.Writer
	mask   *redact.Masker
	escape func(string) string
	// line is applied to the composed line: on GitHub a command can span
	// two values ("%s%s" with ":" and ":x").
	line func(string) string
}

// newRunLog returns the log of one run on the CI kind, writing to w.
func newRunLog(kind CIKind, m *redact.Masker, w io.Writer) *runLog {
	l := &runLog{w: redact.NewWriter(m, w), mask: m, escape: ciout.EscapeText, line: func(s string) string { return s }}
	if kind == CIGitHub {
		l.escape, l.line = ciout.EscapeGitHub, ciout.DefuseGitHub
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
