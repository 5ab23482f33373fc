package denial

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// maxLine bounds one log line; a longer line is counted unparsed and
// skipped, never buffered whole.
const maxLine = 1 << 20

// LineResult says what a line was.
type LineResult int

// What ParseLine found on a line.
const (
	// LineEvent is an OCSF network or HTTP event.
	LineEvent LineResult = iota
	// LineOther is a well-formed line that is not such an event: a non-OCSF
	// tracing line, another OCSF class, a blank line.
	LineOther
	// LineUnparsed is a line in none of the three formats, or one of them
	// cut or garbled.
	LineUnparsed
)

// InputStats counts what one input held.
type InputStats struct {
	Path     string `json:"path"`
	Format   Format `json:"format"`
	Events   int    `json:"events"`
	Denials  int    `json:"denials"`
	Unparsed int    `json:"unparsed"`
	// Audits counts audit "would deny" events (JSONL only).
	Audits int `json:"audits,omitempty"`
}

// ReadLog reads one log file of any of the three formats (detected per
// line) and returns its network and HTTP events. name labels the events
// (File) and the errors. A line longer than 1 MiB is counted unparsed.
func ReadLog(name string, r io.Reader) ([]Event, InputStats, error) {
	var c eventChunks
	st, err := Scan(name, r, c.add)
	if err != nil {
		return nil, st, err
	}
	return c.all(), st, nil
}

// eventChunks gathers events in fixed-size chunks, then copies them once
// into a slice of their number: an Event is some 350 bytes, and a slice
// grown by append copies a 100,000-event log several times over.
type eventChunks struct {
	chunks [][]Event
	n      int
}

// chunkEvents is the size of a chunk.
const chunkEvents = 1024

// add appends ev.
func (c *eventChunks) add(ev Event) {
	if k := len(c.chunks); k == 0 || len(c.chunks[k-1]) == chunkEvents {
		c.chunks = append(c.chunks, make([]Event, 0, chunkEvents))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, ev)
	c.n++
}

// all returns the events in order, nil when there are none.
func (c *eventChunks) all() []Event {
	if c.n == 0 {
		return nil
	}
	out := make([]Event, 0, c.n)
	for _, ch := range c.chunks {
		out = append(out, ch...)
	}
	return out
}

// Scan reads a log as ReadLog does and calls fn with each network and HTTP
// event in input order, holding none of them: a caller that only counts
// (the runner, in the image) reads a 32 MiB log in constant memory.
//
// Scan also marks the events an injected binary path could have written
// (inject.go): an event is handed over once no later line can change that,
// at most 64 KiB of log after it. Assess turns the marks into Trust.
func Scan(name string, r io.Reader, fn func(Event)) (InputStats, error) {
	sc := scanner{st: InputStats{Path: name}, formats: map[Format]int{}, inj: injection{emit: fn}}
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		b, err := readLine(br)
		if len(b) > 0 || err == nil {
			sc.take(b)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			sc.inj.flush()
			return sc.st, fmt.Errorf("%s: line %d: %w", name, sc.line+1, err)
		}
	}
	sc.inj.flush()
	sc.st.Format = dominantFormat(sc.formats)
	return sc.st, nil
}

// scanner is Scan's state: the lines and bytes read, the counts, the
// events' formats, whether a line that is not JSON was read, and the
// injection window the events pass through.
type scanner struct {
	line    int
	pos     int64
	st      InputStats
	formats map[Format]int
	text    bool
	inj     injection
}

// take reads the next line, b (nil for an over-long one): it counts the
// line and passes its event, if any, on.
func (sc *scanner) take(b []byte) {
	sc.line++
	start := sc.pos
	sc.pos += int64(len(b)) + 1
	var ev Event
	res := LineUnparsed
	if b == nil {
		sc.pos += maxLine
	} else {
		ev, res = ParseLine(b)
	}
	switch res {
	case LineEvent:
		ev.File, ev.Line = sc.st.Path, sc.line
		ev.inText = ev.Format == FormatJSONL && sc.text
		if ev.Structured() {
			ev.line = ""
		}
		sc.formats[ev.Format]++
		sc.st.count(ev)
	case LineUnparsed:
		sc.st.Unparsed++
	}
	sc.text = sc.text || !jsonShaped(b)
	sc.inj.see(b, sc.line, start, sc.pos, ev, res)
}

// jsonShaped reports whether a line may be one of the OCSF JSONL record:
// blank, or an object. An over-long line (nil) is not.
func jsonShaped(b []byte) bool {
	t := bytes.TrimSpace(b)
	return b != nil && (len(t) == 0 || t[0] == '{')
}

// count counts one event: as an event, a denial, an audit.
func (st *InputStats) count(ev Event) {
	st.Events++
	if ev.Action == "Denied" {
		st.Denials++
	}
	if IsAudit(ev) {
		st.Audits++
	}
}

// dominantFormat is the format of the most events (the first of
// shorthand, CLI, JSONL on a tie); "" when there were none.
func dominantFormat(counts map[Format]int) Format {
	var format Format
	best := 0
	for _, f := range []Format{FormatShorthand, FormatCLI, FormatJSONL} {
		if counts[f] > best {
			format, best = f, counts[f]
		}
	}
	return format
}

// readLine returns the next line without its line break; nil (with a nil
// error) for a line over maxLine, whose rest is discarded.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > maxLine {
			return nil, discardLine(br, err)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			buf = append(buf, frag...)
			continue
		}
		if buf != nil {
			buf = append(buf, frag...)
		} else {
			buf = frag
		}
		line := trimLineBreak(buf)
		if err != nil && len(line) == 0 {
			return nil, err
		}
		return line, err
	}
}

// discardLine skips the rest of an over-long line, whose last read
// returned err; it returns the error that ended the skip, nil at the end
// of the line or of the input.
func discardLine(br *bufio.Reader, err error) error {
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = br.ReadSlice('\n')
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// trimLineBreak drops a trailing "\n" or "\r\n" (a lone "\r" stays).
func trimLineBreak(b []byte) []byte {
	if line, ok := bytes.CutSuffix(b, []byte("\n")); ok {
		return bytes.TrimSuffix(line, []byte("\r"))
	}
	return b
}

// ParseLine reads one line of any of the three formats. It never panics and
// never reads past the line; the Event's strings are copies.
func ParseLine(b []byte) (Event, LineResult) {
	s := string(b)
	ev, res := parseLine(s)
	if res == LineEvent {
		ev.line = cutRaw(s)
	}
	return ev, res
}

// parseLine is ParseLine on the line's string.
func parseLine(s string) (Event, LineResult) {
	switch {
	case strings.TrimSpace(s) == "":
		return Event{}, LineOther
	case s[0] == '{':
		return ParseJSONLine(s)
	case s[0] == '[':
		return ParseCLILine(s)
	case len(s) >= 24 && s[0] >= '0' && s[0] <= '9':
		return ParseShorthandLine(s)
	}
	return Event{}, LineUnparsed
}

// ParseShorthandLine reads a line of the sandbox's log file:
// "2026-04-01T04:04:32.190Z OCSF <shorthand>", or a non-OCSF tracing line
// "<ts> <LEVEL> <target>: <msg>" (LineOther). Layout:
// crates/openshell-ocsf/src/tracing_layers/shorthand_layer.rs:56-75@v0.0.111.
func ParseShorthandLine(s string) (Event, LineResult) {
	if len(s) < 25 || s[23] != 'Z' || s[24] != ' ' {
		return Event{}, LineUnparsed
	}
	t, err := time.Parse("2006-01-02T15:04:05.000Z", s[:24])
	if err != nil {
		return Event{}, LineUnparsed
	}
	rest := s[25:]
	body, ok := strings.CutPrefix(rest, "OCSF ")
	if !ok {
		return Event{}, tracingLine(rest)
	}
	ev, res := parseShorthand(body)
	ev.Format, ev.TimeMS = FormatShorthand, t.UnixMilli()
	return ev, res
}

// tracingLine is what a non-OCSF line of the log file, after its
// timestamp, is: LineOther for "<LEVEL> <target>: <msg>", a tracing line,
// else LineUnparsed.
func tracingLine(rest string) LineResult {
	if lvl, _, ok := strings.Cut(rest, " "); ok && tracingLevels[lvl] {
		return LineOther
	}
	return LineUnparsed
}

// tracingLevels are the level words of a tracing line.
var tracingLevels = map[string]bool{"TRACE": true, "DEBUG": true, "INFO": true, "WARN": true, "ERROR": true}

// cliSources are the sources of an `openshell logs` line.
var cliSources = map[string]bool{"sandbox": true, "gateway": true}

// ParseCLILine reads a line of `openshell logs` output:
// "[1775014132.190] [sandbox] [OCSF ] [ocsf] <shorthand>"
// (crates/openshell-cli/src/run.rs:6779-6809@v0.0.111). Non-OCSF lines
// ("[INFO ] [target] msg") are LineOther.
func ParseCLILine(s string) (Event, LineResult) {
	f, body, ok := cutCLIFields(s)
	ms, okTime := parseCLITime(f[0])
	if !ok || !okTime || !cliSources[strings.TrimRight(f[1], " ")] {
		return Event{}, LineUnparsed
	}
	if level := strings.TrimRight(f[2], " "); level != "OCSF" || f[3] != "ocsf" {
		if tracingLevels[level] {
			return Event{}, LineOther
		}
		return Event{}, LineUnparsed
	}
	ev, res := parseShorthand(body)
	ev.Format, ev.TimeMS = FormatCLI, ms
	return ev, res
}

// cutCLIFields cuts the four "[field] "s (time, source, level, target)
// off the front of a CLI log line and returns them and the rest.
func cutCLIFields(s string) (f [4]string, rest string, ok bool) {
	rest = s
	for i := range f {
		if f[i], rest, ok = cutCLIField(rest); !ok {
			return f, "", false
		}
	}
	return f, rest, true
}

// cutCLIField cuts one "[field] " off the front of a CLI log line and
// returns the field and the rest.
func cutCLIField(s string) (field, rest string, ok bool) {
	if !strings.HasPrefix(s, "[") {
		return "", "", false
	}
	end := strings.Index(s, "] ")
	if end < 0 {
		return "", "", false
	}
	return s[1:end], s[end+2:], true
}

// parseCLITime reads the CLI's "<seconds>.<millis>" timestamp (exactly
// three digits of milliseconds) into Unix milliseconds.
func parseCLITime(ts string) (int64, bool) {
	secs, ms, ok := strings.Cut(ts, ".")
	sec, err1 := strconv.ParseInt(secs, 10, 64)
	msec, err2 := strconv.Atoi(ms)
	if !ok || err1 != nil || err2 != nil || len(ms) != 3 || sec < 0 || sec > 1<<40 {
		return 0, false
	}
	return sec*1000 + int64(msec), true
}
