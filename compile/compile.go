package compile

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/agentdef/projectfile"
	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/internal/parallel"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// Options control a compilation.
type Options struct {
	// OpenShellVersion is the target OpenShell version (default
	// openshell.DefaultOpenShellVersion).
	OpenShellVersion string
	// Catalog is the capability catalog (default: the built-in one).
	Catalog *policycue.Catalog
	// Values are compile-time placeholder values (--set).
	Values placeholder.Values
	// Provider is the default model provider for agents that name none
	// (default: the runtime's default provider).
	Provider string
	// Checks run on every compiled agent after the policy is built (lint,
	// expectations); their error-severity diagnostics fail the compile.
	Checks []Check
	// Strict makes every warning an error.
	Strict bool
	// SpawnContainment proves every spawn target's policy contained in its
	// parent's (spawns.go); a grant beyond the parent's that the parent
	// does not declare fails the compile. CompileDir, which every bundle
	// is written from, sets it; a caller that compiles to check one
	// agent's change (policy suggest's verification) may leave it off.
	SpawnContainment bool
	// EmitProfiles is the profiles emit mode: the network policies several
	// agents share move into generated provider profiles
	// (emit_profiles.go).
	EmitProfiles bool
	// Workers bounds how many agents are compiled, and how many checks
	// run, at once: 0 means GOMAXPROCS agents and every check at once, 1
	// compiles and checks serially. The output is the same byte for byte
	// whatever the value.
	Workers int

	// timeline records the stages (CompileDir passes its own).
	timeline *timeline
	// projectProfiles are the ids of the project's profiles/*.yaml, for
	// did-you-mean hints on sandbox.providers, and readProfile reads one
	// (providers.go).
	projectProfiles []string
	readProfile     fragmentLoader
	// checksReadAgents is set when the checks read only the Output's
	// OpenShellVersion and Agents (CompileDir's checks): emit may then run
	// beside them.
	checksReadAgents bool
	// catalogRecord is the catalog directory as the manifest records it
	// (bundle.RecordCatalog; CompileDir sets it).
	catalogRecord string
}

// Check inspects the compiled output and reports diagnostics. The checks of
// one compilation may run concurrently with each other: a Check reads out
// and must not modify it.
type Check func(ctx context.Context, out *Output) (agentdef.Diagnostics, error)

// Compiled is one agent's compiled policy and what is known about it.
type Compiled struct {
	Agent    *agentdef.Agent
	Policy   *openshell.Policy
	Tier     policycue.Tier
	Runtime  string
	Provider string
	Spawns   []string
	Skills   []string
	Outputs  []string
	// Placeholders are the names still open after compile-time substitution.
	Placeholders []string
	// Sources are the input files this agent's policy derives from.
	Sources []string
	// Baseline lists the network policy keys that hold only the runtime's
	// model API: the agent's own channel, which every tier needs.
	Baseline []string
	// TierWhy lists what raised the agent above read-only, highest tier
	// first, each at its line; the first entry decided the tier.
	TierWhy []TierReason
	// RuntimeTools are the agent's tool rules as its runtime gets them:
	// pre-approved or left out, and why (runtime_tools.go).
	RuntimeTools []RuntimeTool
	// Providers are the provider profiles the agent names, in attachment
	// order, and Composed its policy composed with their layers: what
	// OpenShell enforces, and what the checks see (Effective).
	Providers []ProviderLayer
	Composed  *openshell.Policy
	// Unheld are the agent's expectations that do not hold, when the
	// compile was asked to keep them (ProjectOptions.KeepUnheld) rather
	// than fail on them.
	Unheld agentdef.Diagnostics

	catalog *policycue.Catalog
	// doc and docErr are Marshal's result on Policy, computed by the
	// worker that compiled the agent; emit writes doc.
	doc    []byte
	docErr error
}

// Output is a compiled project: the policies, the manifest and the
// diagnostics (warnings) collected on the way.
type Output struct {
	OpenShellVersion string
	Agents           map[string]*Compiled
	Manifest         *bundle.Manifest
	// Files maps output file names (relative to the policies directory) to
	// their exact bytes.
	Files    map[string][]byte
	Warnings agentdef.Diagnostics
	// Stages is when each stage of the compilation ran, by start: for
	// `policy compile --timings`, never part of the bundle.
	Stages []Stage
	// catalogRecord is Options.catalogRecord, for the manifest.
	catalogRecord string
}

// AgentNames returns the compiled agent names, sorted.
func (o *Output) AgentNames() []string {
	names := make([]string, 0, len(o.Agents))
	for n := range o.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ErrCompile wraps the diagnostics of a failed compilation.
var ErrCompile = errors.New("compilation failed")

// Compile turns a loaded project into one OpenShell policy per agent. The
// returned error is a Diagnostics (wrapped with ErrCompile) listing every
// problem with its position. fsys is the project root the policy fragments
// are read from; pass one that cannot escape the project, such as
// os.Root.FS(). Fragments that are or lie under a symbolic link are refused.
func Compile(ctx context.Context, proj *agentdef.Project, fsys fs.FS, opts Options) (*Output, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	out := &Output{OpenShellVersion: opts.OpenShellVersion, Agents: map[string]*Compiled{}, Files: map[string][]byte{}, catalogRecord: opts.catalogRecord}
	var diags agentdef.Diagnostics
	diags = append(diags, proj.Warnings...)
	inputs := newInputFiles(fsys, proj.Files)
	opts.projectProfiles, opts.readProfile = projectProfiles(fsys, inputs.read)
	diags = append(diags, compileAgents(proj, opts, inputs.read, out)...)
	if opts.SpawnContainment {
		diags = append(diags, spawnContainment(proj, out, opts)...)
	}
	diags = opts.strict(diags)
	if opts.EmitProfiles && diags.Err() == nil {
		if err := splitSharedProfiles(out); err != nil {
			return nil, err
		}
	}
	// With errors, the agents that did compile still go through the checks,
	// so one run reports every problem of every file; nothing is returned.
	if err := diags.Err(); err != nil && len(out.Agents) == 0 {
		return nil, compileError(diags, out)
	}
	ds, err := emitAndCheck(ctx, out, inputs.sums, opts)
	if err != nil {
		return nil, err
	}
	diags = opts.strict(append(diags, ds...))
	if err := diags.Err(); err != nil {
		return nil, compileError(diags, out)
	}
	out.Warnings = diags
	out.Stages = opts.timeline.list()
	return out, nil
}

// setDefaults fills in the options left zero: the default OpenShell
// version, a timeline of its own and the built-in catalog.
func (o *Options) setDefaults() error {
	o.OpenShellVersion = cmp.Or(o.OpenShellVersion, openshell.DefaultOpenShellVersion)
	if o.timeline == nil {
		o.timeline = newTimeline()
	}
	if o.Catalog != nil {
		return nil
	}
	var err error
	o.Catalog, err = policycue.LoadCatalog(nil, "")
	return err
}

// strict makes every warning of ds an error when the options say so.
func (o *Options) strict(ds agentdef.Diagnostics) agentdef.Diagnostics {
	if o.Strict {
		return ds.Strict()
	}
	return ds
}

// inputFiles reads the project's files for the compile and records the
// SHA-256 of each: policy fragments and provider profiles are inputs too,
// and the manifest pins them with the agent and skill files the loader
// read. The compile workers read concurrently.
type inputFiles struct {
	fsys fs.FS
	mu   sync.Mutex
	// sums maps every input file read to its SHA-256 (hex).
	sums map[string]string
}

// newInputFiles starts from the files the loader read (path -> SHA-256).
func newInputFiles(fsys fs.FS, loaded map[string]string) *inputFiles {
	sums := map[string]string{}
	maps.Copy(sums, loaded)
	return &inputFiles{fsys: fsys, sums: sums}
}

// read reads the project file name, refusing symbolic links
// (projectfile.ReadNoLinks), and records its digest.
func (f *inputFiles) read(name string) ([]byte, error) {
	data, err := projectfile.ReadNoLinks(f.fsys, name)
	if err != nil {
		return data, err
	}
	sum := bundle.SHA256Hex(data)
	f.mu.Lock()
	f.sums[name] = sum
	f.mu.Unlock()
	return data, nil
}

// compileAgents compiles the project's agents into out.Agents and returns
// their diagnostics. Agents compile independently (the project and the
// catalog are only read), so they compile, and their policies are
// marshalled, concurrently; results are collected in the project's order,
// which keeps diagnostics deterministic.
func compileAgents(proj *agentdef.Project, opts Options, load fragmentLoader, out *Output) agentdef.Diagnostics {
	type result struct {
		c     *Compiled
		diags agentdef.Diagnostics
	}
	results := make([]result, len(proj.Agents))
	endCompile := opts.timeline.begin("compile")
	parallel.ForEach(len(proj.Agents), opts.Workers, func(i int) {
		c, ds := compileAgent(proj, proj.Agents[i], opts, load)
		if c != nil {
			c.doc, c.docErr = openshell.Marshal(c.Policy, header(c, opts.OpenShellVersion))
		}
		results[i] = result{c, ds}
	})
	endCompile()
	var diags agentdef.Diagnostics
	for i, a := range proj.Agents {
		diags = append(diags, results[i].diags...)
		if results[i].c != nil {
			out.Agents[a.Name] = results[i].c
		}
	}
	return diags
}

// emitAndCheck emits out's files (files are the inputs' digests) and runs
// the checks on it. When the checks read only out.Agents, which emit does
// not write (Options.checksReadAgents), the manifest and provenance encode
// while the checks run; an emit error wins over a check's.
func emitAndCheck(ctx context.Context, out *Output, files map[string]string, opts Options) (agentdef.Diagnostics, error) {
	emit := func() error {
		defer opts.timeline.begin("emit")()
		return out.emit(files)
	}
	if !opts.checksReadAgents || opts.Workers == 1 {
		if err := emit(); err != nil {
			return nil, err
		}
		return runChecks(ctx, out, opts.Checks, opts.Workers)
	}
	var emitErr error
	var wg sync.WaitGroup
	wg.Go(func() { emitErr = emit() })
	ds, err := runChecks(ctx, out, opts.Checks, opts.Workers)
	wg.Wait()
	if emitErr != nil {
		return nil, emitErr
	}
	return ds, err
}

// runChecks runs the checks on out, up to workers at once (all of them
// when workers is 0), and returns their diagnostics in the order of checks; the first error in
// that order wins. The checks are independent of each other, so a long one
// (lint) overlaps the others (validate, expectations) instead of waiting.
func runChecks(ctx context.Context, out *Output, checks []Check, workers int) (agentdef.Diagnostics, error) {
	type result struct {
		diags agentdef.Diagnostics
		err   error
	}
	results := make([]result, len(checks))
	if workers <= 0 {
		workers = len(checks)
	}
	parallel.ForEach(len(checks), workers, func(i int) {
		ds, err := checks[i](ctx, out)
		results[i] = result{ds, err}
	})
	var diags agentdef.Diagnostics
	for _, r := range results {
		if r.err != nil {
			return nil, r.err
		}
		diags = append(diags, r.diags...)
	}
	return diags, nil
}

func compileError(ds agentdef.Diagnostics, out *Output) error {
	sortDiagnostics(ds)
	return &Failure{Diagnostics: ds, Agents: out.AgentNames()}
}

func sortDiagnostics(ds agentdef.Diagnostics) {
	slices.SortStableFunc(ds, func(a, b agentdef.Diagnostic) int { return a.Pos.Compare(b.Pos) })
}

func compileAgent(proj *agentdef.Project, a *agentdef.Agent, opts Options, load fragmentLoader) (*Compiled, agentdef.Diagnostics) {
	b := newBuilder(opts.Catalog, a)
	b.projectAgents = proj.Defined()
	b.version = opts.OpenShellVersion
	b.values = opts.Values
	if !b.selectRuntime(proj, a, opts) {
		return nil, b.diags
	}
	b.runtimeBaseline()
	if a.ToolsOmitted {
		b.warnf(a.ToolsPos, "tools", "declare tools explicitly; the sandbox grants only what they imply",
			"agent %s lists no tools (inherits all): only the runtime baseline is granted", a.Name)
	}
	for _, r := range a.Tools {
		b.tool(r, "tools")
	}
	skills := b.skills(proj, a)
	b.sandbox(a.Sandbox, dirOf(a.File), load)
	for _, s := range skills {
		b.sandbox(s.Sandbox, s.Dir, load)
		if s.PolicyFile != "" {
			b.fragment(s.PolicyFile, s.PolicyFilePos, s.Dir, load)
		}
	}
	b.resolveWrites()
	b.mcpEndpoints(skills)
	nps := b.network()
	tier := b.tier()
	if b.diags.Err() != nil {
		return nil, b.diags
	}
	pol := &openshell.Policy{
		Version:          1,
		FilesystemPolicy: b.filesystem(tier),
		Landlock:         &openshell.Landlock{Compatibility: openshell.LandlockBestEffort},
		Process:          &openshell.Process{RunAsUser: "sandbox", RunAsGroup: "sandbox"},
		NetworkPolicies:  nps,
	}
	open, err := openshell.ApplyPlaceholders(pol, opts.Values)
	if err != nil {
		b.errorf(a.NamePos, "", "check the placeholders of the agent's declarations and --set values", "%v", err)
		return nil, b.diags
	}
	b.selfCheck(pol)
	composed, layers := b.providers(providerRefs(a, skills), pol, tier, opts.readProfile, opts.projectProfiles)
	if b.diags.Err() != nil {
		return nil, b.diags
	}
	c := &Compiled{
		Agent: a, Policy: pol, Tier: tier, Runtime: b.runtime, Provider: b.provider,
		Placeholders: open, catalog: opts.Catalog, Baseline: b.baselineKeys,
		Providers: layers, Composed: composed,
	}
	b.summarize(c, skills)
	c.TierWhy = tierWhy(b.needs, tier)
	c.RuntimeTools = b.runtimeTools(tier)
	b.diags = append(b.diags, egressChecks(c, skills)...)
	c.Sources = providerSources(sourceFiles(a, skills, pol), layers)
	return c, b.diags
}

// selectRuntime sets the agent's runtime (its format) and model provider;
// false when the catalog has either not.
func (b *builder) selectRuntime(proj *agentdef.Project, a *agentdef.Agent, opts Options) bool {
	b.runtime = string(a.Format)
	if _, ok := opts.Catalog.Runtimes[b.runtime]; !ok {
		b.errorf(a.NamePos, "", "", "runtime %q is not in the catalog", b.runtime)
		return false
	}
	var fromModel bool
	b.provider, fromModel = provider(a, proj, opts, b)
	if _, ok := opts.Catalog.Runtimes[b.runtime].Providers[b.provider]; !ok {
		known := "known providers: " + strings.Join(providerNames(opts.Catalog, b.runtime), ", ")
		if !fromModel {
			// fullsend's own sandbox.provider (or --provider): a typo.
			b.errorf(providerPos(a), "sandbox.provider", known, "runtime %s has no model provider %q", b.runtime, b.provider)
			return false
		}
		// The runtime's own model id names a provider the catalog has no
		// baseline for (OpenCode ships dozens: github-copilot, openrouter,
		// opencode Zen...): the file is valid, the policy just cannot
		// reach that model API until someone says where it is.
		b.warnf(providerPos(a), "model",
			"declare the provider's API host in sandbox.endpoints, or add the provider to the catalog with --catalog ("+known+")",
			"runtime %s has no model provider %q in the catalog: the policy grants no model API, so the agent cannot reach its model", b.runtime, b.provider)
	}
	return true
}

// skills resolves the agent's skills and applies their allowed tools.
func (b *builder) skills(proj *agentdef.Project, a *agentdef.Agent) []*agentdef.Skill {
	var skills []*agentdef.Skill
	for _, ref := range a.Skills {
		s, ok := proj.Skills[ref.Name]
		if !ok {
			continue // checkReferences warns: the runtime loads the agent without it
		}
		skills = append(skills, s)
		for _, r := range s.AllowedTools {
			b.tool(r, "skill "+s.Name+" allowed-tools")
		}
	}
	return skills
}

// summarize records on c what the agent spawns, its skills and its
// outputs, each sorted (spawns deduplicated).
func (b *builder) summarize(c *Compiled, skills []*agentdef.Skill) {
	seen := map[string]bool{}
	for _, s := range b.spawns {
		if !seen[s.Name] {
			seen[s.Name] = true
			c.Spawns = append(c.Spawns, s.Name)
		}
	}
	sort.Strings(c.Spawns)
	for _, s := range skills {
		c.Skills = append(c.Skills, s.Name)
	}
	sort.Strings(c.Skills)
	for _, o := range b.outputs {
		c.Outputs = append(c.Outputs, o.Path)
	}
	sort.Strings(c.Outputs)
}

// provider picks the model provider: the agent's sandbox.provider, then one
// of its skills', then the model id (a Vertex model id carries "@", an
// OpenCode model is "provider/model"), then --provider, then the runtime's
// default. fromModel reports that the model id, the runtime's own field,
// named it.
func provider(a *agentdef.Agent, proj *agentdef.Project, opts Options, b *builder) (name string, fromModel bool) {
	if p := declaredProvider(a, proj); p != "" {
		return p, false
	}
	if p, ok := modelProvider(a); ok {
		return p, true
	}
	return cmp.Or(opts.Provider, b.cat.Runtimes[b.runtime].DefaultProvider), false
}

// declaredProvider is the agent's sandbox.provider, else the first one its
// skills declare; "" when none does.
func declaredProvider(a *agentdef.Agent, proj *agentdef.Project) string {
	if a.Sandbox != nil && a.Sandbox.Provider != "" {
		return a.Sandbox.Provider
	}
	for _, ref := range a.Skills {
		if s := proj.Skills[ref.Name]; s != nil && s.Sandbox != nil && s.Sandbox.Provider != "" {
			return s.Sandbox.Provider
		}
	}
	return ""
}

// modelProvider is the provider the agent's model id names, in its
// runtime's syntax: Claude Code's Vertex and Bedrock ids (inferProvider),
// OpenCode's "provider/model".
func modelProvider(a *agentdef.Agent) (string, bool) {
	switch a.Format {
	case agentdef.FormatClaude:
		p := inferProvider(a.Model)
		return p, p != ""
	case agentdef.FormatOpenCode:
		p, _, ok := strings.Cut(a.Model, "/")
		return p, ok
	}
	return "", false
}

func providerPos(a *agentdef.Agent) agentdef.Pos {
	if a.Sandbox != nil && a.Sandbox.ProviderPos.Line > 0 {
		return a.Sandbox.ProviderPos
	}
	if a.ModelPos.Line > 0 {
		return a.ModelPos
	}
	return a.NamePos
}

func providerNames(c *policycue.Catalog, runtime string) []string {
	var names []string
	for n := range c.Runtimes[runtime].Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// sourceFiles lists the input files a policy derives from: the agent, its
// skills, and any file named in provenance.
func sourceFiles(a *agentdef.Agent, skills []*agentdef.Skill, p *openshell.Policy) []string {
	set := map[string]bool{a.File: true}
	for _, s := range skills {
		set[s.File] = true
	}
	for _, srcs := range p.Provenance() {
		for _, s := range srcs {
			if s.File != "" && s.File != "catalog" {
				set[s.File] = true
			}
		}
	}
	files := make([]string, 0, len(set))
	for f := range set {
		files = append(files, f)
	}
	sort.Strings(files)
	return files
}

func dirOf(file string) string {
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		return file[:i]
	}
	return "."
}
