package denial

import (
	"strings"
	"unicode/utf8"
)

// Format names the log format a line was read in.
type Format string

// The three formats OpenShell writes its OCSF events in.
const (
	// FormatShorthand is the sandbox's log file, /var/log/openshell.DATE.log:
	// "<ISO8601 ms>Z OCSF <shorthand>" (crates/openshell-ocsf/src/
	// tracing_layers/shorthand_layer.rs:56-65@v0.0.111, the same @v0.0.83).
	FormatShorthand Format = "shorthand"
	// FormatCLI is `openshell logs` output: "[secs.ms] [source ] [OCSF ]
	// [ocsf] <shorthand>" (crates/openshell-cli/src/run.rs:6779-6809@v0.0.111,
	// :7552@v0.0.83; the level "OCSF" and target "ocsf" from
	// crates/openshell-supervisor-process/src/log_push.rs:54-85@v0.0.111).
	FormatCLI Format = "cli"
	// FormatJSONL is the OCSF JSONL file, /var/log/openshell-ocsf.DATE.log:
	// one OCSF 1.8.0 object a line (crates/openshell-ocsf/src/format/
	// jsonl.rs:17-21@v0.0.111), written while ocsf_json_enabled is set.
	FormatJSONL Format = "ocsf-jsonl"
)

// Event is one OCSF network (4001) or HTTP (4002) event, normalized from
// any of the three formats. Every string in it is the sandbox's bytes.
type Event struct {
	Format Format
	// File and Line locate the event in its input.
	File string
	Line int
	// TimeMS is the event time in milliseconds since the epoch.
	TimeMS int64
	// Class is the OCSF class_uid (4001 or 4002).
	Class int
	// Action is the OCSF action label: Denied, Allowed, ...
	Action string
	// Host is lowercased in ASCII only, as OpenShell lowercases it
	// (str::to_ascii_lowercase, proxy.rs:1763,4824@v0.0.111): "ÄPI.X"
	// is "Äpi.x". Port is 0 when the event has none.
	Host string
	Port int
	// Method and Path are set for HTTP events; Path never has a query.
	Method string
	Path   string
	// Binary is the kernel-resolved executable (actor.process.name), "" when
	// the event has no actor (an L7 denial inside a CONNECT tunnel).
	Binary    string
	Ancestors []string
	// PID is actor.process.pid; 0 when there is no actor or OpenShell
	// did not know it ("-", which Process::from_bypass makes 0,
	// crates/openshell-ocsf/src/objects/process.rs@v0.0.111).
	PID int64
	// Policy and Engine are firewall_rule.name and firewall_rule.type.
	Policy string
	Engine string
	// Reason is status_detail, else message, cut as the shorthand cuts it
	// (reasonText), so that the three formats agree.
	Reason string
	// Truncated is set when the reason was cut at 256 bytes.
	Truncated bool
	// Trust says whether the agent could have written the event (Assess);
	// Suspect says why it is TrustSuspect, and Raw holds the raw lines
	// (bounded) it was read from and around, for a human to judge.
	Trust   Trust
	Suspect string
	Raw     []string

	// line is the event's own line, cut at maxRawLen (it shares the
	// parsed string's memory), for Raw when Assess finds it suspect.
	line string
	// hint is why Scan found the line within an injection's reach of an
	// unparsed fragment (inject.go), "" when it did not.
	hint string
	// inText marks a JSON line read after a non-JSON line of the same
	// input: not the OCSF JSONL record, whose lines are all JSON.
	inText bool
}

// Structured reports whether ev was read from the OCSF JSONL record: a
// JSON line of an input whose lines before it were all JSON. The JSONL
// layer escapes every string (serde_json, format/jsonl.rs:18@v0.0.111,
// the same @v0.0.83), so the sandboxed agent cannot write such a line; a
// JSON line after shorthand lines could be one it wrote through a binary
// path (see Trust).
func (ev *Event) Structured() bool {
	return ev.Format == FormatJSONL && !ev.inText
}

// asciiLower lowercases the ASCII letters of s and keeps every other byte,
// as Rust's str::to_ascii_lowercase does.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// maxReasonLen is the shorthand's cut of [reason:...]
// (crates/openshell-ocsf/src/format/shorthand.rs:67,74-83,121-128@v0.0.111;
// the same 256 @v0.0.83).
const maxReasonLen = 256

// reasonText normalizes a reason as shorthand.rs reason_text does: line
// breaks become spaces, and text longer than 256 bytes is cut at a UTF-8
// boundary with "..." appended. It reports whether it cut.
func reasonText(s string) (string, bool) {
	if strings.IndexByte(s, '\n') >= 0 || strings.IndexByte(s, '\r') >= 0 {
		b := []byte(s)
		for i, c := range b {
			if c == '\n' || c == '\r' {
				b[i] = ' '
			}
		}
		s = string(b)
	}
	if len(s) <= maxReasonLen {
		return s, false
	}
	end := maxReasonLen
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "...", true
}

// stripQuery drops a query string and fragment: the FORWARD path of
// v0.0.83 logged raw queries (proxy.rs:3484@v0.0.83), and a query is never
// printed nor suggested.
func stripQuery(p string) string {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		return p[:i]
	}
	return p
}
