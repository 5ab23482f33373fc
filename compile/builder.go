package compile

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/internal/didyoumean"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// contribution is one source's claim on an endpoint: what it needs at a
// host:port, with the binaries that need it and where it came from.
type contribution struct {
	host string
	port int
	// path routes requests to the endpoint by path (a GraphQL endpoint at
	// /graphql beside the REST rules of the same host).
	path       string
	protocol   string
	access     string
	rules      []openshell.Rule
	allowedIPs []string
	binaries   []string
	// allowEncodedSlash lets request paths carry %2F (a catalog profile's
	// GitLab endpoint); one contribution that sets it sets it for the
	// merged endpoint.
	allowEncodedSlash bool
	// binFrom adds, per binary, the sources that made it a network binary
	// (the tool rule that allows the command), beyond from.
	binFrom map[string][]bundle.Source
	from    bundle.Source
	// baseline marks the runtime's own model API: it never raises the tier.
	baseline bool
}

// builder accumulates one agent's capabilities from its runtime, tools,
// skills and declarations, remembering the source of each.
type builder struct {
	cat      *policycue.Catalog
	agent    *agentdef.Agent
	runtime  string
	provider string
	// version is the target OpenShell version: gated output is omitted,
	// with a warning, for a release that lacks it.
	version string
	// gated records the profiles already warned about, once per agent.
	gated map[string]bool
	// profilesUsed are the profiles the agent pulled in, for the
	// self-check of their intended requests.
	profilesUsed []profileUse
	// values are the compile-time placeholder values (--set).
	values placeholder.Values

	contribs  []contribution
	readOnly  map[string][]bundle.Source
	readWrite map[string][]bundle.Source
	// netBinaries are the network-capable command binaries the agent's tools
	// allow; declared endpoints without binaries default to them.
	netBinaries map[string][]bundle.Source
	spawns      []agentdef.NameRef
	// projectAgents are the project's agents by name; nil takes every
	// Agent(...) name as one of them.
	projectAgents map[string]*agentdef.Agent
	// mcpIntended are the compiled MCP server uses (mcp.go).
	mcpIntended []mcpIntent
	outputs     []agentdef.PathDecl
	// pendingWrites are the write rules waiting for the declared outputs,
	// and outputWrites those scoped to one (outputs.go).
	pendingWrites []agentdef.ToolRule
	outputWrites  []outputWrite
	// baselineKeys are the network policies that only the runtime's model
	// API baseline contributed to.
	baselineKeys []string
	// needs records why the agent needs each tier, for cap errors.
	needs []tierNeed
	caps  []tierCap

	diags agentdef.Diagnostics
}

type tierNeed struct {
	tier policycue.Tier
	what string
	pos  agentdef.Pos
}

type tierCap struct {
	tier policycue.Tier
	pos  agentdef.Pos
}

func newBuilder(cat *policycue.Catalog, a *agentdef.Agent) *builder {
	return &builder{
		cat:         cat,
		agent:       a,
		readOnly:    map[string][]bundle.Source{},
		readWrite:   map[string][]bundle.Source{},
		netBinaries: map[string][]bundle.Source{},
	}
}

func src(p agentdef.Pos, reason string) bundle.Source {
	return bundle.Source{File: p.File, Line: p.Line, Column: p.Column, Reason: reason}
}

func (b *builder) errorf(p agentdef.Pos, field, hint, format string, args ...any) {
	b.diags = append(b.diags, agentdef.Diagnostic{Pos: p, Severity: agentdef.SeverityError, Field: field, Message: fmt.Sprintf(format, args...), Hint: hint})
}

func (b *builder) warnf(p agentdef.Pos, field, hint, format string, args ...any) {
	b.diags = append(b.diags, agentdef.Diagnostic{Pos: p, Severity: agentdef.SeverityWarning, Field: field, Message: fmt.Sprintf(format, args...), Hint: hint})
}

func (b *builder) need(t policycue.Tier, p agentdef.Pos, format string, args ...any) {
	b.needs = append(b.needs, tierNeed{tier: t, what: fmt.Sprintf(format, args...), pos: p})
}

// runtimeBaseline adds the runtime's binaries' access to its model API, its
// state directories and the catalog's filesystem baseline.
func (b *builder) runtimeBaseline() {
	rt := b.cat.Runtimes[b.runtime]
	at := b.agent.NamePos
	if b.agent.ModelPos.Line > 0 {
		at = b.agent.ModelPos
	}
	prov := rt.Providers[b.provider]
	for _, name := range prov.Profiles {
		reason := fmt.Sprintf("runtime %s via %s (profile %s)", b.runtime, b.provider, name)
		b.addProfile(name, at, reason, rt.Binaries, true)
	}
	for _, p := range b.cat.Filesystem.ReadOnly {
		b.readOnly[p] = append(b.readOnly[p], bundle.Source{File: "catalog", Reason: "filesystem baseline"})
	}
	for _, p := range b.cat.Filesystem.ReadWrite {
		b.readWrite[p] = append(b.readWrite[p], bundle.Source{File: "catalog", Reason: "filesystem baseline"})
	}
	for _, p := range rt.State {
		b.readWrite[p] = append(b.readWrite[p], src(b.agent.NamePos, "runtime "+b.runtime+" state"))
	}
}

// addProfile adds a catalog profile's endpoints. Endpoints that pin their
// own binaries keep them; the others get bins.
func (b *builder) addProfile(name string, at agentdef.Pos, reason string, bins []string, baseline bool) bool {
	prof, ok := b.cat.Profiles[name]
	if !ok {
		return false
	}
	b.profilesUsed = append(b.profilesUsed, profileUse{name: name, at: at, bins: bins})
	for _, ep := range prof.Endpoints {
		if !b.supportsEndpoint(name, ep, at) {
			continue
		}
		c := contribution{
			host: ep.Host, port: ep.Port, path: ep.Path, protocol: ep.Protocol, access: ep.Access,
			allowedIPs: ep.AllowedIPs, binaries: bins, from: src(at, reason), baseline: baseline,
			allowEncodedSlash: ep.AllowEncodedSlash,
		}
		if len(ep.Binaries) > 0 {
			c.binaries = ep.Binaries
		}
		c.rules = b.profileRules(name, ep, at, c.from)
		b.contribs = append(b.contribs, c)
	}
	return true
}

// profileRules are the rules of catalog profile name's endpoint ep, each
// from from; a rule with neither method and path nor operation_type is an
// error at at, and left out.
func (b *builder) profileRules(name string, ep policycue.CatalogEndpoint, at agentdef.Pos, from bundle.Source) []openshell.Rule {
	var rules []openshell.Rule
	for _, r := range ep.Rules {
		if r.OperationType == "" && (r.Method == "" || r.Path == "") {
			b.errorf(at, "sandbox.profiles", "give the catalog rule method and path, or operation_type on a graphql endpoint",
				"profile %s: a rule on %s has neither method and path nor operation_type", name, ep.Host)
			continue
		}
		rules = append(rules, openshell.Rule{Allow: catalogMatch(r), From: []bundle.Source{from}, Reads: r.Reads})
	}
	return rules
}

func catalogMatch(r policycue.CatalogRule) openshell.Match {
	m := openshell.Match{Method: r.Method, Path: r.Path, OperationType: r.OperationType, OperationName: r.OperationName}
	if len(r.Fields) > 0 {
		m.Fields = append([]string(nil), r.Fields...)
	}
	if len(r.Query) > 0 {
		m.Query = map[string]openshell.QueryMatch{}
		for k, v := range r.Query {
			m.Query[k] = openshell.QueryMatch{Glob: v}
		}
	}
	return m
}

// tool applies one tool rule. where names its origin for messages ("tools",
// "skill issue-labels allowed-tools").
func (b *builder) tool(r agentdef.ToolRule, where string) {
	spec, ok := b.cat.Tools[catalogToolName(r.Tool)]
	if !ok {
		b.errorf(r.Pos, where, "add the tool to the catalog with --catalog, or remove it",
			"tool %q is not in the catalog", r.Tool)
		return
	}
	reason := fmt.Sprintf("tool %s", r.Raw)
	switch r.Tool {
	case "Bash", "PowerShell":
		b.bash(r, reason)
		return
	case "WebFetch":
		b.webFetch(r, reason)
		return
	case "Read", "Grep", "Glob", "LS", "LSP", "NotebookRead":
		b.toolDir(b.readOnly, r, reason)
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		// Its tier depends on the declared outputs (resolveWrites).
		b.deferWrite(r)
		return
	case "Agent":
		b.spawn(r)
	}
	b.need(spec.Tier, r.Pos, "%s", reason)
}

// catalogToolName is the catalog's name of a tool: every MCP tool
// (mcp__server__tool) is "mcp".
func catalogToolName(tool string) string {
	if strings.HasPrefix(tool, "mcp") {
		return "mcp"
	}
	return tool
}

// spawn records the agents an Agent(...) rule may start. Only the
// project's own agents get a sandbox of their own (the spawn service
// refuses a manifest that spawns anything else); checkReferences warns
// about the other names.
func (b *builder) spawn(r agentdef.ToolRule) {
	for _, n := range r.Agents {
		if b.projectAgents == nil || b.projectAgents[n] != nil {
			b.spawns = append(b.spawns, agentdef.NameRef{Name: n, Pos: r.Pos})
		}
	}
}

// toolDir opens the directory of a Read/Edit-style rule's path, if it names
// one outside the workdir, in dirs (the read-only or read-write set).
func (b *builder) toolDir(dirs map[string][]bundle.Source, r agentdef.ToolRule, reason string) {
	if r.Path == "" {
		return
	}
	if p, ok := b.toolPath(r); ok {
		dirs[p] = append(dirs[p], src(r.Pos, reason))
	}
}

func (b *builder) bash(r agentdef.ToolRule, reason string) {
	if r.AnyCommand() {
		b.warnf(r.Pos, "tools", "list the commands, e.g. Bash(gh,curl,jq), and declare hosts in sandbox.endpoints",
			"%s allows any command: it implies no egress and needs the full tier", r.Raw)
		b.need(policycue.TierFull, r.Pos, "%s (any command)", reason)
		return
	}
	for _, c := range r.Commands {
		b.command(r, c, reason)
	}
}

// command applies one command of a Bash rule r: its tier, and for a
// network client its binaries and the profiles it implies.
func (b *builder) command(r agentdef.ToolRule, c agentdef.CommandPattern, reason string) {
	if c.Wrapper {
		b.warnf(r.Pos, "tools", "narrow the arguments, or rely on the sandbox: its filesystem and network policy bound what any command can do",
			"%s: %s can run other programs, so this rule allows any command", r.Raw, c.Command)
	}
	bin, ok := b.cat.Binaries[c.Command]
	if !ok {
		// Unknown: it implies nothing, so it raises nothing (fail
		// closed: a typo never buys the full tier), and the runtime does
		// not pre-approve it (runtimeTools); the warning says both.
		hint := "add the command to the binary registry with --catalog (its binaries, hosts and tier)"
		if s := didyoumean.Closest(c.Command, slices.Sorted(maps.Keys(b.cat.Binaries))); s != "" {
			hint = fmt.Sprintf("did you mean %q? or %s", s, hint)
		}
		b.warnf(r.Pos, "tools", hint,
			"command %q is not in the binary registry: it implies no egress and no tier, and the runtime will not pre-approve %s (it is left out of --allowedTools; a write to a declared output is Write(//path/**))", c.Command, r.Raw)
		return
	}
	b.need(bin.Tier, r.Pos, "%s (command %s)", reason, c.Command)
	if !bin.Network {
		return
	}
	for _, p := range bin.Paths {
		b.netBinaries[p] = append(b.netBinaries[p], src(r.Pos, fmt.Sprintf("%s (command %s)", reason, c.Command)))
	}
	for _, prof := range bin.Profiles {
		b.addProfile(prof, r.Pos, fmt.Sprintf("%s: command %s implies profile %s", reason, c.Command, prof), bin.Paths, false)
	}
}

func (b *builder) webFetch(r agentdef.ToolRule, reason string) {
	if r.Domain == "" {
		b.warnf(r.Pos, "tools", "use WebFetch(domain:example.com) for each site the agent reads",
			"%s allows any URL: it implies no egress", r.Raw)
		b.need(policycue.TierNetwork, r.Pos, "%s", reason)
		return
	}
	b.need(policycue.TierNetwork, r.Pos, "%s", reason)
	b.contribs = append(b.contribs, contribution{
		host: r.Domain, port: 443, protocol: openshell.ProtocolREST, access: openshell.AccessReadOnly,
		binaries: b.cat.Runtimes[b.runtime].Binaries, from: src(r.Pos, reason),
	})
}

// toolPath maps a gitignore-style Read/Edit path to the directory the
// sandbox policy must open: `//abs/x/**` -> /abs/x; `~/p` and `/p` and `p`
// live in the workdir (/sandbox), which the baseline already covers.
func (b *builder) toolPath(r agentdef.ToolRule) (string, bool) {
	p := r.Path
	if !strings.HasPrefix(p, "//") {
		// Relative to the home or project: inside /sandbox already.
		return "", false
	}
	p = p[1:]
	// Cut at the first glob: the policy opens the static prefix directory.
	if i := strings.IndexAny(p, "*?["); i >= 0 {
		p = p[:i]
	}
	p = path.Clean(p)
	if p == "/" {
		b.errorf(r.Pos, "tools", "name a directory, for example Read(//opt/data/**)", "%s opens the whole filesystem", r.Raw)
		return "", false
	}
	return p, true
}

// sandbox applies one `sandbox:` declaration (the agent's or a skill's).
func (b *builder) sandbox(s *agentdef.Sandbox, baseDir string, fragments fragmentLoader) {
	if s == nil {
		return
	}
	if s.Tier != "" {
		b.caps = append(b.caps, tierCap{tier: policycue.Tier(s.Tier), pos: s.TierPos})
	}
	bins := b.declaredBinaries()
	for _, p := range s.Profiles {
		b.sandboxProfile(p, bins)
	}
	for _, e := range s.Endpoints {
		b.sandboxEndpoint(e, bins)
	}
	for _, p := range s.ReadOnly {
		b.readOnly[p.Path] = append(b.readOnly[p.Path], src(p.Pos, "sandbox filesystem.read_only"))
	}
	// Outputs first: a read_write directory that is a declared output
	// stays in the network tier.
	b.outputs = append(b.outputs, s.Outputs...)
	for _, p := range s.ReadWrite {
		b.readWrite[p.Path] = append(b.readWrite[p.Path], src(p.Pos, "sandbox filesystem.read_write"))
		if out, ok := outputDir(p.Path, b.outputs); ok {
			b.need(policycue.TierNetwork, p.Pos, "sandbox filesystem.read_write %s (output %s: writable without the full tier)", p.Path, out)
			continue
		}
		b.need(policycue.TierFull, p.Pos, "sandbox filesystem.read_write %s", p.Path)
	}
	if s.PolicyFile != "" {
		b.fragment(s.PolicyFile, s.PolicyFilePos, baseDir, fragments)
	}
}

// outputDir reports whether a read_write directory dir may be writable
// below the full tier: it is a declared output (or lies under one), and it
// is strictly inside the workdir or /tmp, not in a hidden directory there
// (the runtimes' state, /sandbox/.claude, /sandbox/.config, and the
// runner's /sandbox/.fullsend stay read-only). The policy then keeps
// /sandbox read-only (include_workdir false) with dir read-write beside
// it: OpenShell adds one Landlock path-beneath rule per read_only and
// read_write path, and the access of nested rules adds up
// (crates/openshell-supervisor-process/src/sandbox/linux/landlock.rs:
// 218-237 @ v0.0.111), so only dir becomes writable; a missing read_write
// path is created for the sandbox user before (prepare_filesystem,
// crates/openshell-supervisor-process/src/process.rs:2045-2055 @ v0.0.111).
// It returns the output that covers dir.
func outputDir(dir string, outputs []agentdef.PathDecl) (string, bool) {
	inside := false
	for _, root := range []string{"/sandbox/", "/tmp/"} {
		if rest, ok := strings.CutPrefix(dir, root); ok && rest != "" {
			inside = !strings.HasPrefix(rest, ".")
		}
	}
	if !inside {
		return "", false
	}
	for _, o := range outputs {
		if dir == o.Path || strings.HasPrefix(dir, strings.TrimSuffix(o.Path, "/")+"/") {
			return o.Path, true
		}
	}
	return "", false
}

// sandboxProfile applies a declared capability profile to the agent's
// network binaries bins.
func (b *builder) sandboxProfile(p agentdef.NameRef, bins []string) {
	reason := "sandbox profile " + p.Name
	if len(bins) == 0 {
		b.errorf(p.Pos, "sandbox.profiles", "allow a network command such as Bash(curl *) or Bash(gh,...), or pin binaries in the profile",
			"profile %s declared, but no tool of the agent can open connections", p.Name)
		return
	}
	n := len(b.contribs)
	if !b.addProfile(p.Name, p.Pos, reason, bins, false) {
		b.errorf(p.Pos, "sandbox.profiles", "known profiles: "+strings.Join(profileNames(b.cat), ", "), "unknown profile %q", p.Name)
	}
	for i := n; i < len(b.contribs); i++ {
		b.contribs[i].binFrom = b.netBinaries
	}
}

// sandboxEndpoint adds a declared endpoint as a contribution: its own
// binaries, else the agent's network binaries bins.
func (b *builder) sandboxEndpoint(e agentdef.EndpointDecl, bins []string) {
	c := contribution{
		host: e.Host, port: cmp.Or(e.Port, 443), protocol: cmp.Or(e.Protocol, openshell.ProtocolREST), access: e.Access,
		allowedIPs: e.AllowedIPs, from: src(e.Pos, "sandbox endpoint "+e.Host),
	}
	for _, bd := range e.Binaries {
		c.binaries = append(c.binaries, bd.Path)
		if c.binFrom == nil {
			c.binFrom = map[string][]bundle.Source{}
		}
		c.binFrom[bd.Path] = append(c.binFrom[bd.Path], src(bd.Pos, "sandbox endpoint binaries "+bd.Path))
	}
	if b.modelAPIHost(c.host) {
		// The agent's own model API (a regional Vertex host declared by
		// hand): the runtime reaches it, and it raises no tier.
		c.baseline = true
		if len(c.binaries) == 0 {
			c.binaries = b.cat.Runtimes[b.runtime].Binaries
		}
	}
	if len(c.binaries) == 0 {
		c.binaries, c.binFrom = bins, b.netBinaries
	}
	if len(c.binaries) == 0 {
		b.errorf(e.Pos, "sandbox.endpoints", "allow a network command such as Bash(curl *), or list binaries: for the endpoint",
			"endpoint %s:%d declared, but no tool of the agent can open connections", c.host, c.port)
		return
	}
	for _, r := range e.Rules {
		c.rules = append(c.rules, declaredRule(r))
	}
	b.contribs = append(b.contribs, c)
}

// declaredRule converts a sandbox rule declaration to an OpenShell rule.
func declaredRule(r agentdef.RuleDecl) openshell.Rule {
	m := openshell.Match{Method: r.Method, Path: r.Path}
	for k, v := range r.Query {
		if m.Query == nil {
			m.Query = map[string]openshell.QueryMatch{}
		}
		m.Query[k] = openshell.QueryMatch{Glob: v}
	}
	rs := src(r.Pos, fmt.Sprintf("sandbox rule %s %s", r.Method, r.Path))
	m.From = []bundle.Source{rs}
	return openshell.Rule{Allow: m, From: []bundle.Source{rs}}
}

// declaredBinaries returns the binaries declared endpoints default to: the
// agent's network-capable commands, sorted.
func (b *builder) declaredBinaries() []string {
	bins := make([]string, 0, len(b.netBinaries))
	for p := range b.netBinaries {
		bins = append(bins, p)
	}
	sort.Strings(bins)
	return bins
}

func profileNames(c *policycue.Catalog) []string {
	names := make([]string, 0, len(c.Profiles))
	for n := range c.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
