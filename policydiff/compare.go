package policydiff

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/prover"
)

// Options tune a comparison.
type Options struct {
	// Agents restricts the comparison to these agents (all when empty).
	Agents []string
	// Credentials is the credential set the prover and the risk table
	// consider in scope (default prover.DefaultCredentials); endpoints with
	// credential_binding are added per policy.
	Credentials prover.Credentials
	// Registry is the binary registry (default prover.DefaultRegistry).
	Registry *prover.Registry

	// baseVersion and headVersion are the sides' OpenShell targets, which
	// decide where a provider's credential is resolved.
	baseVersion, headVersion string
	// catalogAdded are the org catalog lines the head added.
	catalogAdded []catalogLine
	// basePin and headPin are the sides' fullsend release pins.
	basePin, headPin pin
}

// Compare compares two sides agent by agent.
func Compare(base, head *Side, opts Options) *Result {
	opts = opts.withDefaults()
	opts.baseVersion, opts.headVersion = base.OpenShellVersion, head.OpenShellVersion
	opts.catalogAdded = addedCatalogLines(base.catalog, head.catalog)
	opts.basePin, opts.headPin = base.pin, head.pin
	r := &Result{Schema: Schema, Base: sideRef(base), Head: sideRef(head), OpenShellVersion: head.OpenShellVersion, Agents: []AgentDiff{}}
	if base.OpenShellVersion != head.OpenShellVersion {
		r.OpenShellVersion = base.OpenShellVersion + " -> " + head.OpenShellVersion
	}
	for _, n := range sortedKeys(base.Agents, head.Agents) {
		if len(opts.Agents) > 0 && !slices.Contains(opts.Agents, n) {
			continue
		}
		if ad := compareNamed(n, base.Agents[n], head.Agents[n], opts); len(ad.Changes) > 0 {
			r.addAgent(ad)
		}
	}
	r.Summary.MaxRisk = maxRisk(r)
	return r
}

// withDefaults fills the credential set and the registry left unset.
func (o Options) withDefaults() Options {
	if o.Credentials == nil {
		o.Credentials = prover.DefaultCredentials()
	}
	if o.Registry == nil {
		o.Registry = prover.DefaultRegistry()
	}
	return o
}

func sideRef(s *Side) SideRef {
	return SideRef{Ref: s.Ref, Commit: s.Commit, ManifestSHA256: s.ManifestSHA256, OpenShellVersion: s.OpenShellVersion, FullsendVersion: s.pin.release}
}

// compareNamed compares the agent n of each side (b or h nil when that
// side lacks it): an added agent is compared with an empty one.
func compareNamed(n string, b, h *Agent, opts Options) AgentDiff {
	switch {
	case b == nil:
		changes := compareAgent(&Agent{Name: n, Policy: &openshell.Policy{}, Prov: map[string][]bundle.Source{}}, h, opts)
		return AgentDiff{Agent: n, Status: "added", Tier: Before{After: h.Manifest.Tier},
			Changes: append([]Change{{Action: ActionAdd, Kind: "agent", After: n, Risk: RiskInfo, Categories: []string{},
				From: sourcesFor(h, ""), order: "0"}}, changes...)}
	case h == nil:
		return AgentDiff{Agent: n, Status: "removed", Tier: Before{Before: b.Manifest.Tier},
			Changes: []Change{{Action: ActionRemove, Kind: "agent", Before: n, Risk: RiskInfo, Categories: []string{}, From: sourcesFor(b, "")}}}
	case b.Manifest.Source != h.Manifest.Source && b.Manifest.Source != "" && h.Manifest.Source != "":
		return compareMoved(n, b, h, opts)
	}
	return AgentDiff{Agent: n, Status: "changed", Tier: Before{Before: b.Manifest.Tier, After: h.Manifest.Tier}, Changes: compareAgent(b, h, opts)}
}

// addAgent numbers an agent's changes, fills their unset fields (info, no
// categories, no sources) and counts them.
func (r *Result) addAgent(ad AgentDiff) {
	for i := range ad.Changes {
		c := &ad.Changes[i]
		c.ID = fmt.Sprintf("%s/C%d", ad.Agent, i+1)
		c.Risk = cmp.Or(c.Risk, RiskInfo)
		if c.Categories == nil {
			c.Categories = []string{}
		}
		if c.From == nil {
			c.From = []bundle.Source{}
		}
		r.count(c)
	}
	r.Agents = append(r.Agents, ad)
}

// count counts a change under its risk and, but for an agent added or
// removed, under its action.
func (r *Result) count(c *Change) {
	s := &r.Summary
	if s.ByRisk == nil {
		s.ByRisk = map[string]int{}
	}
	s.ByRisk[c.Risk]++
	byAction := map[string]*int{ActionAdd: &s.Added, ActionRemove: &s.Removed, ActionWiden: &s.Widened,
		ActionNarrow: &s.Narrowed, ActionChange: &s.Changed, ActionMove: &s.Moved}
	if n, ok := byAction[c.Action]; ok && c.Kind != "agent" {
		*n++
	}
}

func maxRisk(r *Result) string {
	if r.Summary.ByRisk == nil {
		r.Summary.ByRisk = map[string]int{}
	}
	for _, k := range Risks() {
		if _, ok := r.Summary.ByRisk[k]; !ok {
			r.Summary.ByRisk[k] = 0
		}
	}
	for _, k := range Risks() {
		if r.Summary.ByRisk[k] > 0 {
			return k
		}
	}
	return "none"
}

// sourcesFor returns the sources of a policy path ("" for the agent file).
func sourcesFor(a *Agent, p string) []bundle.Source {
	if p == "" {
		if a.Manifest.Source != "" {
			return []bundle.Source{{File: a.Manifest.Source, Line: 1, Reason: "agent definition"}}
		}
		return []bundle.Source{}
	}
	s := bundle.LookupSources(a.Prov, p)
	if s == nil {
		return []bundle.Source{}
	}
	return s
}

// sameOrigin compares two source lists by file and reason: a line that
// only shifted (a comment added above it) is the same origin.
func sameOrigin(a, b []bundle.Source) bool {
	key := func(ss []bundle.Source) []string {
		out := make([]string, 0, len(ss))
		for _, s := range ss {
			out = append(out, s.File+"\x00"+s.Reason)
		}
		sort.Strings(out)
		return slices.Compact(out)
	}
	return slices.Equal(key(a), key(b))
}

// epUnit is one endpoint of one network policy.
type epUnit struct {
	policy string
	index  int
	path   string // policy path of the endpoint
	ep     *openshell.Endpoint
}

func (u *epUnit) ports() []int {
	if len(u.ep.Ports) > 0 {
		return u.ep.Ports
	}
	if u.ep.Port > 0 {
		return []int{u.ep.Port}
	}
	return nil
}

func portsString(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}

func (u *epUnit) key() string {
	return u.policy + "\x00" + strings.ToLower(u.ep.Host) + "\x00" + u.ep.Path + "\x00" + portsString(u.ports())
}

func (u *epUnit) hostKey() string {
	return u.policy + "\x00" + strings.ToLower(u.ep.Host) + "\x00" + u.ep.Path
}

func (u *epUnit) label() string {
	s := u.ep.Host + ":" + portsString(u.ports())
	if u.ep.Path != "" {
		s += " path " + u.ep.Path
	}
	return s
}

func endpoints(p *openshell.Policy) []*epUnit {
	var out []*epUnit
	for _, k := range p.PolicyKeys() {
		np := p.NetworkPolicies[k]
		for i := range np.Endpoints {
			out = append(out, &epUnit{policy: k, index: i, path: fmt.Sprintf("network_policies.%s.endpoints[%d]", k, i), ep: &np.Endpoints[i]})
		}
	}
	return out
}

// differ collects one agent's changes.
type differ struct {
	b, h *Agent
	opts Options
	// bProver and hProver are the credential sets the gateway gives the
	// prover; bCreds and hCreds add every host a provider's credential is
	// resolved at, for the risk table; bBound and hBound are those
	// bindings by provider.
	bProver, hProver prover.Credentials
	bCreds, hCreds   prover.Credentials
	bBound, hBound   map[string][]prover.Bound
	changes          []Change
}

func (d *differ) add(c Change) *Change {
	d.changes = append(d.changes, c)
	return &d.changes[len(d.changes)-1]
}

func compareAgent(b, h *Agent, opts Options) []Change {
	d := &differ{b: b, h: h, opts: opts}
	d.bProver, d.bBound, d.bCreds = credentialsOf(b, opts.Credentials, opts.baseVersion)
	d.hProver, d.hBound, d.hCreds = credentialsOf(h, opts.Credentials, opts.headVersion)
	d.fullsendVersion()
	d.openshellVersion()
	d.manifest()
	d.providers()
	d.providerCredentials()
	d.filesystem()
	d.network()
	d.attachProver()
	var seen map[string]bool
	for i := range d.changes {
		c := &d.changes[i]
		c.capBaseline()
		if (len(c.From) > 1 || len(opts.catalogAdded) > 0) && seen == nil {
			seen = origins(b)
		}
		c.blameNew(seen)
		c.blameCatalog(opts.catalogAdded, seen)
	}
	sort.SliceStable(d.changes, func(i, j int) bool { return d.changes[i].order < d.changes[j].order })
	return d.changes
}

// manifest compares the manifest's agent-level grants.
func (d *differ) manifest() {
	bm, hm := d.b.Manifest, d.h.Manifest
	d.tier()
	for _, f := range []struct{ name, before, after string }{
		{"runtime", bm.Runtime, hm.Runtime}, {"provider", bm.Provider, hm.Provider}, {"model", bm.Model, hm.Model},
	} {
		if f.before != f.after && d.b.Manifest.Policy != "" {
			d.add(Change{Action: ActionChange, Kind: f.name, Before: f.before, After: f.after, Risk: RiskInfo, From: sourcesFor(d.h, ""), order: "0b" + f.name,
				Why: "a different " + f.name + "; any new host it needs is listed as its own change"})
		}
	}
	d.manifestList("spawn", "0c", bm.Spawns, hm.Spawns, grade{RiskHigh, CatSpawn, "the agent can start another agent, with that agent's grants"})
	d.manifestList("spawn widening", "0c~", bm.SpawnWidening, hm.SpawnWidening, grade{RiskHigh, CatSpawnWidening, "a subagent this agent starts may hold this grant beyond the agent's own policy (sandbox.spawn-widening)"})
	d.manifestList("output", "0d", bm.Outputs, hm.Outputs, grade{RiskLow, "", "the runner downloads this path after the run"})
}

// tier grades a change of tier the head sets: a higher (or a previously
// unknown) tier widens.
func (d *differ) tier() {
	bt, ht := d.b.Manifest.Tier, d.h.Manifest.Tier
	if bt == ht || ht == "" {
		return
	}
	c := Change{Kind: "tier", Before: bt, After: ht, From: tierSources(d.h, d.b), order: "0a"}
	if br, ok := tierRank[bt]; ok && tierRank[ht] <= br {
		c.Action = ActionNarrow
		c.Was = tierSources(d.b, d.h)
	} else {
		c.Action = ActionWiden
		c.apply(tierGrades[ht]...)
	}
	d.add(c)
}

// tierSources blames a's tier on the lines that need it and that other
// (the other side) does not have: the lines that changed. When every such
// line is on both sides (only the other side's lines went), all of a's
// are given; without any (read-only, or a bundle), the agent's file.
func tierSources(a, other *Agent) []bundle.Source {
	if len(a.TierWhy) == 0 {
		return sourcesFor(a, "")
	}
	var changed []bundle.Source
	for _, s := range a.TierWhy {
		if !slices.ContainsFunc(other.TierWhy, func(o bundle.Source) bool { return sameOrigin([]bundle.Source{s}, []bundle.Source{o}) }) {
			changed = append(changed, s)
		}
	}
	if len(changed) == 0 {
		return a.TierWhy
	}
	return changed
}

// tierGrades grade the tiers that widen the agent's reach.
var tierGrades = map[string][]grade{
	"full":    {{RiskCritical, CatTierFull, "the full tier lets the agent write its workspace and run interpreters"}},
	"network": {{RiskHigh, CatTierNetwork, "the agent gains network access beyond its model API"}},
}

// manifestList compares a list of the manifest (spawns, outputs): an added
// entry gets grade g, a removed one is info.
func (d *differ) manifestList(kind, order string, before, after []string, g grade) {
	for _, s := range added(before, after) {
		c := Change{Action: ActionAdd, Kind: kind, After: s, From: sourcesFor(d.h, ""), order: order + s}
		c.apply(g)
		d.add(c)
	}
	for _, s := range added(after, before) {
		d.add(Change{Action: ActionRemove, Kind: kind, Before: s, Risk: RiskInfo, From: sourcesFor(d.b, ""), order: order + s})
	}
}

// added returns the elements of b not in a, sorted.
func added(a, b []string) []string {
	var out []string
	for _, s := range b {
		if !slices.Contains(a, s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// fsIndex maps each read-only and read-write path to its index.
func fsIndex(fs *openshell.FilesystemPolicy) (ro, rw map[string]int) {
	ro, rw = map[string]int{}, map[string]int{}
	if fs == nil {
		return
	}
	for i, p := range fs.ReadOnly {
		ro[p] = i
	}
	for i, p := range fs.ReadWrite {
		rw[p] = i
	}
	return
}

// filesystem compares the filesystem policy (include_workdir, then each
// path), landlock and the process identity.
func (d *differ) filesystem() {
	bfs, hfs := d.b.Policy.FilesystemPolicy, d.h.Policy.FilesystemPolicy
	bro, brw := fsIndex(bfs)
	hro, hrw := fsIndex(hfs)
	d.includeWorkdir(bfs != nil && bfs.IncludeWorkdir, hfs != nil && hfs.IncludeWorkdir, bro, brw, hro, hrw)
	for _, p := range sortedKeys(bro, brw, hro, hrw) {
		d.fsPath(p, bro, brw, hro, hrw)
	}
	d.landlock()
	d.process()
}

// includeWorkdir grades a change of include_workdir. fullsend lists
// /sandbox read-only below the full tier and includes the workdir at full:
// that is one change, so the read-only /sandbox it replaces is dropped from
// the index (bro or hro) for the path comparison.
func (d *differ) includeWorkdir(bwd, hwd bool, bro, brw, hro, hrw map[string]int) {
	if bwd == hwd {
		return
	}
	c := Change{Kind: "filesystem", Field: "include_workdir", Before: strconv.FormatBool(bwd), After: strconv.FormatBool(hwd), From: sourcesFor(d.h, ""), order: "1a"}
	if hwd {
		c.Action = ActionWiden
		c.apply(grade{RiskMedium, "", "the image's working directory (/sandbox) becomes writable"})
		if _, ok := bro[workdir]; ok && !inEither(hro, hrw, workdir) {
			c.Before, c.After = "read_only "+workdir, "include_workdir (read_write "+workdir+")"
			delete(bro, workdir)
		}
	} else {
		c.Action, c.Risk = ActionNarrow, RiskInfo
		if _, ok := hro[workdir]; ok && !inEither(bro, brw, workdir) {
			c.Before, c.After = "include_workdir (read_write "+workdir+")", "read_only "+workdir
			delete(hro, workdir)
		}
	}
	d.add(c)
}

// sortedKeys is every key of the maps, sorted.
func sortedKeys[V any](ms ...map[string]V) []string {
	var keys []string
	for _, m := range ms {
		keys = slices.AppendSeq(keys, maps.Keys(m))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// fsAccess is a path's access on one side and its policy path ("" when the
// side does not list it); read_write wins over read_only.
func fsAccess(ro, rw map[string]int, p string) (string, string) {
	if i, ok := rw[p]; ok {
		return "read_write", fmt.Sprintf("filesystem_policy.read_write[%d]", i)
	}
	if i, ok := ro[p]; ok {
		return "read_only", fmt.Sprintf("filesystem_policy.read_only[%d]", i)
	}
	return "", ""
}

// fsPath grades one filesystem path: added, removed, widened to
// read_write, narrowed to read_only, or moved to other sources.
func (d *differ) fsPath(p string, bro, brw, hro, hrw map[string]int) {
	ba, bpath := fsAccess(bro, brw, p)
	ha, hpath := fsAccess(hro, hrw, p)
	c := Change{Kind: "filesystem", Field: ha, Before: "", After: "", order: "1b" + p}
	switch {
	case ba == ha:
		if bs, hs := sourcesFor(d.b, bpath), sourcesFor(d.h, hpath); !sameOrigin(bs, hs) {
			c.Action, c.Before, c.After, c.From, c.Was, c.Risk = ActionMove, p, p, hs, bs, RiskInfo
			c.Field = ha
			d.add(c)
		}
		return
	case ba == "":
		c.Action, c.After, c.From = ActionAdd, p, sourcesFor(d.h, hpath)
		if ha == "read_write" {
			c.apply(writableGrade(p))
		} else {
			c.apply(grade{RiskMedium, "", "a new readable path"})
		}
	case ha == "":
		c.Action, c.Before, c.Field, c.From, c.Risk = ActionRemove, p, ba, sourcesFor(d.b, bpath), RiskInfo
	case ha == "read_write":
		c.Action, c.Before, c.After, c.From, c.Was = ActionWiden, "read_only "+p, "read_write "+p, sourcesFor(d.h, hpath), sourcesFor(d.b, bpath)
		c.apply(writableGrade(p))
	default:
		c.Action, c.Before, c.After, c.From, c.Was, c.Risk = ActionNarrow, "read_write "+p, "read_only "+p, sourcesFor(d.h, hpath), sourcesFor(d.b, bpath), RiskInfo
	}
	d.add(c)
}

// landlock grades a change of landlock compatibility when both sides set
// it: best_effort widens.
func (d *differ) landlock() {
	bl, hl := d.b.Policy.Landlock, d.h.Policy.Landlock
	if bl == nil || hl == nil || bl.Compatibility == hl.Compatibility {
		return
	}
	c := Change{Kind: "landlock", Field: "compatibility", Before: bl.Compatibility, After: hl.Compatibility, From: sourcesFor(d.h, ""), order: "1c"}
	if hl.Compatibility == openshell.LandlockHardRequirement {
		c.Action, c.Risk = ActionNarrow, RiskInfo
	} else {
		c.Action = ActionWiden
		c.apply(grade{RiskMedium, "", "the sandbox starts even where Landlock is unavailable"})
	}
	d.add(c)
}

// process grades a change of run_as_user or run_as_group when both sides
// set a process: root is high.
func (d *differ) process() {
	bp, hp := d.b.Policy.Process, d.h.Policy.Process
	if bp == nil || hp == nil {
		return
	}
	for _, f := range []struct{ name, before, after string }{{"run_as_user", bp.RunAsUser, hp.RunAsUser}, {"run_as_group", bp.RunAsGroup, hp.RunAsGroup}} {
		if f.before == f.after {
			continue
		}
		c := Change{Action: ActionChange, Kind: "process", Field: f.name, Before: f.before, After: f.after, From: sourcesFor(d.h, ""), order: "1d" + f.name}
		if f.after == "root" || f.after == "0" {
			c.apply(grade{RiskHigh, "", "the agent runs as root"})
		} else {
			c.apply(grade{RiskMedium, "", "the agent runs as another user"})
		}
		d.add(c)
	}
}

// workdir is the working directory of fullsend's images.
const workdir = "/sandbox"

func inEither(a, b map[string]int, p string) bool {
	_, x := a[p]
	_, y := b[p]
	return x || y
}

// capBaseline caps at low a grant that only the runtime's baseline (its
// model API, its own binaries and state) or the catalog's filesystem
// baseline causes: every agent of that runtime has it, and a reviewer reads
// it as context, not as the change's risk. The reasons are the compiler's,
// never frontmatter text.
func (c *Change) capBaseline() {
	if len(c.From) == 0 || RiskRank(c.Risk) <= RiskRank(RiskLow) || c.Action == ActionMove || c.Kind == "tier" {
		return
	}
	for _, s := range c.From {
		if !baselineSource(s) {
			return
		}
	}
	c.Risk = RiskLow
	c.Why = "the runtime's baseline (model API, its own binaries and state): every agent of this runtime has it"
}

// baselineSource reports whether a source is the runtime's baseline or the
// catalog's filesystem baseline.
func baselineSource(s bundle.Source) bool {
	return strings.HasPrefix(s.Reason, "runtime ") || (s.File == "catalog" && strings.HasSuffix(s.Reason, "baseline"))
}

// origins is every (file, reason) the agent's grants and tier come from.
func origins(a *Agent) map[string]bool {
	out := map[string]bool{}
	for _, ss := range a.Prov {
		for _, s := range ss {
			out[s.File+"\x00"+s.Reason] = true
		}
	}
	for _, s := range a.TierWhy {
		out[s.File+"\x00"+s.Reason] = true
	}
	return out
}

// blameNew puts first, in a change that grants (add, widen, change), the
// sources the base has nowhere: the lines that changed, which renderers
// and annotations show, before the unchanged declarations the grant also
// comes from (the endpoint a new binaries: line belongs to).
func (c *Change) blameNew(base map[string]bool) {
	if c.Action != ActionAdd && c.Action != ActionWiden && c.Action != ActionChange {
		return
	}
	isNew := func(s bundle.Source) bool { return !base[s.File+"\x00"+s.Reason] }
	if len(c.From) < 2 || !slices.ContainsFunc(c.From, isNew) {
		return
	}
	slices.SortStableFunc(c.From, func(x, y bundle.Source) int {
		nx, ny := isNew(x), isNew(y)
		switch {
		case nx == ny:
			return 0
		case nx:
			return -1
		}
		return 1
	})
}
