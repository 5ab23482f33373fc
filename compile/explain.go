package compile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// TierReason is one thing an agent holds that needs a tier above
// read-only, at the line that grants it.
type TierReason struct {
	Tier policycue.Tier `json:"tier"`
	What string         `json:"what"`
	Pos  agentdef.Pos   `json:"pos"`
}

// String renders the reason as `file:line: what (needs tier T)`.
func (r TierReason) String() string {
	return fmt.Sprintf("%s: %s (needs tier %s)", r.Pos, r.What, r.Tier)
}

// tierWhy orders the needs above read-only by tier (highest first), then
// position; needs at the same line and tier are listed once.
func tierWhy(needs []tierNeed, tier policycue.Tier) []TierReason {
	var out []TierReason
	seen := map[string]bool{}
	for _, n := range needs {
		if n.tier.Rank() <= policycue.TierReadOnly.Rank() || n.tier.Rank() > tier.Rank() {
			continue
		}
		key := string(n.tier) + "\x00" + n.pos.String() + "\x00" + n.what
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, TierReason{Tier: n.tier, What: n.what, Pos: n.pos})
	}
	slices.SortStableFunc(out, func(a, b TierReason) int {
		return cmp.Or(cmp.Compare(b.Tier.Rank(), a.Tier.Rank()), a.Pos.Compare(b.Pos))
	})
	return out
}

// Explanation lists every element of an agent's policy with the source
// lines that caused it.
type Explanation struct {
	Agent string `json:"agent"`
	File  string `json:"file"`
	Tier  string `json:"tier"`
	// TierDecidedBy is the line that decided the tier (the first of TierWhy),
	// or the agent's name line when nothing needs more than read-only.
	TierDecidedBy agentdef.Pos `json:"tier_decided_by"`
	// TierReason says, in words, why the agent got its tier.
	TierReason string `json:"tier_reason"`
	// TierWhy lists everything that needs a tier above read-only.
	TierWhy []TierReason `json:"tier_why"`
	// TierDecides says what else the tier decides beyond the network
	// policy: the workdir's write access, the runtime's own flags and the
	// forge proxy's access.
	TierDecides []string `json:"tier_decides"`
	// RuntimeTools are the agent's tool rules as its runtime gets them:
	// pre-approved, or left out and why.
	RuntimeTools []RuntimeTool `json:"runtime_tools"`
	Runtime      string        `json:"runtime"`
	Provider     string        `json:"provider"`
	Spawns       []string      `json:"spawns,omitempty"`
	// SpawnWidening is what the spawned agents may hold beyond this
	// agent's policy, as its sandbox.spawn-widening declares it; every
	// other grant of theirs is proved contained in this policy.
	SpawnWidening []string            `json:"spawn_widening,omitempty"`
	Placeholders  []string            `json:"placeholders,omitempty"`
	Endpoints     []ExplainedEndpoint `json:"endpoints"`
	ReadOnly      []ExplainedItem     `json:"read_only"`
	ReadWrite     []ExplainedItem     `json:"read_write"`
	// FailingExpectations are the agent's policy-test expectations that
	// do not hold (compile fails on them; explain still explains), each
	// with its line and reason, citing the provider layer that decided.
	FailingExpectations agentdef.Diagnostics `json:"failing_expectations,omitempty"`
}

// ExplainedEndpoint is one endpoint with its rules and binaries.
type ExplainedEndpoint struct {
	Policy   string          `json:"policy"`
	Host     string          `json:"host"`
	Port     int             `json:"port"`
	Protocol string          `json:"protocol"`
	Access   string          `json:"access,omitempty"`
	From     []bundle.Source `json:"from"`
	// Layer cites the provider layer the endpoint belongs to
	// (profile.Layer.Cite), "" for the agent's own grants.
	Layer    string          `json:"layer,omitempty"`
	Rules    []ExplainedItem `json:"rules,omitempty"`
	Binaries []ExplainedItem `json:"binaries"`
}

// ExplainedItem is one rule, binary or path with its sources.
type ExplainedItem struct {
	Value string          `json:"value"`
	From  []bundle.Source `json:"from"`
}

// Explain builds the explanation of a compiled agent. Its network section is
// the effective policy: the agent's own grants and the layers of the
// provider profiles it attaches (`_provider_<name>`, each element with its
// profile file and line), as the gateway composes them.
func Explain(c *Compiled) *Explanation {
	p := c.Effective()
	e := &Explanation{
		Agent: c.Agent.Name, File: c.Agent.File, Tier: string(c.Tier), Runtime: c.Runtime,
		Provider: c.Provider, Spawns: c.Spawns, SpawnWidening: Widenings(c.Agent), Placeholders: c.Placeholders,
		TierWhy: c.TierWhy, RuntimeTools: c.RuntimeTools, FailingExpectations: c.Unheld,
	}
	if e.RuntimeTools == nil {
		e.RuntimeTools = []RuntimeTool{}
	}
	if e.TierWhy == nil {
		e.TierWhy = []TierReason{}
	}
	e.TierDecidedBy, e.TierReason = tierDecision(c)
	e.TierDecides = tierDecides(c)
	for _, key := range p.PolicyKeys() {
		eps := explainPolicy(key, p.NetworkPolicies[key])
		if l, ok := c.layerOf(key); ok {
			for i := range eps {
				eps[i].Layer = l.cite(p, fmt.Sprintf("network_policies.%s.endpoints[%d]", key, i))
			}
		}
		e.Endpoints = append(e.Endpoints, eps...)
	}
	if fs := p.FilesystemPolicy; fs != nil {
		e.ReadOnly = explainPaths(fs, fs.ReadOnly)
		e.ReadWrite = explainPaths(fs, fs.ReadWrite)
		if fs.IncludeWorkdir {
			e.ReadWrite = append(e.ReadWrite, ExplainedItem{Value: "/sandbox (include_workdir)",
				From: []bundle.Source{{File: c.Agent.File, Line: c.Agent.NamePos.Line, Reason: "tier full"}}})
		}
	}
	return e
}

// explainPolicy explains the endpoints of the network policy key, each with
// its rules and the policy's binaries.
func explainPolicy(key string, np openshell.NetworkPolicy) []ExplainedEndpoint {
	var out []ExplainedEndpoint
	for _, ep := range np.Endpoints {
		x := ExplainedEndpoint{Policy: key, Host: ep.Host, Port: ep.Port, Protocol: ep.Protocol, Access: ep.Access, From: ep.From}
		for _, r := range ep.Rules {
			x.Rules = append(x.Rules, ExplainedItem{Value: explainRule(r.Allow), From: r.From})
		}
		for _, b := range np.Binaries {
			x.Binaries = append(x.Binaries, ExplainedItem{Value: b.Path, From: b.From})
		}
		out = append(out, x)
	}
	return out
}

// explainPaths explains filesystem paths with their sources.
func explainPaths(fs *openshell.FilesystemPolicy, paths []string) []ExplainedItem {
	var out []ExplainedItem
	for _, path := range paths {
		out = append(out, ExplainedItem{Value: path, From: fs.Sources[path]})
	}
	return out
}

// explainRule renders one allow rule in its protocol's words: REST
// `METHOD /path ?query`, SQL `sql COMMAND`, GraphQL `graphql TYPE NAME
// fields a,b` (operation_type, operation_name, fields: L7AllowDef,
// crates/openshell-policy/src/lib.rs:320-384 @ v0.0.111), JSON-RPC and MCP
// `METHOD tool T`. A rule of no known shape is shown as its fields.
func explainRule(m openshell.Match) string {
	var words []string
	switch {
	case graphQLKey(m) != "": // an operation type, name or fields
		words = graphQLWords(m)
	case m.Command != "":
		words = []string{"sql", m.Command}
	default:
		words = requestWords(m)
	}
	words = slices.DeleteFunc(words, func(w string) bool { return w == "" })
	if len(words) == 0 {
		return "(any request)"
	}
	return strings.Join(words, " ")
}

// graphQLWords are a GraphQL rule's words: `graphql TYPE NAME fields a,b`,
// an unset type or name said to match any.
func graphQLWords(m openshell.Match) []string {
	typ := m.OperationType
	if typ == "" || typ == "*" {
		typ = "any operation"
	}
	words := []string{"graphql", typ, cmp.Or(m.OperationName, "(any name)")}
	if len(m.Fields) > 0 {
		words = append(words, "fields "+strings.Join(m.Fields, ","))
	}
	return words
}

// requestWords are a REST, JSON-RPC or MCP rule's words, any of them
// empty: `METHOD /path ?query tool T params a,b`.
func requestWords(m openshell.Match) []string {
	words := []string{m.Method, m.Path}
	if q := queryKey(m.Query); q != "" {
		words = append(words, "?"+q)
	}
	if m.Tool != nil {
		tool := m.Tool.Glob
		if len(m.Tool.Any) > 0 {
			tool = "any of " + strings.Join(m.Tool.Any, ",")
		}
		words = append(words, "tool "+tool)
	}
	if len(m.Params) > 0 {
		words = append(words, "params "+strings.Join(slices.Sorted(maps.Keys(m.Params)), ","))
	}
	return words
}

// tierDecides lists what the tier decides besides the network policy, from
// the compiled agent: whether the workdir is writable (and what is), the
// runtime's flags for the tier, and the forge proxy's access (write for
// the full tier only: forge.TierFromManifest).
func tierDecides(c *Compiled) []string {
	var out []string
	if fs := c.Policy.FilesystemPolicy; fs != nil {
		out = append(out, workdirAccess(fs))
	}
	if c.catalog != nil {
		flags, _ := runtimeFlags(c)
		if f := flags[c.Runtime]; len(f) > 0 {
			out = append(out, fmt.Sprintf("runtime: %s runs with %s", c.Runtime, strings.Join(f, " ")))
		}
	}
	if c.Tier == policycue.TierFull {
		return append(out, "forge proxy: read and write (comment, label, push where the policy allows)")
	}
	return append(out, "forge proxy: read only (writes are refused whatever the policy allows)", outputAdvice(c))
}

// outputAdvice says what writing a declared output needs below the full
// tier, and what it does not.
func outputAdvice(c *Compiled) string {
	const not = "; it does not need tier full, sandbox.filesystem.read_write or the forge proxy's write access"
	var scoped []string
	for _, t := range c.RuntimeTools {
		if t.Output != "" {
			scoped = append(scoped, t.Approved)
		}
	}
	if len(scoped) > 0 {
		return fmt.Sprintf("outputs: the agent writes its declared outputs with %s: Landlock read_write on those paths only, and the runtime pre-approves writes there and nothing else%s",
			strings.Join(scoped, ", "), not)
	}
	return "outputs: to write a declared output, list it in sandbox.outputs (a directory under /sandbox or /tmp) and scope a write tool to it, e.g. Write(//sandbox/out/**): that needs tier network (Landlock read_write on the output only, the runtime pre-approving writes there only)" + not
}

// workdirAccess says whether the workdir is writable and, when it is not,
// what is.
func workdirAccess(fs *openshell.FilesystemPolicy) string {
	if fs.IncludeWorkdir {
		return "workdir: /sandbox is writable (include_workdir)"
	}
	w := "workdir: /sandbox is read-only"
	if len(fs.ReadWrite) > 0 {
		w += "; writable: " + strings.Join(fs.ReadWrite, ", ")
	}
	return w
}

// tierDecision is the line that decided c's tier and why, in words.
func tierDecision(c *Compiled) (agentdef.Pos, string) {
	if len(c.TierWhy) > 0 {
		r := c.TierWhy[0]
		why := fmt.Sprintf("%s needs tier %s", r.What, r.Tier)
		if n := len(c.TierWhy) - 1; n > 0 {
			why += fmt.Sprintf(" (and %d more below)", n)
		}
		return r.Pos, why
	}
	at := c.Agent.NamePos
	if c.Agent.ToolsPos.Line > 0 {
		at = c.Agent.ToolsPos
	}
	return at, "nothing the agent holds needs more than read-only: its tools only read, and its egress is the model API"
}

// String renders the explanation as an indented text report. It starts
// with the tier and the line that decided it.
func (e *Explanation) String() string {
	var b strings.Builder
	e.writeAgent(&b)
	if len(e.FailingExpectations) > 0 {
		b.WriteString("\nfailing expectations (policy compile fails until they hold)\n")
		for _, d := range e.FailingExpectations {
			fmt.Fprintf(&b, "  %s\n", d)
		}
	}
	b.WriteString("\nnetwork\n")
	for _, ep := range e.Endpoints {
		ep.write(&b)
	}
	b.WriteString("\nfilesystem\n")
	for _, group := range []struct {
		name  string
		items []ExplainedItem
	}{{"read-only", e.ReadOnly}, {"read-write", e.ReadWrite}} {
		for _, it := range group.items {
			fmt.Fprintf(&b, "  %-10s %s\n", group.name, it.Value)
			writeFrom(&b, "      ", it.From)
		}
	}
	return b.String()
}

// writeAgent writes the report's head: the tier and the line that decided
// it, the agent, what else the tier decides and why the agent has it,
// what it may spawn and its open placeholders.
func (e *Explanation) writeAgent(b *strings.Builder) {
	fmt.Fprintf(b, "tier %s, decided by %s: %s\n", e.Tier, e.TierDecidedBy, e.TierReason)
	fmt.Fprintf(b, "agent %s (%s)\n  runtime %s via %s\n", e.Agent, e.File, e.Runtime, e.Provider)
	if len(e.TierDecides) > 0 {
		fmt.Fprintf(b, "  tier %s also decides:\n", e.Tier)
		for _, d := range e.TierDecides {
			fmt.Fprintf(b, "    %s\n", d)
		}
	}
	e.writeRuntimeTools(b)
	if len(e.TierWhy) > 1 {
		b.WriteString("  why this tier:\n")
		for _, r := range e.TierWhy {
			fmt.Fprintf(b, "    %s\n", r)
		}
	}
	if len(e.Spawns) > 0 {
		fmt.Fprintf(b, "  may spawn: %s\n", strings.Join(e.Spawns, ", "))
	}
	for _, w := range e.SpawnWidening {
		fmt.Fprintf(b, "  declared spawn widening (beyond this policy): %s\n", w)
	}
	if len(e.Placeholders) > 0 {
		fmt.Fprintf(b, "  open placeholders: %s\n", strings.Join(e.Placeholders, ", "))
	}
}

// writeRuntimeTools lists the tool rules the runtime pre-approves and
// those it leaves out, each with its line and why.
func (e *Explanation) writeRuntimeTools(b *strings.Builder) {
	if len(e.RuntimeTools) == 0 {
		return
	}
	b.WriteString("  runtime tools (only what the agent declares):\n")
	for _, t := range e.RuntimeTools {
		verb := "pre-approved " + t.Approved
		if t.Approved == "" {
			verb = "left out " + t.Rule
		}
		fmt.Fprintf(b, "    %s  <- %s (%s)\n", verb, t.Pos, t.Why)
	}
}

// write writes the endpoint, its rules and its binaries, each with its
// sources.
func (ep ExplainedEndpoint) write(b *strings.Builder) {
	fmt.Fprintf(b, "  %s:%d  protocol %s", ep.Host, ep.Port, ep.Protocol)
	if ep.Access != "" {
		fmt.Fprintf(b, ", access %s", ep.Access)
	}
	fmt.Fprintf(b, "  [network_policies.%s]\n", ep.Policy)
	if ep.Layer != "" {
		fmt.Fprintf(b, "      in %s\n", ep.Layer)
	}
	writeFrom(b, "      ", ep.From)
	for _, r := range ep.Rules {
		fmt.Fprintf(b, "    allow %s\n", r.Value)
		writeFrom(b, "      ", r.From)
	}
	for _, bin := range ep.Binaries {
		fmt.Fprintf(b, "    binary %s\n", bin.Value)
		writeFrom(b, "      ", bin.From)
	}
}

func writeFrom(b *strings.Builder, indent string, from []bundle.Source) {
	for _, s := range from {
		fmt.Fprintf(b, "%s<- %s\n", indent, s)
	}
}
