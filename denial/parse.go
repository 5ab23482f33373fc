package denial

import (
	"bufio"
	"encoding/json"
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
	var events []Event
	st, err := Scan(name, r, func(ev Event) { events = append(events, ev) })
	if err != nil {
		return nil, st, err
	}
	return events, st, nil
}

// Scan reads a log as ReadLog does and calls fn with each network and HTTP
// event in input order, holding none of them: a caller that only counts
// (the runner, in the image) reads a 32 MiB log in constant memory.
func Scan(name string, r io.Reader, fn func(Event)) (InputStats, error) {
	st := InputStats{Path: name}
	formats := map[Format]int{}
	br := bufio.NewReaderSize(r, 64*1024)
	line := 0
	for {
		b, err := readLine(br)
		if len(b) > 0 || err == nil {
			line++
			if b == nil { // over-long
				st.Unparsed++
			} else {
				ev, res := ParseLine(b)
				switch res {
				case LineEvent:
					ev.File, ev.Line = name, line
					formats[ev.Format]++
					st.count(ev)
					fn(ev)
				case LineUnparsed:
					st.Unparsed++
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, fmt.Errorf("%s: line %d: %w", name, line+1, err)
		}
	}
	st.Format = dominantFormat(formats)
	return st, nil
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
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, nil
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
		n := len(buf)
		if n > 0 && buf[n-1] == '\n' {
			n--
			if n > 0 && buf[n-1] == '\r' {
				n--
			}
		}
		if err != nil && n == 0 {
			return nil, err
		}
		return buf[:n], err
	}
}

// ParseLine reads one line of any of the three formats. It never panics and
// never reads past the line; the Event's strings are copies.
func ParseLine(b []byte) (Event, LineResult) {
	s := string(b)
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
		// "<LEVEL> <target>: <msg>", a tracing line.
		if lvl, _, ok := strings.Cut(rest, " "); ok && isLevel(lvl) {
			return Event{}, LineOther
		}
		return Event{}, LineUnparsed
	}
	ev, res := parseShorthand(body)
	ev.Format, ev.TimeMS = FormatShorthand, t.UnixMilli()
	return ev, res
}

func isLevel(s string) bool {
	switch s {
	case "TRACE", "DEBUG", "INFO", "WARN", "ERROR":
		return true
	}
	return false
}

// ParseCLILine reads a line of `openshell logs` output:
// "[1775014132.190] [sandbox] [OCSF ] [ocsf] <shorthand>"
// (crates/openshell-cli/src/run.rs:6779-6809@v0.0.111). Non-OCSF lines
// ("[INFO ] [target] msg") are LineOther.
func ParseCLILine(s string) (Event, LineResult) {
	ts, rest, ok := cutCLIField(s)
	if !ok {
		return Event{}, LineUnparsed
	}
	ms, ok := parseCLITime(ts)
	if !ok {
		return Event{}, LineUnparsed
	}
	source, rest, ok := cutCLIField(rest)
	if !ok {
		return Event{}, LineUnparsed
	}
	if src := strings.TrimRight(source, " "); src != "sandbox" && src != "gateway" {
		return Event{}, LineUnparsed
	}
	level, rest, ok := cutCLIField(rest)
	if !ok {
		return Event{}, LineUnparsed
	}
	target, body, ok := cutCLIField(rest)
	if !ok {
		return Event{}, LineUnparsed
	}
	if strings.TrimRight(level, " ") != "OCSF" || target != "ocsf" {
		if isLevel(strings.TrimRight(level, " ")) {
			return Event{}, LineOther
		}
		return Event{}, LineUnparsed
	}
	ev, res := parseShorthand(body)
	ev.Format, ev.TimeMS = FormatCLI, ms
	return ev, res
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

// parseShorthand reads OcsfEvent::format_shorthand's NET and HTTP lines
// (crates/openshell-ocsf/src/format/shorthand.rs:193-307@v0.0.111):
//
//	NET:<ACTIVITY> [SEV] <ACTION> <binary>(<pid>) -> <host>:<port>[/<proto>] [policy:P engine:E] [reason:R]
//	HTTP:<METHOD> [SEV] <ACTION> [<binary>(<pid>) -> ]<METHOD> <URL> [policy:P engine:E] [k:v ... reason:R]
//
// The reason is raw text (cut at 256 bytes, "]" not escaped): it runs to
// the line's last "]". Other OCSF classes are LineOther.
func parseShorthand(body string) (Event, LineResult) {
	class, res := shorthandClass(body)
	if res != LineEvent {
		return Event{}, res
	}
	ev := Event{Class: class}
	head, rest, ok := cutShorthandHead(body)
	if !ok {
		return Event{}, LineUnparsed
	}
	action, rest, _ := strings.Cut(rest, " ")
	if ev.Action = shorthandAction(action); ev.Action == "" {
		return ev, LineOther
	}
	// The detail ends at the first " [policy:" followed by "P engine:E]"
	// and either the end or " [": the reason and the unmapped fields come
	// after it. Binary paths may hold spaces, hosts and URLs may not.
	detail, policy, engine, ctx := cutPolicyBracket(rest)
	ev.Policy, ev.Engine = policy, engine
	if ev.Engine == "" {
		// No firewall rule (transparent TCP, shorthand.rs:227-257): the
		// reason follows the destination.
		if detail, ctx, ok = cutReasonBracket(detail); !ok && ev.Action == "Denied" {
			// Every denial carries a rule or a reason: this line was cut.
			return Event{}, LineUnparsed
		}
	}
	if !readContextReason(&ev, ctx) {
		return Event{}, LineUnparsed // cut mid-reason
	}
	if class == 4001 {
		return parseNetDetail(ev, detail)
	}
	ev.Method = strings.TrimPrefix(head, "HTTP:")
	return parseHTTPDetail(ev, detail)
}

// shorthandClass reads the OCSF class from the shorthand's "NET:" or
// "HTTP:" prefix (LineEvent); another upper-case class prefix is
// LineOther, anything else LineUnparsed.
func shorthandClass(body string) (int, LineResult) {
	switch {
	case strings.HasPrefix(body, "NET:"):
		return 4001, LineEvent
	case strings.HasPrefix(body, "HTTP:"):
		return 4002, LineEvent
	}
	if i := strings.IndexByte(body, ':'); i > 0 && isUpperWord(body[:i]) {
		return 0, LineOther
	}
	return 0, LineUnparsed
}

// cutShorthandHead cuts "<CLASS>:<ACTIVITY> [SEV] " off the shorthand and
// returns "<CLASS>:<ACTIVITY>" and the rest.
func cutShorthandHead(body string) (head, rest string, ok bool) {
	head, rest, ok = strings.Cut(body, " ")
	if !ok || !isUpperWord(strings.TrimPrefix(strings.TrimPrefix(head, "NET:"), "HTTP:")) {
		return "", "", false
	}
	sev, rest, ok := strings.Cut(rest, " ")
	if !ok || !strings.HasPrefix(sev, "[") || !strings.HasSuffix(sev, "]") {
		return "", "", false
	}
	return head, rest, true
}

// shorthandAction maps the shorthand's action word to Event.Action; ""
// for any other word.
func shorthandAction(word string) string {
	switch word {
	case "DENIED":
		return "Denied"
	case "ALLOWED":
		return "Allowed"
	}
	return ""
}

// cutPolicyBracket finds the first " [policy:P engine:E]" (P and E free of
// spaces and "[", followed by the end or " [") and returns the text before
// it, P, E and the text after it. Without one, detail is s and the rest
// are empty.
func cutPolicyBracket(s string) (detail, policy, engine, ctx string) {
	for off := 0; ; {
		i := strings.Index(s[off:], " [policy:")
		if i < 0 {
			return s, "", "", ""
		}
		i += off
		after := s[i+len(" [policy:"):]
		if end := strings.IndexByte(after, ']'); end > 0 {
			name, eng, ok := strings.Cut(after[:end], " engine:")
			tail := after[end+1:]
			if ok && !strings.ContainsAny(name, " [") && eng != "" && !strings.ContainsAny(eng, " [") &&
				(tail == "" || strings.HasPrefix(tail, " [")) {
				return s[:i], name, eng, tail
			}
		}
		off = i + 1
	}
}

// cutReasonBracket splits detail at its first " [reason:"; false (and
// detail whole) when there is none.
func cutReasonBracket(detail string) (string, string, bool) {
	i := strings.Index(detail, " [reason:")
	if i < 0 {
		return detail, "", false
	}
	return detail[:i], detail[i:], true
}

// readContextReason sets ev's Reason and Truncated from the context
// brackets ctx (" [k:v ... reason:R]", or empty); false when the bracket
// was cut before its "]".
func readContextReason(ev *Event, ctx string) bool {
	if ctx == "" {
		return true
	}
	inner := strings.TrimPrefix(ctx, " [")
	if !strings.HasSuffix(inner, "]") {
		return false
	}
	inner = inner[:len(inner)-1]
	if r, ok := reasonField(inner); ok {
		ev.Reason = r
		ev.Truncated = strings.HasSuffix(r, "...") && len(r) > maxReasonLen
	}
	return true
}

// reasonField finds "reason:" in a context bracket: at its start (NET, and
// HTTP at v0.0.83, shorthand.rs:203-207@v0.0.83), or after the unmapped
// fields, whose whitespace is escaped (HTTP at v0.0.111,
// shorthand.rs:104-119,158-172@v0.0.111).
func reasonField(inner string) (string, bool) {
	if r, ok := strings.CutPrefix(inner, "reason:"); ok {
		return r, true
	}
	if i := strings.Index(inner, " reason:"); i >= 0 {
		return inner[i+len(" reason:"):], true
	}
	return "", false
}

func isUpperWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// parseNetDetail reads "<binary>(<pid>) -> <host>:<port>[/<proto>]".
func parseNetDetail(ev Event, detail string) (Event, LineResult) {
	dst := detail
	if i := strings.LastIndex(detail, " -> "); i >= 0 {
		bin, ok := parseActor(detail[:i])
		if !ok {
			return Event{}, LineUnparsed
		}
		ev.Binary, dst = bin, detail[i+len(" -> "):]
	}
	if dst == "" {
		return ev, LineEvent
	}
	if i := strings.LastIndexByte(dst, '/'); i > 0 && !strings.Contains(dst[i:], ":") {
		dst = dst[:i] // the bypass monitor's "/tcp"
	}
	host, port, ok := splitHostPort(dst)
	if !ok {
		return Event{}, LineUnparsed
	}
	ev.Host, ev.Port = host, port
	return ev, LineEvent
}

// parseHTTPDetail reads "[<binary>(<pid>) -> ]<METHOD> <URL>".
func parseHTTPDetail(ev Event, detail string) (Event, LineResult) {
	req := detail
	if i := strings.LastIndex(detail, " -> "); i >= 0 {
		bin, ok := parseActor(detail[:i])
		if !ok {
			return Event{}, LineUnparsed
		}
		ev.Binary, req = bin, detail[i+len(" -> "):]
	}
	method, u, ok := strings.Cut(req, " ")
	if !ok || method != ev.Method || strings.Contains(u, " ") {
		return Event{}, LineUnparsed
	}
	scheme, hostPath, ok := strings.Cut(u, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return Event{}, LineUnparsed
	}
	hp, path := hostPath, "/"
	if i := strings.IndexByte(hostPath, '/'); i >= 0 {
		hp, path = hostPath[:i], hostPath[i:]
	}
	// Url::to_display_string omits the port only for http:80 and
	// https:443 (crates/openshell-ocsf/src/objects/http.rs:65-76@v0.0.111).
	host, port, ok := splitHostPort(hp)
	if !ok {
		host, port = strings.ToLower(hp), 80
		if scheme == "https" {
			port = 443
		}
	}
	ev.Host, ev.Port, ev.Path = host, port, stripQuery(path)
	return ev, LineEvent
}

// parseActor reads "<name>(<pid>)"; name is the executable path.
func parseActor(s string) (string, bool) {
	i := strings.LastIndexByte(s, '(')
	if i <= 0 || !strings.HasSuffix(s, ")") {
		return "", false
	}
	pid := s[i+1 : len(s)-1]
	if pid != "" && pid != "-" {
		if _, err := strconv.ParseInt(pid, 10, 64); err != nil {
			return "", false
		}
	}
	return s[:i], true
}

// splitHostPort splits "host:port" and "[v6]:port"; the host is lowercased.
func splitHostPort(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return "", 0, false
	}
	port, err := strconv.Atoi(s[i+1:])
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, false
	}
	host := s[:i]
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		return "", 0, false
	}
	return strings.ToLower(host), port, true
}

// ocsfJSON is the part of an OCSF event this package reads
// (crates/openshell-ocsf/src/objects/{endpoint,process,http,firewall_rule}.rs@v0.0.111).
type ocsfJSON struct {
	ClassUID     *int    `json:"class_uid"`
	Time         int64   `json:"time"`
	ActionID     int     `json:"action_id"`
	Message      string  `json:"message"`
	StatusDetail *string `json:"status_detail"`
	DstEndpoint  *struct {
		Domain string `json:"domain"`
		IP     string `json:"ip"`
		Port   int    `json:"port"`
	} `json:"dst_endpoint"`
	Actor *struct {
		Process *processJSON `json:"process"`
	} `json:"actor"`
	FirewallRule *struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"firewall_rule"`
	HTTPRequest *struct {
		HTTPMethod string `json:"http_method"`
		URL        *struct {
			Hostname string `json:"hostname"`
			Path     string `json:"path"`
			Port     int    `json:"port"`
		} `json:"url"`
	} `json:"http_request"`
}

type processJSON struct {
	Name   string       `json:"name"`
	Parent *processJSON `json:"parent_process"`
}

// ParseJSONLine reads one OCSF JSONL line. action_id 2 is Denied, 1
// Allowed (crates/openshell-ocsf/src/enums/action.rs:13-23@v0.0.111).
// Classes other than 4001 and 4002 are LineOther.
func ParseJSONLine(s string) (Event, LineResult) {
	var j ocsfJSON
	if err := json.Unmarshal([]byte(s), &j); err != nil || j.ClassUID == nil {
		return Event{}, LineUnparsed
	}
	if *j.ClassUID != 4001 && *j.ClassUID != 4002 {
		return Event{}, LineOther
	}
	ev := Event{Format: FormatJSONL, Class: *j.ClassUID, TimeMS: j.Time}
	switch j.ActionID {
	case 1:
		ev.Action = "Allowed"
	case 2:
		ev.Action = "Denied"
	default:
		return ev, LineOther
	}
	reason := j.Message
	if j.StatusDetail != nil && *j.StatusDetail != "" {
		reason = *j.StatusDetail
	}
	ev.Reason, ev.Truncated = reasonText(reason)
	j.readEndpoint(&ev)
	j.readActor(&ev)
	if f := j.FirewallRule; f != nil {
		ev.Policy, ev.Engine = f.Name, f.Type
	}
	j.readHTTPRequest(&ev)
	return ev, LineEvent
}

// readEndpoint sets ev's Host (the domain, else the IP, lowercased) and
// Port from dst_endpoint.
func (j *ocsfJSON) readEndpoint(ev *Event) {
	d := j.DstEndpoint
	if d == nil {
		return
	}
	ev.Host, ev.Port = strings.ToLower(d.Domain), d.Port
	if ev.Host == "" {
		ev.Host = strings.ToLower(d.IP)
	}
}

// readActor sets ev's Binary and Ancestors (at most 64, nearest first)
// from actor.process.
func (j *ocsfJSON) readActor(ev *Event) {
	if j.Actor == nil || j.Actor.Process == nil {
		return
	}
	ev.Binary = j.Actor.Process.Name
	for p, n := j.Actor.Process.Parent, 0; p != nil && n < 64; p, n = p.Parent, n+1 {
		ev.Ancestors = append(ev.Ancestors, p.Name)
	}
}

// readHTTPRequest sets ev's Method and, from the URL, Host, Path (query
// stripped, "/" when empty) and a non-zero Port; they override the
// endpoint's.
func (j *ocsfJSON) readHTTPRequest(ev *Event) {
	h := j.HTTPRequest
	if h == nil {
		return
	}
	ev.Method = h.HTTPMethod
	u := h.URL
	if u == nil {
		return
	}
	ev.Host, ev.Path = strings.ToLower(u.Hostname), stripQuery(u.Path)
	if u.Port != 0 {
		ev.Port = u.Port
	}
	if ev.Path == "" {
		ev.Path = "/"
	}
}
