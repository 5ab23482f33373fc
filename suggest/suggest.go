package suggest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// Schema names the JSON output.
const Schema = "fullsend.policy-suggest/v1"

// Target is one compiled agent: what suggest reads and what a Compiler
// returns for the patched project.
type Target struct {
	Name string
	// File is the agent's definition, relative to the project root.
	File string
	// Tier is read-only, network or full.
	Tier string
	// Policy is the compiled policy, placeholders open, with provenance.
	Policy *openshell.Policy
	// Effective is the policy the sandbox runs (provider layers included,
	// compile.Compiled.Effective); nil means Policy.
	Effective *openshell.Policy
	// Parents are the agents that spawn this one (an Agent(...) rule):
	// `policy compile` refuses a child that may do what a parent may not
	// unless the parent declares it (compile/spawns.go).
	Parents []Parent
}

// Parent is an agent that spawns the target, as compiled with it.
type Parent struct {
	Name string
	// File is the parent's definition, relative to the project root.
	File string
	// Policy is the parent's effective policy.
	Policy *openshell.Policy
	// Hosts, Paths and Process are what the parent's
	// sandbox.spawn-widening declares for the target.
	Hosts, Paths []string
	Process      bool
}

// Compiler compiles the agent in a project file system exactly as
// `fullsend policy compile` would (same catalog, provider, version).
type Compiler func(ctx context.Context, fsys fs.FS) (*Target, error)

// Options configure one suggestion run.
type Options struct {
	// Agent is the agent as compiled from Project.
	Agent *Target
	// Project is the project root; Compile compiles it (or a patched copy).
	Project fs.FS
	Compile Compiler
	// Values are the job's placeholder values (--set, result.json): they
	// turn concrete path segments back into {{NAME}}.
	Values placeholder.Values
	// OpenShellVersion decides requests as that release would.
	OpenShellVersion string
	// IncludeAudit treats enforcement: audit "would deny" as denials.
	IncludeAudit bool
	// StrictPaths lists L4 denials (no path known) under manual instead of
	// suggesting a provisional read-only endpoint.
	StrictPaths bool
	// MinCount ignores denial groups seen fewer times (default 1).
	MinCount int
	// To is where new endpoints go: "" or "agent" (the agent file), or
	// "skill:NAME".
	To string
	// Generalize lets the last path segment of rules become "*" (see
	// generalize); off, every rule is exactly what was denied. The agent
	// chooses what it is denied, so widening is the user's request.
	Generalize bool
	// Only keeps the suggestions of these ids (as a run without Only
	// numbers them) in the patch; the others are left out.
	Only []string
	// RunOf names the run of each log file (Logs.RunOf): events of one run
	// are assessed together, and the same event read from two files of one
	// run counts once. A file it does not name belongs to the run "".
	RunOf map[string]string
}

// Denial is one group of identical denials.
type Denial struct {
	ID        string      `json:"id"`
	Kind      denial.Kind `json:"kind"`
	Host      string      `json:"host,omitempty"`
	Port      int         `json:"port,omitempty"`
	Method    string      `json:"method,omitempty"`
	Path      string      `json:"path,omitempty"`
	Binary    string      `json:"binary,omitempty"`
	Ancestors []string    `json:"ancestors,omitempty"`
	Policy    string      `json:"policy,omitempty"`
	Engine    string      `json:"engine,omitempty"`
	Reason    string      `json:"reason,omitempty"`
	Forward   bool        `json:"forward,omitempty"`
	Count     int         `json:"count"`
	FirstSeen string      `json:"first_seen"`
	LastSeen  string      `json:"last_seen"`
	Lines     []string    `json:"lines"`

	firstMS, lastMS int64
	// viaBinary is a binary of the policy, for requests of an L7 denial
	// inside a tunnel (which names none).
	viaBinary string
}

// Suggestion is one frontmatter change.
type Suggestion struct {
	ID   string `json:"id"`
	File string `json:"file"`
	// Line is the file line the change is inserted after.
	Line     int    `json:"line"`
	YAMLPath string `json:"yaml_path"`
	// Change is add-rule, add-endpoint or add-binary.
	Change string `json:"change"`
	// Value is the rule, the endpoint (host:port) or the binary.
	Value       string   `json:"value"`
	Rules       []string `json:"rules,omitempty"`
	Provisional bool     `json:"provisional,omitempty"`
	// Widened is set when the rule's last segment became "*" (Generalize).
	Widened    bool     `json:"widened,omitempty"`
	Covers     []string `json:"covers"`
	Risk       string   `json:"risk"`
	Categories []string `json:"categories"`
	Notes      []string `json:"notes"`
	TierBefore string   `json:"tier_before"`
	TierAfter  string   `json:"tier_after"`
	// Grants are every (binary, host, port, method, path) the change lets
	// through that was not before: every binary it adds is named here.
	Grants []Grant `json:"grants"`

	// requests are the covered denials' requests (concrete values).
	requests []*decide.Request
	probes   []*decide.Request
	// binaries are a new endpoint's: exactly its denied requests'.
	binaries []string
	// unknownBins are the binaries it declares that no policy held before.
	unknownBins []string
	denials     []*Denial
	methods     map[string]bool
}

// Finding is a denial suggest does not turn into a grant.
type Finding struct {
	Denial string `json:"denial,omitempty"`
	Why    string `json:"why"`
	Hint   string `json:"hint,omitempty"`
	// Unverified marks a manual finding whose suggestion failed its check
	// (or kept the patched project from compiling) and was left out.
	Unverified bool `json:"unverified,omitempty"`
}

// Suspect is an event suggest does not trust: the agent could have written
// it (a shorthand line forged through a binary path holding line breaks,
// issue 33), so it is never a grant.
type Suspect struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Action string `json:"action,omitempty"`
	Host   string `json:"host,omitempty"`
	Port   int    `json:"port,omitempty"`
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	Binary string `json:"binary,omitempty"`
	// Why is denial.Event.Suspect; Raw the raw lines it was read from.
	Why string   `json:"why"`
	Raw []string `json:"raw,omitempty"`
}

// maxSuspects bounds the suspect events listed (all are counted).
const maxSuspects = 100

// Result is the outcome of a run.
type Result struct {
	Schema           string              `json:"schema"`
	Agent            string              `json:"agent"`
	OpenShellVersion string              `json:"openshell_version"`
	Inputs           []denial.InputStats `json:"inputs"`
	Denials          []*Denial           `json:"denials"`
	Suggestions      []*Suggestion       `json:"suggestions"`
	Refused          []Finding           `json:"refused"`
	Manual           []Finding           `json:"manual"`
	Ignored          []Finding           `json:"ignored"`
	// Suspect lists the events the agent could have written (denial.Trust):
	// never a grant, shown with their raw lines for a human; SuspectEvents
	// counts them all (the list stops at maxSuspects).
	Suspect       []Suspect `json:"suspect"`
	SuspectEvents int       `json:"suspect_events"`
	Warnings      []string  `json:"warnings"`
	// Patch is the unified diff of the frontmatter files.
	Patch string `json:"patch"`
	// PolicyTest is a *.policytest.yaml for the suggestions and refusals.
	PolicyTest string `json:"policytest"`

	// Files are the patched files' new contents, by project path.
	Files map[string][]byte `json:"-"`
}

// NeedsHuman counts what the analysis could not settle by itself: the
// denials whose suggestion failed its check (manual, unverified) and the
// events the agent could have written (suspect).
func (r *Result) NeedsHuman() int {
	n := r.SuspectEvents
	for _, f := range r.Manual {
		if f.Unverified {
			n++
		}
	}
	return n
}

// ErrOnly reports an id Options.Only names that the analysis does not have.
var ErrOnly = errors.New("no such suggestion")

// ErrVerify reports that suggestions could not be checked at all (no
// compiler); a suggestion that fails its check is a manual finding.
var ErrVerify = errors.New("suggestion failed verification")

// Run classifies the events, maps them to frontmatter changes, applies
// the changes to a copy of the project, recompiles it with opts.Compile and
// checks every change with the decision engine before returning it.
func Run(ctx context.Context, opts Options, events []denial.Event, inputs []denial.InputStats) (*Result, error) {
	if opts.Agent == nil || opts.Agent.Policy == nil {
		return nil, errors.New("suggest: no compiled agent")
	}
	opts.MinCount = max(opts.MinCount, 1)
	version := cmp.Or(opts.OpenShellVersion, openshell.DefaultOpenShellVersion)
	res := newResult(opts.Agent.Name, version, inputs)
	before, err := newDecider(opts.Agent.Policy, opts.Values, version)
	if err != nil {
		return nil, fmt.Errorf("deciding with the compiled policy: %w", err)
	}
	assess(events, opts.RunOf)
	trusted := res.takeSuspects(events)
	res.Denials = group(trusted, opts.IncludeAudit, opts.RunOf)
	p := &planner{opts: opts, res: res, before: before, sources: map[string]*source{}}
	p.auditWarning(inputs)
	p.valuesWarning()
	p.shorthandWarning(trusted)
	for _, d := range res.Denials {
		p.plan(d)
	}
	if opts.Generalize {
		p.generalize()
	}
	if err := p.apply(); err != nil {
		return nil, err
	}
	p.warned = len(res.Warnings)
	if err := p.verify(ctx, version); err != nil {
		return nil, err
	}
	if err := p.only(ctx, version); err != nil {
		return nil, err
	}
	p.finish()
	return res, nil
}

// RunLogs is Run on the events ReadLogs read, run by run, with what the
// runs disagree on among the warnings.
func RunLogs(ctx context.Context, opts Options, logs *Logs) (*Result, error) {
	opts.RunOf = logs.RunOf()
	res, err := Run(ctx, opts, logs.Events, logs.Inputs)
	if err != nil {
		return nil, err
	}
	res.Warnings = append(slices.Clone(logs.Warnings), res.Warnings...)
	return res, nil
}

// newResult is the result of a run that found nothing yet: its lists are
// empty, never null, in the JSON.
func newResult(agent, version string, inputs []denial.InputStats) *Result {
	if inputs == nil {
		inputs = []denial.InputStats{}
	}
	return &Result{Schema: Schema, Agent: agent, OpenShellVersion: version, Inputs: inputs,
		Denials: []*Denial{}, Suggestions: []*Suggestion{}, Refused: []Finding{}, Manual: []Finding{}, Ignored: []Finding{}, Suspect: []Suspect{}, Warnings: []string{}}
}

// assess sets the trust of events no one assessed yet (a caller that did
// not read them with ReadLogs), run by run, as ReadLogs does.
func assess(events []denial.Event, runOf map[string]string) {
	byRun := map[string][]int{}
	var order []string
	for i := range events {
		r := runOf[events[i].File]
		if _, ok := byRun[r]; !ok {
			order = append(order, r)
		}
		byRun[r] = append(byRun[r], i)
	}
	for _, r := range order {
		idx := byRun[r]
		if slices.ContainsFunc(idx, func(i int) bool { return events[i].Trust != "" }) {
			continue // ReadLogs assessed this run
		}
		run := make([]denial.Event, len(idx))
		for j, i := range idx {
			run[j] = events[i]
		}
		denial.Assess(run)
		for j, i := range idx {
			events[i] = run[j]
		}
	}
}

// unassessed is why an event without a Trust is suspect.
const unassessed = "not assessed (no trust was set for it): an event is granted only when denial.Assess judged it"

// takeSuspects lists the events the agent could have written, by file and
// line (so the order of --logs does not matter), and returns the others.
// It fails closed: an event left unassessed ("", a caller that assessed
// only part of a run) is not grantable either.
func (r *Result) takeSuspects(events []denial.Event) []denial.Event {
	out := make([]denial.Event, 0, len(events))
	var suspect []int
	for i := range events {
		if events[i].Trust.Grantable() {
			out = append(out, events[i])
			continue
		}
		suspect = append(suspect, i)
	}
	slices.SortStableFunc(suspect, func(a, b int) int {
		return cmp.Or(strings.Compare(events[a].File, events[b].File), cmp.Compare(events[a].Line, events[b].Line))
	})
	r.SuspectEvents = len(suspect)
	for _, i := range suspect[:min(len(suspect), maxSuspects)] {
		r.Suspect = append(r.Suspect, suspectOf(&events[i]))
	}
	return out
}

// suspectOf is the listing of a suspect event.
func suspectOf(ev *denial.Event) Suspect {
	why := cmp.Or(ev.Suspect, "the agent could have written this event")
	if ev.Trust == "" {
		why = unassessed
	}
	return Suspect{File: ev.File, Line: ev.Line, Action: ev.Action, Host: ev.Host, Port: ev.Port,
		Method: ev.Method, Path: ev.Path, Binary: ev.Binary, Why: why, Raw: ev.Raw}
}

// eventKey is what makes two events the same denial.
type eventKey struct {
	kind                         denial.Kind
	host                         string
	port                         int
	method, path, binary, policy string
}

// group classifies events, keeps the denials, and merges the same event
// read from several inputs: an event in another input within 1 s of one
// already counted is that one (the file, JSONL and CLI timestamps of one
// event differ by the write delay).
func group(events []denial.Event, audit bool, runOf map[string]string) []*Denial {
	groups := map[eventKey]*denialGroup{}
	for _, c := range classified(events, audit) {
		ev := &events[c.index]
		k := eventKey{c.kind, ev.Host, ev.Port, ev.Method, ev.Path, ev.Binary, ev.Policy}
		g := groups[k]
		if g == nil {
			g = &denialGroup{d: &Denial{Kind: c.kind, Host: ev.Host, Port: ev.Port, Method: ev.Method, Path: ev.Path,
				Binary: ev.Binary, Policy: ev.Policy, Engine: ev.Engine, firstMS: ev.TimeMS}}
			groups[k] = g
		}
		g.add(ev, runOf[ev.File])
	}
	out := make([]*Denial, 0, len(groups))
	for _, g := range groups {
		g.d.finish()
		out = append(out, g.d)
	}
	sortDenials(out)
	for i, d := range out {
		d.ID = "D" + strconv.Itoa(i+1)
	}
	return out
}

// classifiedEvent is an event's index and its denial kind.
type classifiedEvent struct {
	index int
	kind  denial.Kind
}

// classified returns the events that are denials, by time, then file and
// line (a stable sort: the input order breaks the remaining ties).
func classified(events []denial.Event, audit bool) []classifiedEvent {
	out := make([]classifiedEvent, 0, len(events))
	for i := range events {
		if k := denial.Classify(events[i], audit); k != denial.KindNone {
			out = append(out, classifiedEvent{i, k})
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		ea, eb := &events[out[a].index], &events[out[b].index]
		if ea.TimeMS != eb.TimeMS {
			return ea.TimeMS < eb.TimeMS
		}
		if ea.File != eb.File {
			return ea.File < eb.File
		}
		return ea.Line < eb.Line
	})
	return out
}

// denialGroup is one denial and the occurrences counted for it: each
// occurrence is a time and the inputs that reported it.
type denialGroup struct {
	d    *Denial
	occs []occurrence
}

type occurrence struct {
	ms    int64
	run   string
	files map[string]bool
}

// add merges one event into the group: the longest ancestry, the longest
// untruncated reason, the first five lines, the last time, and a new
// occurrence unless another input reported it within 1 s of one counted.
func (g *denialGroup) add(ev *denial.Event, run string) {
	d := g.d
	if len(ev.Ancestors) > len(d.Ancestors) {
		d.Ancestors = ev.Ancestors
	}
	if d.Reason == "" || (!ev.Truncated && len(ev.Reason) > len(d.Reason)) {
		d.Reason = ev.Reason
	}
	if ev.Class == 4002 && ev.Binary != "" {
		d.Forward = true
	}
	if len(d.Lines) < 5 {
		d.Lines = append(d.Lines, fmt.Sprintf("%s:%d", ev.File, ev.Line))
	}
	d.lastMS = max(d.lastMS, ev.TimeMS)
	if !g.mergeOccurrence(ev, run) {
		g.occs = append(g.occs, occurrence{ms: ev.TimeMS, run: run, files: map[string]bool{ev.File: true}})
	}
	d.Count = len(g.occs)
}

// mergeOccurrence counts ev as an occurrence already seen: one within 1 s
// that another input of the same run reported (two runs are two sandboxes:
// their events are never one).
func (g *denialGroup) mergeOccurrence(ev *denial.Event, run string) bool {
	for j := len(g.occs) - 1; j >= 0 && ev.TimeMS-g.occs[j].ms <= 1000; j-- {
		if g.occs[j].run == run && !g.occs[j].files[ev.File] && ev.TimeMS-g.occs[j].ms >= -1000 {
			g.occs[j].files[ev.File] = true
			return true
		}
	}
	return false
}

// finish completes a grouped denial: the binary and ancestors a binary
// reason names, the newer wording of "no matching policy", queries
// scrubbed, and the first and last time seen.
func (d *Denial) finish() {
	if d.Kind == denial.KindBinary {
		if b, _, anc := denial.BinaryReason(d.Reason); b != "" {
			if d.Binary == "" {
				d.Binary = b
			}
			if len(d.Ancestors) == 0 {
				d.Ancestors = anc
			}
		}
	}
	if d.Reason == "no matching policy" && d.Host != "" {
		// The docs' older wording (docs/observability/logging.mdx:119,192
		// @v0.0.111) of the Rego reason (sandbox-policy.rego:43).
		d.Reason = fmt.Sprintf("endpoint %s is not allowed by any policy", hostPort(d.Host, d.Port))
	}
	d.Reason = scrubQuery(d.Reason)
	d.FirstSeen, d.LastSeen = stamp(d.firstMS), stamp(d.lastMS)
}

// sortDenials orders denials by host, port, path, method, kind, binary and
// policy.
func sortDenials(out []*Denial) {
	slices.SortFunc(out, func(a, b *Denial) int {
		return cmp.Or(
			cmp.Compare(a.Host, b.Host),
			cmp.Compare(a.Port, b.Port),
			cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Method, b.Method),
			cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Binary, b.Binary),
			cmp.Compare(a.Policy, b.Policy),
		)
	})
}

// hostPort is "host:port", the host bracketed when it is an IPv6 literal.
func hostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}

func stamp(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// scrubQuery removes anything after a '?' up to the next space: reasons
// quote request paths, and v0.0.83 logged forward paths with their query.
func scrubQuery(s string) string {
	if !strings.Contains(s, "?") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '?' {
			b.WriteByte(s[i])
			continue
		}
		b.WriteString("?[query removed]")
		for i+1 < len(s) && s[i+1] != ' ' {
			i++
		}
	}
	return b.String()
}

// newDecider substitutes the job's values (examples for the rest) into a
// copy of p and prepares it for decisions.
func newDecider(p *openshell.Policy, v placeholder.Values, version string) (*decide.Decider, error) {
	vals := placeholder.Examples()
	for k, x := range v {
		vals[k] = x
	}
	cp := p.Clone()
	if _, err := openshell.ApplyPlaceholders(cp, vals); err != nil {
		return nil, err
	}
	return decide.New(cp, version)
}
