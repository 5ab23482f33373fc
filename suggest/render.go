package suggest

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// finish assesses the risk of every suggestion, orders the findings and
// writes the policy-test snippet.
func (p *planner) finish() {
	for _, s := range p.sugs {
		s.Grants = p.grantsOf(s)
		s.unknownBins = p.unknownBinaries(s.binaries)
		s.assess()
	}
	if p.after != nil && len(p.sugs) > 0 {
		p.spawnNotes(p.after, p.version)
	}
	p.res.Suggestions = append(p.res.Suggestions[:0], p.sugs...)
	for _, list := range []*[]Finding{&p.res.Refused, &p.res.Manual, &p.res.Ignored} {
		sort.SliceStable(*list, func(i, j int) bool { return idLess((*list)[i].Denial, (*list)[j].Denial) })
	}
	p.res.PolicyTest = p.policyTest()
}

// unknownBinaries are those of bins that no network policy held before
// the patch: binaries that gain the network at all.
func (p *planner) unknownBinaries(bins []string) []string {
	var out []string
	for _, b := range bins {
		known := false
		for _, np := range p.opts.Agent.Policy.NetworkPolicies {
			known = known || slices.ContainsFunc(np.Binaries, func(x openshell.Binary) bool { return x.Path == b })
		}
		if !known {
			out = append(out, b)
		}
	}
	return out
}

// policyTestCase is one expectation of the policy-test snippet.
type policyTestCase struct {
	Name    string `yaml:"name"`
	Request string `yaml:"request"`
	Expect  string `yaml:"expect"`
}

// policyTest renders a *.policytest.yaml with an allow expectation for each
// suggestion's requests, a deny one for each probe it was checked with,
// and a deny one for each refused request.
func (p *planner) policyTest() string {
	tests := append(p.suggestionTests(), p.refusalTests()...)
	if len(tests) == 0 {
		return ""
	}
	doc := struct {
		Agent string            `yaml:"agent"`
		Set   map[string]string `yaml:"set,omitempty"`
		Tests []policyTestCase  `yaml:"tests"`
	}{p.opts.Agent.Name, p.policyTestSet(), tests}
	var buf strings.Builder
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return ""
	}
	_ = enc.Close()
	return "# Suggested by fullsend policy suggest: the expectations that come with the grants.\n" + buf.String()
}

// suggestionTests expect each suggestion's requests allowed and the probes
// it was checked with denied.
func (p *planner) suggestionTests() []policyTestCase {
	var tests []policyTestCase
	for _, s := range p.sugs {
		for _, r := range s.requests {
			tests = append(tests, policyTestCase{Name: fmt.Sprintf("%s: %s", s.ID, s.Value), Request: r.String(), Expect: "allow"})
		}
		for _, r := range s.probes {
			tests = append(tests, policyTestCase{Name: fmt.Sprintf("%s stays minimal: %s %s%s", s.ID, methodOf(r), r.Host, r.Path), Request: r.String(), Expect: "deny"})
		}
	}
	return tests
}

// refusalTests expect each refused request with a plain host denied.
func (p *planner) refusalTests() []policyTestCase {
	var tests []policyTestCase
	byID := denialsByID(p.res.Denials)
	for _, f := range p.res.Refused {
		d := byID[f.Denial]
		if d == nil || !validHost(d.Host) {
			continue
		}
		if r := p.request(d); r != nil {
			tests = append(tests, policyTestCase{Name: fmt.Sprintf("%s refused: %s", d.ID, hostPort(d.Host, d.Port)), Request: r.String(), Expect: "deny"})
		}
	}
	return tests
}

// policyTestSet is the snippet's set: an example value for each
// placeholder the policy leaves open, the job's values over them.
func (p *planner) policyTestSet() map[string]string {
	set := map[string]string{}
	examples := placeholder.Examples()
	open, _ := openshell.OpenPlaceholders(p.opts.Agent.Policy.Clone())
	for _, n := range open {
		set[n] = examples[n]
	}
	maps.Copy(set, p.opts.Values)
	return set
}

// denialsByID indexes denials by their id.
func denialsByID(denials []*Denial) map[string]*Denial {
	byID := map[string]*Denial{}
	for _, d := range denials {
		byID[d.ID] = d
	}
	return byID
}

// WriteJSON writes the result as JSON (fullsend.policy-suggest/v1).
func WriteJSON(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(res)
}

// WritePatch writes the unified diff of the frontmatter files.
func WritePatch(w io.Writer, res *Result) error {
	_, err := io.WriteString(w, res.Patch)
	return err
}

// WriteText writes the result for a human. Every value read from a log is
// escaped (Safe): control characters and non-ASCII runes are shown as
// escapes, so a log line cannot move the cursor, colour the terminal or
// start a CI workflow command.
func WriteText(w io.Writer, res *Result) error {
	t := textWriter{byID: denialsByID(res.Denials)}
	b := &t.b
	fmt.Fprintf(b, "agent %s, OpenShell %s\n", Safe(res.Agent), res.OpenShellVersion)
	for _, in := range res.Inputs {
		fmt.Fprintf(b, "  read %s (%s): %d events, %d denials, %d unparsed lines\n", Safe(in.Path), in.Format, in.Events, in.Denials, in.Unparsed)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(b, "warning: %s\n", Safe(w))
	}
	for _, s := range res.Suggestions {
		t.suggestion(s)
	}
	t.findings("refused", res.Refused)
	t.findings("manual", res.Manual)
	t.findings("ignored", res.Ignored)
	t.suspects(res)
	t.policyTest(res.PolicyTest)
	fmt.Fprintf(b, "\n%d suggestions, %d refused, %d manual, %d ignored, from %d denials.\n",
		len(res.Suggestions), len(res.Refused), len(res.Manual), len(res.Ignored), len(res.Denials))
	if len(res.Suggestions) > 0 {
		b.WriteString("Suggestions are evidence for a human: review them, apply with -o patch or --write (never in CI), then `fullsend policy compile` and `fullsend policy diff`.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// textWriter is WriteText's output and the denials its lines describe.
type textWriter struct {
	b    strings.Builder
	byID map[string]*Denial
}

// suggestion writes one suggestion: the change, where it goes, the rules
// of a new endpoint, the denials it covers, the tier and the notes.
func (t *textWriter) suggestion(s *Suggestion) {
	b := &t.b
	fmt.Fprintf(b, "\n%s %s %s  risk %s", s.ID, s.Change, Safe(s.Value), s.Risk)
	if len(s.Categories) > 0 {
		fmt.Fprintf(b, "  %s", strings.Join(s.Categories, ","))
	}
	fmt.Fprintf(b, "\n   in %s after line %d (%s)\n", Safe(s.File), s.Line, s.YAMLPath)
	if s.Change == "add-endpoint" {
		for _, r := range s.Rules {
			fmt.Fprintf(b, "   rule %s\n", Safe(r))
		}
	}
	for _, id := range s.Covers {
		if d := t.byID[id]; d != nil {
			fmt.Fprintf(b, "   covers %s\n", describe(d))
		}
	}
	for _, g := range s.Grants {
		fmt.Fprintf(b, "   grants %s %s %s%s\n", Safe(g.Binary), g.Method, Safe(hostPort(g.Host, g.Port)), Safe(g.Path))
	}
	fmt.Fprintf(b, "   tier %s -> %s\n", s.TierBefore, s.TierAfter)
	for _, n := range s.Notes {
		fmt.Fprintf(b, "   note: %s\n", Safe(n))
	}
}

// findings writes one section of findings (refused, manual, ignored),
// nothing when it is empty.
func (t *textWriter) findings(name string, list []Finding) {
	if len(list) == 0 {
		return
	}
	b := &t.b
	fmt.Fprintf(b, "\n%s:\n", name)
	for _, f := range list {
		if d := t.byID[f.Denial]; d != nil {
			fmt.Fprintf(b, "  %s\n", describe(d))
		}
		fmt.Fprintf(b, "     %s\n", Safe(f.Why))
		if f.Hint != "" {
			fmt.Fprintf(b, "     hint: %s\n", Safe(f.Hint))
		}
	}
}

// suspects writes the events the agent could have written, with their raw
// lines, escaped; nothing when there are none.
func (t *textWriter) suspects(res *Result) {
	if res.SuspectEvents == 0 {
		return
	}
	b := &t.b
	fmt.Fprintf(b, "\nsuspect: %d events the agent could have written, never suggested:\n", res.SuspectEvents)
	for _, s := range res.Suspect {
		target := hostPort(s.Host, s.Port)
		if s.Method != "" {
			target = s.Method + " " + target + s.Path
		}
		fmt.Fprintf(b, "  %s:%d %s %s, binary %s\n     %s\n", Safe(s.File), s.Line, Safe(s.Action), Safe(target), Safe(s.Binary), Safe(s.Why))
		for _, r := range s.Raw {
			fmt.Fprintf(b, "     raw: %s\n", Safe(r))
		}
	}
	if n := res.SuspectEvents - len(res.Suspect); n > 0 {
		fmt.Fprintf(b, "  ... and %d more\n", n)
	}
}

// policyTest writes the policy-test snippet, indented, when there is one.
func (t *textWriter) policyTest(snippet string) {
	if snippet == "" {
		return
	}
	fmt.Fprintf(&t.b, "\npolicy test for the suggestions (keep it beside the agent as a *.policytest.yaml):\n")
	for _, l := range strings.Split(strings.TrimSuffix(snippet, "\n"), "\n") {
		fmt.Fprintf(&t.b, "  %s\n", Safe(l))
	}
}

// describe renders a denial on one line, escaped.
func describe(d *Denial) string {
	target := hostPort(d.Host, d.Port)
	if d.Method != "" {
		target = d.Method + " " + target + d.Path
	}
	s := fmt.Sprintf("%s %s %s, seen %dx, %s .. %s", d.ID, d.Kind, Safe(target), d.Count, d.FirstSeen, d.LastSeen)
	if d.Binary != "" {
		s += ", binary " + Safe(d.Binary)
	} else if d.viaBinary != "" {
		s += ", in a tunnel of " + Safe(d.viaBinary)
	}
	if len(d.Ancestors) > 0 {
		s += " via " + Safe(strings.Join(d.Ancestors, " -> "))
	}
	if d.Policy != "" && d.Policy != "-" {
		s += ", policy " + Safe(d.Policy)
	}
	if len(d.Lines) > 0 {
		s += ", at " + Safe(strings.Join(d.Lines, " "))
	}
	return s
}

// Safe renders untrusted text inert on one terminal or CI log line:
// printable ASCII stays, everything else (control characters, ESC, DEL,
// any non-ASCII rune, invalid UTF-8) becomes a \x or \u escape, and a
// backslash is doubled.
func Safe(s string) string {
	if !strings.ContainsFunc(s, needsEscape) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		i += writeSafe(&b, s[i:])
	}
	return b.String()
}

// needsEscape reports the runes Safe escapes: all but printable ASCII, and
// the backslash. An invalid UTF-8 byte reads as utf8.RuneError, escaped.
func needsEscape(r rune) bool {
	return r < 0x20 || r >= 0x7f || r == '\\'
}

// writeSafe writes the first character of s as Safe renders it and
// returns the bytes it took: a backslash doubled, printable ASCII as is,
// a control byte or an invalid UTF-8 byte as \x, any other rune as \u.
func writeSafe(b *strings.Builder, s string) int {
	switch c := s[0]; {
	case c == '\\':
		b.WriteString(`\\`)
		return 1
	case c >= 0x20 && c < 0x7f:
		b.WriteByte(c)
		return 1
	}
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n <= 1 || r < 0x80 {
		fmt.Fprintf(b, `\x%02x`, s[0])
		return 1
	}
	fmt.Fprintf(b, `\u%04x`, r)
	return n
}

func methodOf(r *decide.Request) string {
	if r.Method == "" {
		return "CONNECT"
	}
	return r.Method
}
