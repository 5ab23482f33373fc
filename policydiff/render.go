package policydiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/ciout"
	"github.com/fullsend-ai/agent-sandbox/report"
)

// Formats lists the output formats Write accepts.
func Formats() []string { return []string{"text", "json", "markdown", "github", "gitlab"} }

// WriteOptions tune rendering.
type WriteOptions struct {
	// Marker, when set, makes the Markdown start with the hidden comment
	// `<!-- fullsend-policy-diff project=MARKER -->`, the key the PR job
	// uses to update one comment per project.
	Marker string
	// MaxRows caps the Markdown table (default 200).
	MaxRows int
}

// Write renders the result in one of Formats.
func (r *Result) Write(w io.Writer, format string, o WriteOptions) error {
	switch format {
	case "text":
		return r.writeText(w)
	case "json":
		return r.writeJSON(w)
	case "markdown":
		return r.writeMarkdown(w, o)
	case "github":
		return r.writeGitHub(w)
	case "gitlab":
		return r.Report().Write(w, format, report.WriteOptions{})
	}
	return fmt.Errorf("unknown output format %q (want %s)", format, strings.Join(Formats(), ", "))
}

// writeJSON writes the result as indented JSON, values as written
// (no HTML escaping).
func (r *Result) writeJSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("encoding diff: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writeGitHub writes the findings as GitHub workflow commands, then the
// summary line.
func (r *Result) writeGitHub(w io.Writer) error {
	if err := r.Report().Write(w, "github", report.WriteOptions{}); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, r.SummaryLine())
	return err
}

// lit renders an untrusted value on one terminal line: control, format and
// line-separator characters are escaped as Go escapes them, so a value can
// neither start a new line (a CI workflow command) nor hide text.
func lit(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return ciout.Hidden(r) || r == '\t' || r == utf8.RuneError }) < 0 {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

func symbol(action string) string {
	switch action {
	case ActionAdd:
		return "+"
	case ActionRemove:
		return "-"
	case ActionMove:
		return ">"
	}
	return "~"
}

// Subject renders what a change is about, without its risk.
func (c *Change) Subject() string {
	var b strings.Builder
	b.WriteString(c.Action + " " + c.Kind)
	if c.Field != "" {
		b.WriteString(" " + c.Field)
	}
	if c.Host != "" {
		b.WriteString(" " + c.hostPort())
	} else if c.Policy != "" && c.Kind != "reach" {
		fmt.Fprintf(&b, " [%s]", c.Policy)
	}
	if ba := c.beforeAfter(); ba != "" {
		b.WriteString(" " + ba)
	}
	return b.String()
}

// hostPort is the change's host, with its port when it has one.
func (c *Change) hostPort() string {
	if c.Port > 0 {
		return c.Host + ":" + strconv.Itoa(c.Port)
	}
	return c.Host
}

// beforeAfter is "before -> after" when both are set and differ, else the
// one set (the same value twice is shown once).
func (c *Change) beforeAfter() string {
	switch {
	case c.Before != "" && c.After != "" && c.Before != c.After:
		return c.Before + " -> " + c.After
	case c.After == "":
		return c.Before
	}
	return c.After
}

// origin picks the source a reviewer should look at: the first with a
// line outside the catalog, else the first.
func origin(ss []bundle.Source) *bundle.Source {
	for i := range ss {
		if ss[i].File != "catalog" && ss[i].Line > 0 {
			return &ss[i]
		}
	}
	if len(ss) > 0 {
		return &ss[0]
	}
	return nil
}

func (r *Result) writeText(w io.Writer) error {
	var b strings.Builder
	for i := range r.Agents {
		writeTextAgent(&b, &r.Agents[i])
	}
	for _, f := range r.Flips {
		fmt.Fprintf(&b, "flip %s %s: %s: %s -> %s (expect %s)\n", lit(f.File), lit(f.Agent), lit(f.Name), f.Before, f.After, f.Expect)
	}
	b.WriteString(r.SummaryLine() + "\n")
	b.WriteString(r.comparedLine() + "\n")
	if r.Reproduce != "" {
		b.WriteString("Reproduce: " + lit(r.Reproduce) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTextAgent writes one agent's changes, those of one network policy
// grouped under its key (agent -> policy -> endpoint, rule, binary).
func writeTextAgent(b *strings.Builder, a *AgentDiff) {
	fmt.Fprintf(b, "agent %s (%s, tier %s -> %s)\n", lit(a.Agent), a.Status, orNone(a.Tier.Before), orNone(a.Tier.After))
	policy := ""
	for i := range a.Changes {
		c := &a.Changes[i]
		ind := "  "
		if c.Policy != "" {
			if c.Policy != policy {
				fmt.Fprintf(b, "  network_policies.%s\n", lit(c.Policy))
				policy = c.Policy
			}
			ind = "    "
		}
		writeTextChange(b, ind, c)
	}
}

// writeTextChange writes one change at indent ind: its line, then its
// sources, what it moved from and the prover paths it explains.
func writeTextChange(b *strings.Builder, ind string, c *Change) {
	cats := ""
	if len(c.Categories) > 0 {
		cats = "  " + strings.Join(c.Categories, ",")
	}
	fmt.Fprintf(b, "%s%s %s  %s%s\n", ind, symbol(c.Action), lit(c.Subject()), c.Risk, cats)
	for _, s := range c.From {
		fmt.Fprintf(b, "%s    <- %s\n", ind, lit(s.String()))
	}
	if c.Action == ActionMove {
		for _, s := range c.Was {
			fmt.Fprintf(b, "%s    was %s\n", ind, lit(s.String()))
		}
	}
	for _, p := range c.Prover {
		fmt.Fprintf(b, "%s    prover %s\n", ind, lit(p.String()))
	}
}

// SummaryLine is "Diff: N added, ...; highest risk R.".
func (r *Result) SummaryLine() string {
	s := r.Summary
	line := fmt.Sprintf("Diff: %d added, %d widened, %d narrowed, %d removed, %d changed, %d moved; highest risk %s.",
		s.Added, s.Widened, s.Narrowed, s.Removed, s.Changed, s.Moved, s.MaxRisk)
	if len(r.Flips) > 0 {
		line += fmt.Sprintf(" %d policy-test decisions flip.", len(r.Flips))
	}
	return line
}

func sideLine(s SideRef) string {
	out := lit(s.Ref)
	if s.Commit != "" {
		out += " " + s.Commit[:min(12, len(s.Commit))]
	}
	if s.ManifestSHA256 != "" {
		out += " (manifest sha256:" + s.ManifestSHA256 + ")"
	}
	return out
}

func (r *Result) comparedLine() string {
	return fmt.Sprintf("Compared: base %s -> head %s, OpenShell %s.", sideLine(r.Base), sideLine(r.Head), lit(r.OpenShellVersion))
}

// markerRE keeps a marker to characters that cannot close the comment.
var markerRE = regexp.MustCompile(`[^A-Za-z0-9._/+-]`)

type row struct {
	agent string
	c     *Change
}

func (r *Result) rows() []row {
	var rows []row
	for i := range r.Agents {
		a := &r.Agents[i]
		for j := range a.Changes {
			rows = append(rows, row{a.Agent, &a.Changes[j]})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		ri, rj := RiskRank(rows[i].c.Risk), RiskRank(rows[j].c.Risk)
		if ri != rj {
			return ri > rj
		}
		return rows[i].agent < rows[j].agent
	})
	return rows
}

func (r *Result) writeMarkdown(w io.Writer, o WriteOptions) error {
	maxRows := o.MaxRows
	if maxRows <= 0 {
		maxRows = 200
	}
	var b strings.Builder
	if o.Marker != "" {
		fmt.Fprintf(&b, "<!-- fullsend-policy-diff project=%s -->\n", markerRE.ReplaceAllString(o.Marker, "_"))
	}
	fmt.Fprintf(&b, "### fullsend policy diff: highest risk %s\n\n", r.Summary.MaxRisk)
	b.WriteString(ciout.MarkdownText(r.SummaryLine()) + "\n\n")
	r.markdownTable(&b, maxRows)
	r.markdownAgents(&b)
	r.markdownFlips(&b)
	for _, q := range r.questions() {
		b.WriteString("**Review:** " + ciout.MarkdownText(q) + "\n\n")
	}
	b.WriteString(ciout.MarkdownText(r.comparedLine()) + "\n\n")
	if r.Reproduce != "" {
		b.WriteString("Reproduce: " + ciout.MarkdownCode(r.Reproduce) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownTable writes the table of changes, highest risk first, at most
// maxRows rows.
func (r *Result) markdownTable(b *strings.Builder, maxRows int) {
	rows := r.rows()
	if len(rows) == 0 {
		return
	}
	b.WriteString("| risk | change | agent | grant | before -> after | source |\n|---|---|---|---|---|---|\n")
	for i, rw := range rows {
		if i == maxRows {
			fmt.Fprintf(b, "\n%d more in the JSON artifact.\n", len(rows)-maxRows)
			break
		}
		b.WriteString(markdownRow(rw.c, rw.agent))
	}
	b.WriteString("\n")
}

// markdownRow is one change as a row of the Markdown table.
func markdownRow(c *Change, agent string) string {
	grant := c.Kind
	if c.Field != "" {
		grant += " " + c.Field
	}
	target := c.Policy
	if c.Host != "" {
		target = c.hostPort()
	}
	src := ""
	if s := origin(c.From); s != nil {
		src = ciout.MarkdownCode(fmt.Sprintf("%s:%d", s.File, s.Line))
	}
	cats := ""
	if len(c.Categories) > 0 {
		cats = " " + ciout.MarkdownCode(strings.Join(c.Categories, ","))
	}
	if target != "" {
		target = " " + ciout.MarkdownCode(target)
	}
	return fmt.Sprintf("| %s%s | %s %s | %s | %s%s | %s | %s |\n", c.Risk, cats, c.Action, ciout.MarkdownText(grant), ciout.MarkdownCode(agent),
		ciout.MarkdownText(c.Kind), target, ciout.MarkdownCode(c.beforeAfter()), src)
}

// markdownAgents writes each agent's changes in a details block.
func (r *Result) markdownAgents(b *strings.Builder) {
	for _, a := range r.Agents {
		fmt.Fprintf(b, "<details><summary>%s (%s, tier %s -> %s)</summary>\n\n", ciout.MarkdownText(a.Agent), a.Status, ciout.MarkdownText(orNone(a.Tier.Before)), ciout.MarkdownText(orNone(a.Tier.After)))
		for _, c := range a.Changes {
			fmt.Fprintf(b, "- %s %s", c.Risk, ciout.MarkdownCode(c.Subject()))
			if s := origin(c.From); s != nil {
				fmt.Fprintf(b, " from %s", ciout.MarkdownCode(s.String()))
			}
			for _, p := range c.Prover {
				fmt.Fprintf(b, "<br>prover %s", ciout.MarkdownCode(p.String()))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n</details>\n\n")
	}
}

// markdownFlips writes the policy-test decisions that flip between two
// OpenShell versions.
func (r *Result) markdownFlips(b *strings.Builder) {
	if len(r.Flips) == 0 {
		return
	}
	b.WriteString("| policy test | request | expect | before -> after |\n|---|---|---|---|\n")
	for _, f := range r.Flips {
		fmt.Fprintf(b, "| %s %s | %s | %s | %s -> %s |\n", ciout.MarkdownCode(f.File), ciout.MarkdownCode(f.Name), ciout.MarkdownCode(f.Request), f.Expect, f.Before, f.After)
	}
	b.WriteString("\n")
}

// questions returns one review question per category hit, highest risk
// first.
func (r *Result) questions() []string {
	seen := map[string]bool{}
	var out []string
	for _, rw := range r.rows() {
		for _, cat := range rw.c.Categories {
			if q, ok := questions[cat]; ok && !seen[cat] {
				seen[cat] = true
				out = append(out, q)
			}
		}
	}
	return out
}

// Report converts the changes a reviewer must act on (add, widen, change,
// at risk low or above) into report findings at their source lines, for
// the github and gitlab formats of package report: critical and high
// are deny (::error, Code Quality critical), medium and low warn.
func (r *Result) Report() *report.Report {
	rep := &report.Report{Findings: []report.Finding{}}
	for _, rw := range r.rows() {
		if rw.c.actionable() {
			rep.Findings = append(rep.Findings, changeFinding(rw.agent, rw.c))
		}
	}
	rep.Policies = len(r.Agents)
	return rep
}

// actionable reports whether a reviewer must act on a change: an add,
// widen or change at risk low or above.
func (c *Change) actionable() bool {
	return RiskRank(c.Risk) >= RiskRank(RiskLow) && c.Action != ActionRemove && c.Action != ActionNarrow && c.Action != ActionMove
}

// changeFinding is a change of an agent as a report finding at its source
// line: critical and high deny, medium and low warn.
func changeFinding(agent string, c *Change) report.Finding {
	sev := report.SeverityWarn
	if RiskRank(c.Risk) >= RiskRank(RiskHigh) {
		sev = report.SeverityDeny
	}
	id := "policy-diff"
	if len(c.Categories) > 0 {
		id = c.Categories[0]
	}
	msg := agent + ": " + c.Subject() + " (risk " + c.Risk + ")"
	if c.Why != "" {
		msg += ": " + c.Why
	}
	f := report.Finding{RuleID: id, Severity: sev, Title: "policy diff " + c.Risk, Message: strings.Map(oneLine, msg),
		Rule: "fullsend.policydiff." + c.Kind, Agent: agent, Policy: agent}
	if s := origin(c.From); s != nil {
		src := *s
		f.Source = &src
	}
	return f
}

func oneLine(r rune) rune {
	if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
		return ' '
	}
	return r
}
