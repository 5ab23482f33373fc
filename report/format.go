package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/ciout"
)

// WriteOptions tunes rendering.
type WriteOptions struct {
	// Color enables ANSI colours in text output (set it only for a TTY).
	Color bool
	// ToolVersion is reported in SARIF.
	ToolVersion string
}

// formatter renders a report in one output format.
type formatter struct {
	name  string
	write func(r *Report, w io.Writer, opts WriteOptions) error
}

// formatters is the table of output formats, in the order help texts list
// them. A new format is one more entry.
var formatters = []formatter{
	{"text", func(r *Report, w io.Writer, o WriteOptions) error { return r.writeText(w, o.Color) }},
	{"json", func(r *Report, w io.Writer, _ WriteOptions) error { return r.writeJSON(w) }},
	{"sarif", func(r *Report, w io.Writer, o WriteOptions) error { return r.writeSARIF(w, o.ToolVersion) }},
	{"github", func(r *Report, w io.Writer, _ WriteOptions) error { return r.writeGitHub(w) }},
	{"gitlab", func(r *Report, w io.Writer, _ WriteOptions) error { return r.writeGitLab(w) }},
}

// Formats lists the output formats Write accepts.
func Formats() []string {
	names := make([]string, len(formatters))
	for i, f := range formatters {
		names[i] = f.name
	}
	return names
}

// Write renders the report in one of Formats.
func (r *Report) Write(w io.Writer, format string, opts WriteOptions) error {
	for _, f := range formatters {
		if f.name == format {
			return f.write(r, w, opts)
		}
	}
	return fmt.Errorf("unknown output format %q (want %s)", format, strings.Join(Formats(), ", "))
}

// location is where a finding points: the agent or skill line that caused
// the element when provenance knows it, else the policy file line.
func (f *Finding) location() (file string, line int) {
	if f.Source != nil && f.Source.File != "" {
		return f.Source.File, f.Source.Line
	}
	return f.Policy, f.Line
}

func (r *Report) summary() map[string]int {
	waived := 0
	for _, f := range r.Findings {
		if f.Waived != "" {
			waived++
		}
	}
	return map[string]int{"policies": r.Policies, "deny": r.Count(SeverityDeny), "warn": r.Count(SeverityWarn), "waived": waived}
}

func (r *Report) writeText(w io.Writer, color bool) error {
	paint := painter(color)
	var b strings.Builder
	group := ""
	for _, f := range r.Findings {
		key := f.Policy + "\x00" + f.Agent
		if key != group {
			if group != "" {
				b.WriteByte('\n')
			}
			group = key
			head := f.Policy
			if f.Agent != "" {
				head += " (agent " + f.Agent + ")"
			}
			b.WriteString(paint.paint("1", head) + "\n")
		}
		writeFindingText(&b, f, paint)
	}
	s := r.summary()
	if len(r.Findings) > 0 {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%d policies: %d deny, %d warn, %d waived\n", s["policies"], s["deny"], s["warn"], s["waived"])
	_, err := io.WriteString(w, b.String())
	return err
}

// painter says whether text output is coloured.
type painter bool

// paint wraps s in the SGR code when colouring.
func (p painter) paint(code, s string) string {
	if !p {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// writeFindingText writes one finding's lines of the text report: its
// severity (ok when waived), rule, path and message, then where it comes
// from and its waiver.
func writeFindingText(b *strings.Builder, f Finding, paint painter) {
	sev := fmt.Sprintf("%-4s", f.Severity)
	switch {
	case f.Waived != "":
		sev = paint.paint("2", "ok  ")
	case f.Severity == SeverityDeny:
		sev = paint.paint("31", sev)
	default:
		sev = paint.paint("33", sev)
	}
	where := f.PolicyPath
	if where == "" {
		where = "(policy)"
	}
	fmt.Fprintf(b, "  %s %s %s: %s\n", sev, paint.paint("1", f.RuleID), where, f.Message)
	if f.Source != nil {
		fmt.Fprintf(b, "             from %s\n", f.Source)
	} else if f.Line > 0 {
		fmt.Fprintf(b, "             at %s:%d\n", f.Policy, f.Line)
	}
	if f.Waived != "" {
		fmt.Fprintf(b, "             waived: %s\n", f.Waived)
	}
}

func (r *Report) writeJSON(w io.Writer) error {
	findings := r.Findings
	if findings == nil {
		findings = []Finding{}
	}
	return encodeJSON(w, map[string]any{"summary": r.summary(), "findings": findings})
}

func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeGitHub emits GitHub Actions workflow commands (::error/::warning),
// which the runner turns into annotations on the file and line. Property
// values take ciout.EscapeProperty and the message ciout.EscapeData, the
// encodings GitHub decodes back, so the annotation shows the text as it is.
func (r *Report) writeGitHub(w io.Writer) error {
	var b strings.Builder
	for _, f := range r.Findings {
		if f.Waived != "" {
			continue
		}
		cmd := "warning"
		if f.Severity == SeverityDeny {
			cmd = "error"
		}
		file, line := f.location()
		props := []string{"file=" + ciout.EscapeProperty(file)}
		if line > 0 {
			props = append(props, fmt.Sprintf("line=%d", line))
		}
		props = append(props, "title="+ciout.EscapeProperty(f.RuleID+" "+f.Title))
		msg := f.Message
		if f.PolicyPath != "" {
			msg = f.PolicyPath + ": " + msg
		}
		if f.Source != nil {
			msg += " (policy " + f.Policy + ")"
		}
		fmt.Fprintf(&b, "::%s %s::%s\n", cmd, strings.Join(props, ","), ciout.EscapeData(msg))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fingerprint identifies a finding stably across runs (not by line).
func (f *Finding) fingerprint() string {
	sum := sha256.Sum256([]byte(strings.Join([]string{f.RuleID, f.Agent, f.Policy, f.PolicyPath, f.Message}, "\x00")))
	return hex.EncodeToString(sum[:])
}

// writeGitLab emits a GitLab Code Quality report (codeclimate subset).
func (r *Report) writeGitLab(w io.Writer) error {
	type lines struct {
		Begin int `json:"begin"`
	}
	type location struct {
		Path  string `json:"path"`
		Lines lines  `json:"lines"`
	}
	type issue struct {
		Description string   `json:"description"`
		CheckName   string   `json:"check_name"`
		Fingerprint string   `json:"fingerprint"`
		Severity    string   `json:"severity"`
		Location    location `json:"location"`
	}
	out := []issue{}
	for _, f := range r.Findings {
		if f.Waived != "" {
			continue
		}
		sev := "minor"
		if f.Severity == SeverityDeny {
			sev = "critical"
		}
		file, line := f.location()
		desc := f.RuleID + " " + f.Message
		if f.PolicyPath != "" {
			desc += " (" + f.PolicyPath + ")"
		}
		out = append(out, issue{Description: desc, CheckName: f.RuleID, Fingerprint: f.fingerprint(),
			Severity: sev, Location: location{Path: file, Lines: lines{Begin: max(line, 1)}}})
	}
	return encodeJSON(w, out)
}
