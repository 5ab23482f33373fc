package evidence

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"github.com/fullsend-ai/agent-sandbox/denial"
)

// Run evidence: OpenShell's own record of what the sandbox allowed and
// denied, kept on every run (success or failure) before the sandbox is
// deleted, so that `fullsend policy suggest` can turn denials into
// frontmatter and a reviewer can see them.
//
// Where the record is, in NVIDIA/OpenShell at v0.0.83 and v0.0.111:
//   - The supervisor writes the complete shorthand log to
//     /var/log/openshell.YYYY-MM-DD.log (daily, 3 files kept) and, while the
//     `ocsf_json_enabled` setting is true, OCSF JSONL to
//     /var/log/openshell-ocsf.YYYY-MM-DD.log
//     (crates/openshell-sandbox/src/main.rs:466-479,520-535@v0.0.83,
//     :549-562,596-617@v0.0.111; the key at
//     crates/openshell-core/src/settings.rs:121-125 at both tags).
//   - `openshell sandbox download` cannot read them: at both tags the CLI
//     refuses a source path outside the sandbox workspace (/sandbox),
//     lexically and after realpath (crates/openshell-cli/src/ssh.rs
//     :865-912@v0.0.83, :876-938@v0.0.111). So the runner reads them the
//     way download itself works, tar over the sandbox's ssh as the sandbox
//     user (ssh.rs:1274-1280,1380@v0.0.111), through `sandbox exec`, and
//     parses the tar stream itself: nothing of the sandbox's choosing ever
//     names, links or sizes a file on the runner.
//   - Else `openshell logs NAME --source sandbox|gateway -n 2000`
//     (main.rs:467-494@v0.0.83, :510-537@v0.0.111): the gateway's tail,
//     best effort (the push channel drops lines under load,
//     crates/openshell-supervisor-process/src/log_push.rs:19-20,87-88
//     @v0.0.111) and at most 2000 lines per sandbox
//     (crates/openshell-server/src/tracing_bus.rs:106-107@v0.0.111).
//   - The JSONL setting is set gateway-wide, before any sandbox exists,
//     when the runner started the gateway itself (it is then the run's
//     own): a new sandbox applies it from its first settings poll
//     (apply_ocsf_json_setting, crates/openshell-sandbox/src/lib.rs
//     :2398-2416@v0.0.83, :3579-3611@v0.0.111), so no event misses the
//     JSONL and no poll has to be waited for.

// Evidence sources, as result.json and the run log name them.
const (
	SourceSandboxFiles  = "sandbox-log-files"
	SourceOpenShellLogs = "openshell-logs"
	SourceNone          = "none"
)

// Limits on what comes out of a sandbox: its logs are attacker-influenced
// (the agent chooses what it is denied), so each file, the whole set and
// the number of files are bounded.
const (
	// FileMax bounds one log file (and one `openshell logs` capture).
	FileMax  = 32 << 20
	totalMax = 64 << 20
	maxFiles = 8 // 3 shorthand + 3 JSONL files are kept (max_log_files 3), plus the day that rolled
)

// LogTarScript lists the supervisor's log files and streams them as one tar
// archive to stdout (`sh -c` in the sandbox). The glob is matched by the
// sandbox's shell; ReadLogs checks every name it gets back.
const LogTarScript = "cd /var/log/ && exec tar -cf - -- openshell*.log"

// logFileName is what the rolling appenders name their files
// (filename_prefix "openshell" / "openshell-ocsf", suffix "log", daily).
var logFileName = regexp.MustCompile(`^openshell(-ocsf)?\.[0-9]{4}-[0-9]{2}-[0-9]{2}\.log$`)

// Record describes the logs a run kept (result.json's "evidence").
type Record struct {
	// Dir holds the files (EVIDENCE_DIR/<sandbox>).
	Dir string `json:"dir"`
	// Source is SourceSandboxFiles, SourceOpenShellLogs or SourceNone.
	Source string `json:"source"`
	// OCSFJSON reports that the runner turned on ocsf_json_enabled.
	OCSFJSON bool   `json:"ocsf_json"`
	Files    []File `json:"files,omitempty"`
	// Notes say what was missing, cut or refused.
	Notes []string `json:"notes,omitempty"`
	// Suggest is the command that turns the denials into frontmatter.
	Suggest string `json:"suggest,omitempty"`
	// UntrustedDenials counts the denial lines that the sandboxed agent
	// could have written into the log itself (denial.TrustSuspect): with
	// the OCSF JSONL record, the shorthand lines it does not hold, which
	// result.json's "denials" (the record's) leave out; with shorthand
	// alone, those of "denials" beside an injected fragment or naming a
	// binary path that is not plain. policy suggest never grants from
	// them; docs/threat-model.md says why.
	UntrustedDenials int `json:"untrusted_denials"`
}

// File is one written log file.
type File struct {
	Name   string `json:"name"`
	Format string `json:"format"` // shorthand, ocsf-jsonl, cli
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
	// Truncated: the sandbox's file was longer than the limit; the first
	// FileMax bytes, up to the last whole line, were kept.
	Truncated bool `json:"truncated,omitempty"`
}

// HasShorthand reports whether logs hold the sandbox's complete shorthand
// record (a log file, not a tail).
func HasShorthand(logs []Log) bool {
	for _, f := range logs {
		if f.Format == "shorthand" {
			return true
		}
	}
	return false
}

// fallbackLogName names the `openshell logs --source S` captures; the
// diagnostic bundle's gateway.log is the gateway process's own output.
func fallbackLogName(source string) string {
	return map[string]string{"sandbox": "sandbox.log", "gateway": "gateway-events.log"}[source]
}

// Log is one log as read, before redaction.
type Log struct {
	// Name is the file name it is kept under; Format is shorthand,
	// ocsf-jsonl or cli.
	Name, Format string
	Data         []byte
	// Truncated: cut at FileMax, at the last whole line.
	Truncated bool
}

// CLILog is the capture of `openshell logs NAME --source source` (sandbox
// or gateway), kept as sandbox.log or gateway-events.log.
func CLILog(source string, data []byte, truncated bool) Log {
	return Log{Name: fallbackLogName(source), Format: "cli", Data: data, Truncated: truncated}
}

// ReadLogs reads the tar stream LogTarScript writes, within the evidence
// limits (readLogTar).
func ReadLogs(r io.Reader) ([]Log, []string, error) {
	return readLogTar(r, FileMax, totalMax, maxFiles)
}

// readLogTar reads a tar stream of the supervisor's log files. It is the
// only reader of bytes that name files: an entry is kept only when it is a
// regular file (no symlinks, no hard links, no directories, no devices)
// whose name is exactly a rolling log name; each is cut at fileMax (at the
// last whole line), the set at totalMax, the count at maxFiles. Entries
// are kept in memory and written by the caller under names it builds.
func readLogTar(r io.Reader, fileMax, totalMax, maxFiles int) ([]Log, []string, error) {
	tr := tar.NewReader(r)
	t := &logTar{fileMax: fileMax, totalMax: totalMax, maxFiles: maxFiles, seen: map[string]bool{}}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if len(t.files) > 0 {
				t.notes = append(t.notes, "log archive ended early: "+err.Error())
				break
			}
			return nil, t.notes, fmt.Errorf("reading the log archive: %w", err)
		}
		if why := t.skip(h); why != "" {
			t.notes = append(t.notes, fmt.Sprintf("skipped %q: %s", h.Name, why))
			continue
		}
		if err := t.read(h.Name, tr); err != nil {
			return t.files, t.notes, err
		}
	}
	sort.Slice(t.files, func(i, j int) bool { return t.files[i].Name < t.files[j].Name })
	return t.files, t.notes, nil
}

// logTar is one readLogTar: its limits, what it kept and noted.
type logTar struct {
	fileMax, totalMax, maxFiles int
	files                       []Log
	notes                       []string
	total                       int
	seen                        map[string]bool
}

// skip says why an entry is not kept, "" when it is.
func (t *logTar) skip(h *tar.Header) string {
	switch {
	case h.Typeflag != tar.TypeReg:
		return fmt.Sprintf("not a regular file (type %q)", h.Typeflag)
	case !logFileName.MatchString(h.Name):
		return "not a log file name"
	case t.seen[h.Name]:
		return "listed twice"
	case len(t.files) >= t.maxFiles:
		return fmt.Sprintf("more than %d log files", t.maxFiles)
	case t.total >= t.totalMax:
		return fmt.Sprintf("the evidence limit of %d bytes is reached", t.totalMax)
	}
	return ""
}

// read keeps the log file name from r, cut at the last whole line within
// the limits.
func (t *logTar) read(name string, r io.Reader) error {
	t.seen[name] = true
	limit := min(t.fileMax, t.totalMax-t.total)
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return fmt.Errorf("reading %q from the log archive: %w", name, err)
	}
	truncated := len(data) > limit
	if truncated {
		data = cutAtLine(data[:limit])
	}
	t.total += len(data)
	t.files = append(t.files, Log{Name: name, Format: logFormat(name), Data: data, Truncated: truncated})
	return nil
}

// cutAtLine drops what follows the last newline of data, if it has one.
func cutAtLine(data []byte) []byte {
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		return data[:i+1]
	}
	return data
}

// logFormat is the format of a rolling log file, by its name.
func logFormat(name string) string {
	if strings.HasPrefix(name, "openshell-ocsf.") {
		return "ocsf-jsonl"
	}
	return "shorthand"
}

// Keep writes logs into r.Dir, each redacted (redactLog: the run's
// secrets masked through mask, query strings cut), records each in
// r.Files, masks r.Notes, and returns the denials the logs count, from one
// source, never two: the OCSF JSONL record when the logs hold one (its
// denials and audit verdicts: the agent cannot write a line of it, and an
// injected binary path cannot split one of its events), else the
// shorthand record (complete), else the gateway's sandbox tail.
// r.UntrustedDenials counts the denial lines the agent could have written
// (denial.AssessRecord): with the record, the text lines it lacks, which
// the counts leave out; without it, the counted lines it doubts. A file
// that cannot be written is a note; a cut one is logged through logf.
func (r *Record) Keep(logs []Log, mask func(string) string, logf func(format string, args ...any)) map[denial.Kind]int {
	var c denialCount
	for _, f := range logs {
		data := redactLog(mask, f.Data, f.Format == "ocsf-jsonl")
		if err := writeEvidenceFile(r.Dir, f.Name, data); err != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("%s not written: %v", f.Name, err))
			continue
		}
		sum := sha256.Sum256(data)
		r.Files = append(r.Files, File{Name: f.Name, Format: f.Format, Bytes: len(data), SHA256: hex.EncodeToString(sum[:]), Truncated: f.Truncated})
		if f.Truncated {
			logf("warning: evidence %s cut at %d bytes", f.Name, FileMax)
		}
		c.read(f, data)
	}
	for i, n := range r.Notes {
		r.Notes[i] = mask(n)
	}
	denials, untrusted := c.count()
	r.UntrustedDenials = untrusted
	return denials
}

// denialCount gathers the denials and audit verdicts of a run's logs that
// may count: those of the shorthand record or the gateway's sandbox tail,
// and those of the OCSF JSONL files. It holds no allowed event, only
// whether the JSONL files held a structured event (the record).
type denialCount struct {
	events     []denial.Event
	kinds      []denial.Kind
	structured bool
}

// read adds the denials and audit verdicts of one kept log (its redacted
// data), when it is one that counts: a shorthand or JSONL file, or the
// gateway's sandbox tail.
func (c *denialCount) read(f Log, data []byte) {
	jsonl := f.Format == "ocsf-jsonl"
	if !jsonl && f.Format != "shorthand" && (f.Format != "cli" || f.Name != "sandbox.log") {
		return
	}
	_, _ = denial.Scan(f.Name, bytes.NewReader(data), func(ev denial.Event) {
		c.structured = c.structured || ev.Structured()
		k := denial.Classify(ev, jsonl)
		if k == denial.KindNone {
			return
		}
		c.events, c.kinds = append(c.events, ev), append(c.kinds, k)
	})
}

// count assesses the events together and counts, by kind, those of the
// counting source (counts), and the suspect denials.
func (c *denialCount) count() (map[denial.Kind]int, int) {
	denial.AssessRecord(c.events, c.structured)
	denials := map[denial.Kind]int{}
	untrusted := 0
	for i := range c.events {
		ev, k := &c.events[i], c.kinds[i]
		if c.counts(ev, k) {
			denials[k]++
		}
		if ev.Trust == denial.TrustSuspect && k.Denied() {
			untrusted++
		}
	}
	return denials, untrusted
}

// counts reports whether an event counts: with the JSONL record, its
// events (denials and audit verdicts); without it, the text's denials.
func (c *denialCount) counts(ev *denial.Event, k denial.Kind) bool {
	if c.structured {
		return ev.Structured()
	}
	return ev.Format != denial.FormatJSONL && k.Denied()
}

// writeEvidenceFile creates dir/name, which must not exist, without
// following a link, mode 0600.
func writeEvidenceFile(dir, name string, data []byte) error {
	if name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("invalid evidence file name %q", name)
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// redactLog masks the run's secrets and then redacts query strings, line
// by line. Masking comes first so a secret that holds a '?' is hidden
// whole. Query strings are redacted as OpenShell's policy.local does for
// the agent (redact_query_strings,
// crates/openshell-supervisor-network/src/policy_local.rs:406-430
// @v0.0.111: from '?' to the next whitespace or ']'). A JSONL line is
// treated per string value (redactJSONLine), so escapes cannot hide a
// secret and each line stays valid JSON.
func redactLog(mask func(string) string, data []byte, jsonl bool) []byte {
	var out bytes.Buffer
	out.Grow(len(data))
	for len(data) > 0 {
		line := data
		rest := []byte(nil)
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, rest = data[:i+1], data[i+1:]
		}
		if jsonl {
			out.WriteString(redactJSONLine(mask, string(line)))
		} else {
			out.WriteString(redactQueries(mask(string(line))))
		}
		data = rest
	}
	return out.Bytes()
}

// redactQueries is policy_local.rs redact_query_strings:410-430@v0.0.111.
func redactQueries(s string) string {
	if !strings.Contains(s, "?") {
		return s
	}
	var b strings.Builder
	inQuery := false
	for _, r := range s {
		switch {
		case inQuery && (isSpace(r) || r == ']'):
			inQuery = false
			b.WriteRune(r)
		case inQuery:
		case r == '?':
			b.WriteString("?[redacted]")
			inQuery = true
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isSpace is Rust's char::is_whitespace: the Unicode White_Space property
// (U+0009-000D, U+0020, U+0085, U+00A0, U+1680, U+2000-200A, U+2028,
// U+2029, U+202F, U+205F, U+3000).
func isSpace(r rune) bool { return unicode.Is(unicode.White_Space, r) }

// redactJSONLine masks and redacts every string of one JSON line in its
// decoded form, then encodes it again: key order and the rest of the line
// are kept. A line that is not JSON is treated as text.
func redactJSONLine(mask func(string) string, line string) string {
	body := strings.TrimRight(line, "\r\n")
	eol := line[len(body):]
	if !json.Valid([]byte(body)) {
		return redactQueries(mask(line))
	}
	var b strings.Builder
	for i := 0; i < len(body); {
		if body[i] != '"' {
			b.WriteByte(body[i])
			i++
			continue
		}
		j := i + 1
		for j < len(body) && body[j] != '"' {
			if body[j] == '\\' {
				j++
			}
			j++
		}
		var s string
		if err := json.Unmarshal([]byte(body[i:j+1]), &s); err != nil {
			return redactQueries(mask(line)) // not reached: the line is valid JSON
		}
		b.WriteString(jsonString(redactQueries(mask(s))))
		i = j + 1
	}
	return b.String() + eol
}

// jsonString encodes s as a JSON string without HTML escaping.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// DenialTotal counts denied requests (audit verdicts were forwarded).
func DenialTotal(d map[denial.Kind]int) int {
	n := 0
	for k, v := range d {
		if k.Denied() {
			n += v
		}
	}
	return n
}

// SuggestCommand is the command that turns the evidence into suggestions.
func SuggestCommand(agent, dir string) string {
	return "fullsend policy suggest " + shellQuote(agent) + " --logs " + shellQuote(dir)
}

// shellSafe matches a non-empty word a POSIX shell reads as it is.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=@+,-]+$`)

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// DenialSummary renders the denial counts, sorted by kind.
func DenialSummary(d map[denial.Kind]int) string {
	parts := make([]string, 0, len(d))
	for _, k := range slices.Sorted(maps.Keys(d)) {
		parts = append(parts, string(k)+" "+strconv.Itoa(d[k]))
	}
	return strings.Join(parts, ", ")
}
