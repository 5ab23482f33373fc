package ciout

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fullsend-ai/agent-sandbox/cienv"
)

// Reporter renders a run for the CI system: collapsible log groups,
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
	// Untrusted wraps the writers that carry output the caller does not
	// control (an agent's stdout and stderr), so that nothing in it can
	// issue CI commands. The returned func ends the protection after the
	// last write; it writes a last partial line, ended by a newline.
	Untrusted(stdout, stderr io.Writer) (io.Writer, io.Writer, func())
}

// NewReporter returns the Reporter for a CI system, writing to w:
// GitHub workflow commands, GitLab collapsible sections, or plain text for
// a terminal and any other CI. summaryPath is the job summary file,
// cienv.Env.StepSummary (GitHub only; may be empty).
func NewReporter(kind cienv.Kind, w io.Writer, summaryPath string) Reporter {
	switch kind {
	case cienv.GitHubActions:
		return &githubReporter{w: w, summary: summaryPath}
	case cienv.GitLabCI:
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
	fmt.Fprintf(g.w, "::group::%s\n", EscapeGitHub(title))
	return func() { fmt.Fprintln(g.w, "::endgroup::") }
}

func (g *githubReporter) Annotate(level, title, msg string) {
	fmt.Fprintf(g.w, "::%s title=%s::%s\n", level, EscapeProperty(title), EscapeGitHub(msg))
}

// Mask sends each line of the secret with the plain data encoding: GitHub
// decodes it back to the exact value it must hide.
func (g *githubReporter) Mask(secret string) {
	for _, line := range strings.Split(secret, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			fmt.Fprintf(g.w, "::add-mask::%s\n", EscapeData(line))
		}
	}
}

func (g *githubReporter) Summary(md string) error {
	if g.summary == "" {
		return nil
	}
	if err := AppendSummary(g.summary, md); err != nil {
		return fmt.Errorf("writing job summary: %w", err)
	}
	return nil
}

// AppendSummary appends Markdown to a job summary file: GitHub's
// GITHUB_STEP_SUMMARY (cienv.Env.StepSummary), which GitHub renders on the
// run's page
// (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#adding-a-job-summary).
// The Markdown's values must be escaped (MarkdownText, MarkdownCode). A
// missing file is created, readable by its owner only.
func AppendSummary(path, markdown string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, markdown)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// AppendOutputs appends step outputs to GitHub's GITHUB_OUTPUT file
// (cienv.Env.OutputFile) as name=value lines
// (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#setting-an-output-parameter),
// in one write. A name holding '=' or a line break, or a value holding a
// line break, is refused before anything is written: it would set another
// output (fullsend never writes the multi-line delimiter form). A missing
// file is created, mode 0644.
func AppendOutputs(path string, outputs [][2]string) error {
	var b strings.Builder
	for _, kv := range outputs {
		if kv[0] == "" || strings.ContainsAny(kv[0], "=\r\n") || strings.ContainsAny(kv[1], "\r\n") {
			return fmt.Errorf("refusing step output %q: a name must be non-empty without '=' or a line break, a value without a line break", kv[0])
		}
		b.WriteString(kv[0] + "=" + kv[1] + "\n")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, b.String())
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
// as a command (DefuseGitHub), because the fence alone does not hold:
// actions/runner reads a step's stdout and stderr on two threads and, in
// each batch, handles the stderr lines first (ProcessInvoker.ProcessOutput),
// so the agent's last stdout lines can be read after a `::TOKEN::` written
// to stderr. The end func writes each stream's partial last line ended by a
// newline, so that `::TOKEN::` starts a line of its own.
func (g *githubReporter) Untrusted(stdout, stderr io.Writer) (io.Writer, io.Writer, func()) {
	return fenceUntrusted(stdout, stderr, 16, DefuseGitHub,
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

// gitlabReporter speaks GitLab CI collapsible sections.
type gitlabReporter struct {
	w io.Writer
	n atomic.Int64 // section counter; runs may share a reporter
}

var sectionUnsafe = regexp.MustCompile(`[^a-z0-9_.-]+`)

func (g *gitlabReporter) Group(title string) func() {
	name := fmt.Sprintf("fullsend_%d_%s", g.n.Add(1), strings.Trim(sectionUnsafe.ReplaceAllString(strings.ToLower(title), "_"), "_"))
	fmt.Fprintf(g.w, "\x1b[0Ksection_start:%d:%s[collapsed=true]\r\x1b[0K%s\n", time.Now().Unix(), name, EscapeText(title))
	return func() { fmt.Fprintf(g.w, "\x1b[0Ksection_end:%d:%s\r\x1b[0K\n", time.Now().Unix(), name) }
}

func (g *gitlabReporter) Annotate(level, title, msg string) {
	color := map[string]string{"error": "31", "warning": "33"}[level]
	if color == "" {
		color = "36"
	}
	fmt.Fprintf(g.w, "\x1b[1;%sm%s: %s\x1b[0m: %s\n", color, strings.ToUpper(level), EscapeText(title), escapeLines(msg))
}

func (g *gitlabReporter) Mask(string) {} // GitLab masks CI/CD variables itself; the runner masks its own output

func (g *gitlabReporter) Summary(string) error { return nil }

// Untrusted defuses the agent's output line by line: GitLab has no way to
// stop interpreting a log, so CR and escape sequences other than colours
// are shown escaped (DefuseGitLab), and no section marker can be formed.
//
// The output is fenced by two lines carrying a random token, so that a
// reader of the log can tell where the agent's text begins and ends: the
// agent cannot guess the token to forge the end line.
func (g *gitlabReporter) Untrusted(stdout, stderr io.Writer) (io.Writer, io.Writer, func()) {
	return fenceUntrusted(stdout, stderr, 8, DefuseGitLab,
		func(token string) { fmt.Fprintf(g.w, "----- agent output begins (untrusted; fence %s) -----\n", token) },
		func(token string) { fmt.Fprintf(g.w, "----- agent output ends (fence %s) -----\n", token) })
}

// plainReporter is for terminals and unknown CI systems. The agent's output
// reaches the terminal as it is.
type plainReporter struct{ w io.Writer }

func (p *plainReporter) Group(title string) func() {
	fmt.Fprintf(p.w, "==> %s\n", EscapeText(title))
	return func() {}
}

func (p *plainReporter) Annotate(level, title, msg string) {
	fmt.Fprintf(p.w, "%s: %s: %s\n", level, EscapeText(title), escapeLines(msg))
}

// escapeLines escapes each line of msg on its own (EscapeText) and indents
// the lines after the first, so that a multi-line error reads as lines, not
// as one line holding literal \n, and no line can carry a control sequence.
func escapeLines(msg string) string {
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	for i, l := range lines {
		lines[i] = EscapeText(l)
	}
	return strings.Join(lines, "\n  ")
}

func (p *plainReporter) Mask(string)          {}
func (p *plainReporter) Summary(string) error { return nil }
func (p *plainReporter) Untrusted(stdout, stderr io.Writer) (io.Writer, io.Writer, func()) {
	return stdout, stderr, func() {}
}

// maxLine bounds the partial line a lineFilter buffers; longer lines are
// cut.
const maxLine = 64 << 10

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
