package runner

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
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
	mu sync.RWMutex
	// secrets is never changed in place (Add makes a new slice), so a
	// snapshot stays valid without the lock. Longest first.
	secrets []string
}

// Add registers a secret. A value of several lines also registers each of
// its lines, as GitHub's ::add-mask:: does (githubReporter.Mask): a line of
// a key is a part of the key.
func (m *masker) Add(secret string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := slices.Clone(m.secrets)
	add := func(s string) {
		if len(s) >= minSecretLen && !slices.Contains(next, s) {
			next = append(next, s)
		}
	}
	add(secret)
	if strings.ContainsAny(secret, "\r\n") {
		for _, line := range strings.FieldsFunc(secret, func(r rune) bool { return r == '\n' || r == '\r' }) {
			add(strings.TrimSpace(line))
		}
	}
	// Longest first (then by value, so the order does not depend on the
	// order of the calls).
	slices.SortFunc(next, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	m.secrets = next
}

// snapshot returns the secrets, longest first; the slice is never modified.
func (m *masker) snapshot() []string {
	if m == nil {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.secrets
}

// String returns s with every byte of every occurrence of a secret hidden:
// each run of overlapping occurrences (of one secret or of several) becomes
// one ***, so no part of a secret that overlaps another is left readable.
func (m *masker) String(s string) string {
	return maskSpans(s, m.snapshot())
}

func (m *masker) Strings(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = m.String(s)
	}
	return out
}

// maskSpans replaces the union of the occurrences of secrets in s by ***,
// one per maximal run of overlapping occurrences. Occurrences that only
// touch stay two: masking two pieces that no occurrence spans gives the
// same text as masking them together, which maskWriter relies on.
func maskSpans(s string, secrets []string) string {
	type span struct{ a, b int }
	var spans []span
	for _, sec := range secrets {
		for i := 0; i <= len(s)-len(sec); {
			j := strings.Index(s[i:], sec)
			if j < 0 {
				break
			}
			spans = append(spans, span{i + j, i + j + len(sec)})
			i += j + 1 // overlapping occurrences too ("aaaa" in "aaaaa")
		}
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(x, y span) int { return x.a - y.a })
	var b strings.Builder
	b.Grow(len(s))
	last, cur := 0, spans[0]
	for _, sp := range spans[1:] {
		if sp.a < cur.b {
			cur.b = max(cur.b, sp.b)
			continue
		}
		b.WriteString(s[last:cur.a])
		b.WriteString("***")
		last, cur = cur.b, sp
	}
	b.WriteString(s[last:cur.a])
	b.WriteString("***")
	b.WriteString(s[cur.b:])
	return b.String()
}

// maskWriter masks secrets in a stream. Whatever the sequence of writes,
// a secret split across them is masked: a write passes on, masked, all it
// can, and holds back only the bytes that could still become part of a
// secret (at most the longest secret's length minus one, plus any
// occurrence they overlap). Close (or Flush) writes what is held back.
type maskWriter struct {
	m   *masker
	w   io.Writer
	mu  sync.Mutex
	buf []byte
	// swallow counts the next input bytes dropped after an overlong hold
	// was written as *** (see maxHold).
	swallow int
}

// maxLine bounds the partial line a lineFilter buffers; longer lines are
// cut.
const maxLine = 64 << 10

// maxHold bounds what a maskWriter holds back. Only a chain of overlapping
// occurrences of a secret that overlaps itself ("0000" in a run of zeros)
// holds back more than the longest secret; such a hold is written as ***,
// and the next len(longest secret)-1 input bytes, which may end the last
// occurrence, are dropped: memory stays bounded whatever the agent writes,
// and no part of a secret comes out.
const maxHold = 64 << 10

func (mw *maskWriter) Write(p []byte) (int, error) {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	n := len(p)
	if mw.swallow > 0 {
		k := min(mw.swallow, len(p))
		mw.swallow -= k
		p = p[k:]
	}
	mw.buf = append(mw.buf, p...)
	secrets := mw.m.snapshot()
	text := string(mw.buf)
	cut := safeCut(text, secrets)
	out := maskSpans(text[:cut], secrets)
	if len(text)-cut > maxHold {
		out, cut = out+"***", len(text)
		mw.swallow = len(secrets[0]) - 1
	}
	mw.buf = append(mw.buf[:0], text[cut:]...)
	if out == "" {
		return n, nil
	}
	_, err := io.WriteString(mw.w, out)
	return n, err
}

// safeCut returns how much of buf can be masked and passed on now: the
// bytes before the shortest suffix of buf that may still grow into a
// secret (a proper prefix of one), moved back before any occurrence of a
// secret that the cut would split. Masking buf[:cut] and, later, the rest
// then gives what masking the whole stream at once gives.
func safeCut(buf string, secrets []string) int {
	cut := len(buf)
	for _, s := range secrets {
		// The earliest j such that buf[j:] is a proper prefix of s.
		for j := max(0, len(buf)-len(s)+1); j < cut; j++ {
			k := strings.IndexByte(buf[j:cut], s[0])
			if k < 0 {
				break
			}
			j += k
			if strings.HasPrefix(s, buf[j:]) {
				cut = j
				break
			}
		}
	}
	for moved := true; moved; {
		moved = false
		for _, s := range secrets {
			// An occurrence that starts in [cut-len(s)+1, cut) ends past
			// cut: it lies entirely in this window.
			lo, hi := max(0, cut-len(s)+1), min(len(buf), cut+len(s)-1)
			if hi-lo < len(s) {
				continue
			}
			if i := strings.Index(buf[lo:hi], s); i >= 0 {
				cut, moved = lo+i, true
			}
		}
	}
	return cut
}

// Flush writes, masked, what the writer holds back. The stream may go on:
// a secret whose start was flushed is then no longer recognised, so flush
// only where the text is complete (the end of a log line or of a stream).
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

// Close flushes; the underlying writer stays open.
func (mw *maskWriter) Close() error { return mw.Flush() }
