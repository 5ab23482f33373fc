package suggest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sort"
	"strconv"
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
		s.assess()
	}
	p.res.Suggestions = append(p.res.Suggestions[:0], p.sugs...)
	for _, list := range []*[]Finding{&p.res.Refused, &p.res.Manual, &p.res.Ignored} {
		sort.SliceStable(*list, func(i, j int) bool { return idLess((*list)[i].Denial, (*list)[j].Denial) })
	}
	p.res.PolicyTest = p.policyTest()
}

// assess sets the risk, categories and notes of a suggestion, in the
// vocabulary of OpenShell's prover (capability_expansion,
// docs/sandboxes/policy-advisor.mdx:167-182@v0.0.111) and the day-2 risk
// table: a write method is high, a new read-only host medium, a new rule
// that only reads low, an interpreter or raw network binary high, a tier
// raised to full critical.
func (s *Suggestion) assess() {
	rank := map[string]int{"info": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}
	risk := "low"
	raise := func(r string) {
		if rank[r] > rank[risk] {
			risk = r
		}
	}
	writes := false
	for m := range s.methods {
		if writeMethods[m] {
			writes = true
		}
	}
	switch s.Change {
	case "add-endpoint":
		raise("medium")
		if s.Provisional {
			s.addNote("new host, read methods only (access: read-only)")
		}
	case "add-binary":
		raise("medium")
		if rawTool(s.Value) {
			raise("high")
			s.addNote("interpreter or raw network tool: it can send anything the endpoint allows")
		}
	}
	for _, b := range s.binaries {
		if rawTool(b) {
			raise("high")
			s.addNote("declares " + b + ", an interpreter or raw network tool")
		}
	}
	if writes {
		raise("high")
		s.Categories = append(s.Categories, "capability_expansion")
		s.addNote("write method")
	}
	if host, port, err := net.SplitHostPort(hostPortOf(s)); err == nil {
		// The mechanistic mapper's notes
		// (crates/openshell-sandbox/src/mechanistic_mapper.rs:303-325@v0.0.111).
		if a, err := netip.ParseAddr(host); err == nil && (a.IsPrivate() || a.IsLoopback()) {
			raise("high")
			s.addNote(fmt.Sprintf("%s is an internal or private address", host))
		}
		n, _ := strconv.Atoi(port)
		if n > 49152 {
			s.addNote(fmt.Sprintf("port %d is in the ephemeral range", n))
		}
		switch n {
		case 5432, 3306, 6379, 27017, 9200, 11211, 5672:
			raise("medium")
			s.addNote(fmt.Sprintf("port %d is a well-known database or service port", n))
		}
	}
	if s.TierAfter != s.TierBefore {
		s.addNote(fmt.Sprintf("raises the agent's tier from %s to %s", s.TierBefore, s.TierAfter))
		raise("high")
		if s.TierAfter == "full" {
			raise("critical")
		}
	}
	s.Risk = risk
}

func hostPortOf(s *Suggestion) string {
	if s.Change == "add-endpoint" {
		return s.Value
	}
	for _, r := range s.requests {
		return net.JoinHostPort(r.Host, strconv.Itoa(r.Port))
	}
	return ""
}

// policyTest renders a *.policytest.yaml with an allow expectation for each
// suggestion's requests, a deny one for each probe it was checked with,
// and a deny one for each refused request.
func (p *planner) policyTest() string {
	type tcase struct {
		Name    string `yaml:"name"`
		Request string `yaml:"request"`
		Expect  string `yaml:"expect"`
	}
	var tests []tcase
	for _, s := range p.sugs {
		for _, r := range s.requests {
			tests = append(tests, tcase{Name: fmt.Sprintf("%s: %s", s.ID, s.Value), Request: r.String(), Expect: "allow"})
		}
		for _, r := range s.probes {
			tests = append(tests, tcase{Name: fmt.Sprintf("%s stays minimal: %s %s%s", s.ID, methodOf(r), r.Host, r.Path), Request: r.String(), Expect: "deny"})
		}
	}
	byID := map[string]*Denial{}
	for _, d := range p.res.Denials {
		byID[d.ID] = d
	}
	for _, f := range p.res.Refused {
		d := byID[f.Denial]
		if d == nil || !validHost(d.Host) {
			continue
		}
		if r := p.request(d); r != nil {
			tests = append(tests, tcase{Name: fmt.Sprintf("%s refused: %s", d.ID, net.JoinHostPort(d.Host, strconv.Itoa(d.Port))), Request: r.String(), Expect: "deny"})
		}
	}
	if len(tests) == 0 {
		return ""
	}
	set := map[string]string{}
	examples := placeholder.Examples()
	open, _ := openshell.OpenPlaceholders(p.opts.Agent.Policy.Clone())
	for _, n := range open {
		set[n] = examples[n]
	}
	for k, v := range p.opts.Values {
		set[k] = v
	}
	doc := struct {
		Agent string            `yaml:"agent"`
		Set   map[string]string `yaml:"set,omitempty"`
		Tests []tcase           `yaml:"tests"`
	}{p.opts.Agent.Name, set, tests}
	var buf strings.Builder
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return ""
	}
	_ = enc.Close()
	return "# Suggested by fullsend policy suggest: the expectations that come with the grants.\n" + buf.String()
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
	var b strings.Builder
	byID := map[string]*Denial{}
	for _, d := range res.Denials {
		byID[d.ID] = d
	}
	fmt.Fprintf(&b, "agent %s, OpenShell %s\n", Safe(res.Agent), res.OpenShellVersion)
	for _, in := range res.Inputs {
		fmt.Fprintf(&b, "  read %s (%s): %d events, %d denials, %d unparsed lines\n", Safe(in.Path), in.Format, in.Events, in.Denials, in.Unparsed)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", Safe(w))
	}
	for _, s := range res.Suggestions {
		fmt.Fprintf(&b, "\n%s %s %s  risk %s", s.ID, s.Change, Safe(s.Value), s.Risk)
		if len(s.Categories) > 0 {
			fmt.Fprintf(&b, "  %s", strings.Join(s.Categories, ","))
		}
		fmt.Fprintf(&b, "\n   in %s after line %d (%s)\n", Safe(s.File), s.Line, s.YAMLPath)
		for _, r := range s.Rules {
			if s.Change == "add-endpoint" {
				fmt.Fprintf(&b, "   rule %s\n", Safe(r))
			}
		}
		for _, id := range s.Covers {
			if d := byID[id]; d != nil {
				fmt.Fprintf(&b, "   covers %s\n", describe(d))
			}
		}
		fmt.Fprintf(&b, "   tier %s -> %s\n", s.TierBefore, s.TierAfter)
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "   note: %s\n", Safe(n))
		}
	}
	for _, sec := range []struct {
		name string
		list []Finding
	}{{"refused", res.Refused}, {"manual", res.Manual}, {"ignored", res.Ignored}} {
		if len(sec.list) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n", sec.name)
		for _, f := range sec.list {
			if d := byID[f.Denial]; d != nil {
				fmt.Fprintf(&b, "  %s\n", describe(d))
			}
			fmt.Fprintf(&b, "     %s\n", Safe(f.Why))
			if f.Hint != "" {
				fmt.Fprintf(&b, "     hint: %s\n", Safe(f.Hint))
			}
		}
	}
	if res.PolicyTest != "" {
		fmt.Fprintf(&b, "\npolicy test for the suggestions (keep it beside the agent as a *.policytest.yaml):\n")
		for _, l := range strings.Split(strings.TrimSuffix(res.PolicyTest, "\n"), "\n") {
			fmt.Fprintf(&b, "  %s\n", Safe(l))
		}
	}
	fmt.Fprintf(&b, "\n%d suggestions, %d refused, %d manual, %d ignored, from %d denials.\n",
		len(res.Suggestions), len(res.Refused), len(res.Manual), len(res.Ignored), len(res.Denials))
	if len(res.Suggestions) > 0 {
		b.WriteString("Suggestions are evidence for a human: review them, apply with -o patch or --write (never in CI), then `fullsend policy compile` and `fullsend policy diff`.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describe renders a denial on one line, escaped.
func describe(d *Denial) string {
	target := net.JoinHostPort(d.Host, strconv.Itoa(d.Port))
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
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
			i++
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 || r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, c)
				i++
				continue
			}
			fmt.Fprintf(&b, `\u%04x`, r)
			i += n
		}
	}
	return b.String()
}

func methodOf(r *decide.Request) string {
	if r.Method == "" {
		return "CONNECT"
	}
	return r.Method
}
