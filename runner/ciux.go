package runner

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Reporter renders the run for the CI system: collapsible log groups,
// annotations, secret masking and a job summary. Titles and messages may
// hold untrusted text: a Reporter escapes them for its CI.
type Reporter interface {
	// Group starts a collapsible log section and returns the func ending it.
	Group(title string) (end func())
	// Annotate raises an error, warning or notice on the job.
	Annotate(level, title, msg string)
	// Mask asks the CI system to hide a secret value in its logs.
	Mask(secret string)
	// Summary appends Markdown to the job summary, where the CI has one.
	Summary(markdown string) error
	// Untrusted wraps the writers that carry output the runner does not
	// control (the agent's stdout and stderr), so that nothing in it can
	// issue CI commands. The returned func ends the protection after the
	// last write; it writes a last partial line, ended by a newline.
	Untrusted(stdout, stderr io.Writer) (io.Writer, io.Writer, func())
}

// NewReporter returns the Reporter for a CI system, writing to w.
// summaryPath is the job summary file, cienv.Env.StepSummary (GitHub only;
// may be empty).
func NewReporter(kind CIKind, w io.Writer, summaryPath string) Reporter {
	switch kind {
	case CIGitHub:
		return &githubReporter{w: w, summary: summaryPath}
	case CIGitLab:
		return &gitlabReporter{w: w}
	}
	return &plainReporter{w: w}
}

// githubReporter speaks GitHub Actions workflow commands.
type githubReporter struct {
	w       io.Writer
	summary string
}

func (g *githubReporter) Group(title string) func() {
	fmt.Fprintf(g.w, "::group::%s\n", escapeGitHub(title))
	return func() { fmt.Fprintln(g.w, "::endgroup::") }
}

func (g *githubReporter) Annotate(level, title, msg string) {
	fmt.Fprintf(g.w, "::%s title=%s::%s\n", level, escapeProperty(title), escapeGitHub(msg))
}

// Mask sends each line of the secret with the plain data encoding: GitHub
// decodes it back to the exact value it must hide.
func (g *githubReporter) Mask(secret string) {
	for _, line := range strings.Split(secret, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			fmt.Fprintf(g.w, "::add-mask::%s\n", escapeData(line))
		}
	}
}

func (g *githubReporter) Summary(md string) error {
	if g.summary == "" {
		return nil
	}
	f, err := os.OpenFile(g.summary, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("writing job summary: %w", err)
	}
	_, err = io.WriteString(f, md)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Untrusted fences the agent's output twice. It stops workflow commands
// with a token the agent cannot guess (random per call, made after the
// agent's files and environment were staged, never passed to the sandbox):
// `::stop-commands::TOKEN` ... `::TOKEN::`
// (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#stopping-and-starting-workflow-commands).
// And it defuses, line by line, whatever in either stream GitHub would read
// as a command (defuseGitHub), because the fence alone does not hold:
// actions/runner reads a step's stdout and stderr on two threads and, in
// each batch, handles the stderr lines first (ProcessInvoker.ProcessOutput),
// so the agent's last stdout lines can be read after a `::TOKEN::` written
// to stderr. The end func writes each stream's partial last line ended by a
// newline, so that `::TOKEN::` starts a line of its own.
func (g *githubReporter) Untrusted(stdout, stderr io.Writer) (io.Writer, io.Writer, func()) {
	return fenceUntrusted(stdout, stderr, 16, defuseGitHub,
		func(token string) { fmt.Fprintf(g.w, "::stop-commands::%s\n", token) },
		func(token string) { fmt.Fprintf(g.w, "::%s::\n", token) })
}

// fenceUntrusted opens a fence with a fresh random token of n bytes, filters
// both streams line by line through defuse until the returned func closes
// the fence, flushing each stream's partial last line first.
func fenceUntrusted(stdout, stderr io.Writer, n int, defuse func(string) string, begin, end func(token string)) (io.Writer, io.Writer, func()) {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	begin(token)
	out, errOut := newLineFilters(stdout, stderr, defuse)
	return out, errOut, func() {
		_ = out.Close()
		_ = errOut.Close()
		end(token)
	}
}

// escapeData and escapeProperty follow the workflow command escaping of
// actions/toolkit (core/src/command.ts): data and property values of the
// runner's own commands.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// gitlabReporter speaks GitLab CI collapsible sections.
type gitlabReporter struct {
	w io.Writer
	n atomic.Int64 // section counter; runs may share a reporter
}

var sectionUnsafe = regexp.MustCompile(`[^a-z0-9_.-]+`)

func (g *gitlabReporter) Group(title string) func() {
	name := fmt.Sprintf("fullsend_%d_%s", g.n.Add(1), strings.Trim(sectionUnsafe.ReplaceAllString(strings.ToLower(title), "_"), "_"))
	fmt.Fprintf(g.w, "\x1b[0Ksection_start:%d:%s[collapsed=true]\r\x1b[0K%s\n", time.Now().Unix(), name, escapeText(title))
	return func() { fmt.Fprintf(g.w, "\x1b[0Ksection_end:%d:%s\r\x1b[0K\n", time.Now().Unix(), name) }
}

func (g *gitlabReporter) Annotate(level, title, msg string) {
	color := map[string]string{"error": "31", "warning": "33"}[level]
	if color == "" {
		color = "36"
	}
	fmt.Fprintf(g.w, "\x1b[1;%sm%s: %s\x1b[0m: %s\n", color, strings.ToUpper(level), escapeText(title), escapeLines(msg))
}

func (g *gitlabReporter) Mask(string) {} // GitLab masks CI/CD variables itself; our own output goes through the masker

func (g *gitlabReporter) Summary(string) error { return nil }

// Untrusted defuses the agent's output line by line: GitLab has no way to
// stop interpreting a log, so CR and escape sequences other than colours
// are shown escaped (defuseGitLab), and no section marker can be formed.
//
// The output is fenced by two lines carrying a random token, so that a
// reader of the log can tell where the agent's text begins and ends: the
// agent cannot guess the token to forge the end line.
func (g *gitlabReporter) Untrusted(stdout, stderr io.Writer) (io.Writer, io.Writer, func()) {
	return fenceUntrusted(stdout, stderr, 8, defuseGitLab,
		func(token string) { fmt.Fprintf(g.w, "----- agent output begins (untrusted; fence %s) -----\n", token) },
		func(token string) { fmt.Fprintf(g.w, "----- agent output ends (fence %s) -----\n", token) })
}

// plainReporter is for terminals and unknown CI systems. The agent's output
// reaches the terminal as it is.
type plainReporter struct{ w io.Writer }

func (p *plainReporter) Group(title string) func() {
	fmt.Fprintf(p.w, "==> %s\n", escapeText(title))
	return func() {}
}

func (p *plainReporter) Annotate(level, title, msg string) {
	fmt.Fprintf(p.w, "%s: %s: %s\n", level, escapeText(title), escapeLines(msg))
}

// escapeLines escapes each line of msg on its own and indents the lines
// after the first, so that a multi-line error reads as lines, not as one
// line holding literal \n, and no line can carry a control sequence.
func escapeLines(msg string) string {
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	for i, l := range lines {
		lines[i] = escapeText(l)
	}
	return strings.Join(lines, "\n  ")
}

func (p *plainReporter) Mask(string)          {}
func (p *plainReporter) Summary(string) error { return nil }
func (p *plainReporter) Untrusted(stdout, stderr io.Writer) (io.Writer, io.Writer, func()) {
	return stdout, stderr, func() {}
}

// minSecretLen is the shortest value the masker hides; shorter values would
// garble ordinary output and are not credentials.
const minSecretLen = 4

// masker replaces known secret values in text with ***.
type masker struct {
	mu      sync.RWMutex
	secrets []string
}

func (m *masker) Add(secret string) {
	if len(secret) < minSecretLen {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.secrets = append(m.secrets, secret)
	// Longest first, so a secret containing another is masked whole.
	sort.Slice(m.secrets, func(i, j int) bool { return len(m.secrets[i]) > len(m.secrets[j]) })
}

func (m *masker) String(s string) string {
	if m == nil {
		return s
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, sec := range m.secrets {
		s = strings.ReplaceAll(s, sec, "***")
	}
	return s
}

func (m *masker) Strings(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = m.String(s)
	}
	return out
}

// maskWriter masks secrets in a stream, line by line, so that a secret is
// never split across two writes unmasked. Flush writes a final partial line.
type maskWriter struct {
	m   *masker
	w   io.Writer
	mu  sync.Mutex
	buf []byte
}

// maxLine bounds the buffered partial line; longer lines are masked and
// written in pieces.
const maxLine = 64 << 10

func (mw *maskWriter) Write(p []byte) (int, error) {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	mw.buf = append(mw.buf, p...)
	for {
		i := bytes.IndexByte(mw.buf, '\n')
		if i < 0 {
			break
		}
		if _, err := io.WriteString(mw.w, mw.m.String(string(mw.buf[:i+1]))); err != nil {
			return len(p), err
		}
		mw.buf = mw.buf[i+1:]
	}
	if len(mw.buf) > maxLine {
		if _, err := io.WriteString(mw.w, mw.m.String(string(mw.buf))); err != nil {
			return len(p), err
		}
		mw.buf = mw.buf[:0]
	}
	return len(p), nil
}

func (mw *maskWriter) Flush() error {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if len(mw.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(mw.w, mw.m.String(string(mw.buf)))
	mw.buf = mw.buf[:0]
	return err
}
