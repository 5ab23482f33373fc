package agentdef

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef/projectfile"
	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/internal/parallel"
)

// Load discovers and parses every agent and skill definition under fsys,
// the project root, and checks the references between them: skills an
// agent preloads, subagents its Agent(...) rules spawn (which must exist and
// must not form a cycle), skills its Skill(name) rules name.
//
// On success it returns the normalized project: agents sorted by name,
// skills by name, the sha256 of every file read, and the warnings. When any
// input is invalid it returns a nil project and a Diagnostics error listing
// every error found, each with file:line:column, field and hint.
//
// Pass an fs.FS that cannot escape the project, such as os.Root.FS();
// symbolic links inside the layouts are reported, never followed.
func Load(fsys fs.FS) (*Project, error) {
	proj, diags, _ := LoadPartial(fsys)
	if errs := diags.Errors(); len(errs) > 0 {
		return nil, errs
	}
	proj.Warnings = diags
	return proj, nil
}

// LoadPartial is Load that keeps going past errors: it returns the project
// of every definition read, every diagnostic (errors included, sorted), and
// the files that had an error. Agents from such files are left out of
// proj.Agents (so nothing is compiled from a half-read definition) but kept
// in the reference checks; a broken skill with a name stays in proj.Skills.
func LoadPartial(fsys fs.FS) (*Project, Diagnostics, map[string]bool) {
	cands, diags, variants := discover(fsys)
	l := &loader{
		proj:       &Project{Skills: map[string]*Skill{}, Files: map[string]string{}},
		agentFiles: map[string]*Agent{},
		broken:     map[string]bool{},
		diags:      diags,
	}
	// Files are read and parsed concurrently, each with its own decoder;
	// names are then claimed in discovery order, so the first definition of
	// a name wins and diagnostics come out as a serial read gives them.
	parsed := make([]parsedFile, len(cands))
	parallel.ForEach(len(cands), 0, func(i int) { parsed[i] = parseCandidate(fsys, cands[i]) })
	for i, c := range cands {
		l.claim(c.path, &parsed[i])
	}
	proj, broken := l.proj, l.broken
	sort.Slice(proj.Agents, func(i, j int) bool { return proj.Agents[i].Name < proj.Agents[j].Name })
	diags = append(l.diags, checkReferences(proj, l.agentFiles, variants, !l.incomplete)...)
	sortDiags(diags)
	for _, d := range diags.Errors() {
		broken[d.Pos.File] = true
	}
	proj.byName = l.agentFiles
	proj.Agents = slices.DeleteFunc(proj.Agents, func(a *Agent) bool { return broken[a.File] })
	return proj, diags, broken
}

// loader gathers the parsed files of one LoadPartial into its project, in
// discovery order.
type loader struct {
	proj       *Project
	agentFiles map[string]*Agent // every named agent, by name
	broken     map[string]bool   // files with an error
	diags      Diagnostics
	// incomplete is set when a file yields no named definition: a reference
	// to a missing name may then point into that broken file, so existence
	// checks would only add noise to the errors already reported.
	incomplete bool
}

// claim adds one parsed file to the project: its checksum, its skill and
// agent (unless an earlier file claimed the name), and its diagnostics.
func (l *loader) claim(file string, pf *parsedFile) {
	if pf.readErr != nil {
		l.diags = append(l.diags, Diagnostic{Pos: Pos{File: file, Line: 1, Column: 1}, Severity: SeverityError,
			Message: pf.readErr.Error(), Hint: hintFor(pf.readErr)})
		l.markBroken(file)
		return
	}
	l.proj.Files[file] = pf.sum
	d := pf.d
	if s := pf.skill; s != nil && s.Name != "" {
		l.claimSkill(d, s)
	}
	if a := pf.agent; a != nil && a.Name != "" {
		l.claimAgent(d, a)
	}
	if pf.noRoot || d.nerr > 0 {
		l.markBroken(file)
	}
	l.diags = append(l.diags, d.diags...)
}

// markBroken records that file has an error, so its agents are left out
// and missing names are not reported.
func (l *loader) markBroken(file string) {
	l.incomplete = true
	l.broken[file] = true
}

// claimSkill adds a named skill, or reports that an earlier file defines
// its name.
func (l *loader) claimSkill(d *decoder, s *Skill) {
	if prev, dup := l.proj.Skills[s.Name]; dup {
		d.errAt(s.NamePos, "name", fmt.Sprintf("skill %q is also defined in %s", s.Name, prev.File),
			"skill names must be unique across skills/, .claude/skills/, .opencode/skills/ and .agents/skills/")
		return
	}
	l.proj.Skills[s.Name] = s
}

// claimAgent adds a named agent, or reports that an earlier file defines
// its name.
func (l *loader) claimAgent(d *decoder, a *Agent) {
	if prev, dup := l.agentFiles[a.Name]; dup {
		d.errAt(a.NamePos, "name", fmt.Sprintf("agent %q is also defined in %s", a.Name, prev.File),
			"agent names must be unique across agents/, .claude/agents/ and .opencode/agent/")
		return
	}
	l.agentFiles[a.Name] = a
	l.proj.Agents = append(l.proj.Agents, a)
}

// parsedFile is one discovered file read and parsed on its own: the
// definition it holds and its decoder's diagnostics so far.
type parsedFile struct {
	readErr error
	sum     string
	d       *decoder
	noRoot  bool // the frontmatter could not be parsed
	skill   *Skill
	agent   *Agent
}

// parseCandidate reads and parses one discovered file. It touches nothing
// shared, so files are parsed concurrently.
func parseCandidate(fsys fs.FS, c candidate) parsedFile {
	data, err := projectfile.Read(fsys, c.path)
	if err != nil {
		return parsedFile{readErr: err}
	}
	pf := parsedFile{sum: bundle.SHA256Hex(data), d: newDecoder(c.path)}
	parse := parseDocument
	if c.kind == kindAgent && c.format == FormatOpenCode {
		// OpenCode loads a file with no or an empty frontmatter as a
		// prompt-only agent (see parseOpenCodeDocument).
		parse = parseOpenCodeDocument
	}
	doc := parse(pf.d, data)
	if doc.root == nil {
		pf.noRoot = true
		return pf
	}
	switch c.kind {
	case kindSkill:
		pf.skill = parseSkill(pf.d, doc)
	case kindAgent:
		if agentFormat(c.format, doc) == FormatOpenCode {
			pf.agent = parseOpenCodeAgent(pf.d, doc)
		} else {
			pf.agent = parseClaudeAgent(pf.d, doc)
		}
	}
	return pf
}

// agentFormat decides the dialect of an agents/ file: Claude Code, unless
// the frontmatter is clearly OpenCode's (a permission or mode field and no
// name field). Files under .claude/ and .opencode/ have a fixed dialect.
func agentFormat(f Format, doc *document) Format {
	if f != formatAuto {
		return f
	}
	if !hasKey(doc.root, "name") && (hasKey(doc.root, "permission") || hasKey(doc.root, "mode")) {
		return FormatOpenCode
	}
	return FormatClaude
}

// hintFor suggests a fix for a projectfile.Read error.
func hintFor(err error) string {
	switch {
	case errors.Is(err, projectfile.ErrTooLarge):
		return "agent and skill definitions are small Markdown files; move large reference material into separate files"
	case errors.Is(err, projectfile.ErrNotRegular):
		return "definitions must be regular files"
	}
	return "check that the file is readable"
}

// checkReferences checks the names agents refer to (when existence is
// set) and rejects cycles in the Agent(...) spawn graph. A name that is not
// in the project is a warning, not an error: Claude Code and OpenCode load
// the agent all the same (a missing skill is not preloaded, a missing
// subagent cannot be started), and a project compiled file by file, or one
// whose skills a harness installs per forge (fullsend-ai/agents'
// skills/issue-labels/{github,gitlab,jira}), names what it does not hold.
// The agent gets nothing from a missing name; a runtime's built-in
// subagent (builtinSubagents) runs inside the caller's own sandbox.
func checkReferences(proj *Project, agents map[string]*Agent, variants map[string][]string, existence bool) Diagnostics {
	if !existence {
		return spawnCycles(proj.Agents, agents)
	}
	rc := &refChecker{proj: proj, agents: agents, variants: variants,
		skillNames: sortedMapKeys(proj.Skills), agentNames: sortedMapKeys(agents)}
	for _, a := range proj.Agents {
		rc.skillRefs(a)
		rc.toolRefs(a)
	}
	return append(rc.diags, spawnCycles(proj.Agents, agents)...)
}

// refChecker warns about the names agents refer to that the project does
// not define.
type refChecker struct {
	proj                   *Project
	agents                 map[string]*Agent
	variants               map[string][]string
	skillNames, agentNames []string // sorted, for the hints
	diags                  Diagnostics
}

// skillRefs checks the skills an agent preloads.
func (rc *refChecker) skillRefs(a *Agent) {
	for i, ref := range a.Skills {
		if _, ok := rc.proj.Skills[ref.Name]; ok {
			continue
		}
		rc.diags = append(rc.diags, Diagnostic{Pos: ref.Pos, Severity: SeverityWarning, Field: fieldIndex("skills", i),
			Message: fmt.Sprintf("skill %q does not exist: the agent gets none of its tools or endpoints", ref.Name), Hint: rc.missingSkillHint(ref.Name)})
	}
}

// missingSkillHint tells how to provide a skill the project lacks: copy
// one of its variants, or create it.
func (rc *refChecker) missingSkillHint(name string) string {
	if vs := rc.variants[name]; len(vs) > 0 {
		return fmt.Sprintf("only variants exist (%s); copy the one your agents run with to %s", strings.Join(vs, ", "), path.Dir(path.Dir(vs[0]))+"/SKILL.md")
	}
	return "create skills/" + name + "/SKILL.md, or remove the reference; " + KnownHint("skills", name, rc.skillNames)
}

// toolRefs checks the subagents and skills an agent's tool rules name.
func (rc *refChecker) toolRefs(a *Agent) {
	for _, r := range a.Tools {
		switch {
		case r.Tool == "Agent":
			rc.spawnRefs(a, r)
		case r.Tool == "Skill" && r.SkillName != "":
			rc.skillRule(r)
		}
	}
}

// spawnRefs checks the subagents of an Agent(...) rule: each is a project
// agent or one the runtime ships.
func (rc *refChecker) spawnRefs(a *Agent, r ToolRule) {
	for _, name := range r.Agents {
		if _, ok := rc.agents[name]; ok || isBuiltinSubagent(a.Format, name) {
			continue
		}
		rc.diags = append(rc.diags, Diagnostic{Pos: r.Pos, Severity: SeverityWarning, Field: "tools",
			Message: fmt.Sprintf("%s names agent %q, which does not exist: no sandbox may be spawned for it", r.Raw, name),
			Hint:    KnownHint("agents", name, rc.agentNames) + "; define the agent in agents/, or remove it"})
	}
}

// skillRule checks the skill a Skill(name) rule names.
func (rc *refChecker) skillRule(r ToolRule) {
	if _, ok := rc.proj.Skills[r.SkillName]; ok {
		return
	}
	rc.diags = append(rc.diags, Diagnostic{Pos: r.Pos, Severity: SeverityWarning, Field: "tools",
		Message: fmt.Sprintf("%s names skill %q, which does not exist: it grants nothing", r.Raw, r.SkillName), Hint: KnownHint("skills", r.SkillName, rc.skillNames)})
}

// builtinSubagents are the subagents each runtime ships, by agent format.
// They run in the calling agent's process, so inside its sandbox and under
// its policy: Agent(Explore) needs no sandbox of its own.
//   - Claude Code: Explore, Plan, general-purpose, statusline-setup and
//     claude-code-guide (code.claude.com/docs/en/sub-agents, "Built-in
//     subagents").
//   - OpenCode: general and explore (subagents), build and plan (primary
//     agents), anomalyco/opencode packages/opencode/src/agent/agent.ts.
var builtinSubagents = map[Format][]string{
	FormatClaude:   {"Explore", "Plan", "general-purpose", "statusline-setup", "claude-code-guide"},
	FormatOpenCode: {"general", "explore", "build", "plan"},
}

// isBuiltinSubagent reports whether name is a subagent the runtime of
// format f ships.
func isBuiltinSubagent(f Format, name string) bool {
	return slices.Contains(builtinSubagents[f], name)
}

// spawnCycles reports each cycle of the Agent(...) graph once, at the rule
// that closes it.
func spawnCycles(list []*Agent, agents map[string]*Agent) Diagnostics {
	g := &spawnGraph{agents: agents, color: map[string]visitColor{}, seen: map[string]bool{}}
	for _, a := range list {
		if g.color[a.Name] == white {
			g.visit(a)
		}
	}
	return g.diags
}

// visitColor is an agent's state in spawnGraph's depth-first search.
type visitColor int

const (
	white visitColor = iota // not visited yet
	grey                    // on the stack
	black                   // done
)

// spawnGraph is the depth-first search of spawnCycles.
type spawnGraph struct {
	agents map[string]*Agent
	color  map[string]visitColor
	stack  []string // the names of the grey agents, in visiting order
	seen   map[string]bool
	diags  Diagnostics
}

// visit follows every Agent(...) rule of a.
func (g *spawnGraph) visit(a *Agent) {
	g.color[a.Name] = grey
	g.stack = append(g.stack, a.Name)
	for _, r := range a.Tools {
		if r.Tool != "Agent" {
			continue
		}
		for _, next := range r.Agents {
			g.follow(r, next)
		}
	}
	g.stack = g.stack[:len(g.stack)-1]
	g.color[a.Name] = black
}

// follow takes the edge of rule r to subagent next: it visits next, or
// reports the cycle when next is on the stack. A name the project does not
// define leads nowhere.
func (g *spawnGraph) follow(r ToolRule, next string) {
	b, ok := g.agents[next]
	if !ok {
		return
	}
	switch g.color[next] {
	case white:
		g.visit(b)
	case grey:
		g.reportCycle(r, next)
	}
}

// reportCycle reports the cycle that rule r closes by spawning next, an
// agent on the stack, unless the same cycle was reported from another entry.
func (g *spawnGraph) reportCycle(r ToolRule, next string) {
	start := slices.Index(g.stack, next)
	cycle := append(slices.Clone(g.stack[start:]), next)
	key := canonicalCycle(cycle[:len(cycle)-1])
	if g.seen[key] {
		return
	}
	g.seen[key] = true
	g.diags = append(g.diags, Diagnostic{Pos: r.Pos, Severity: SeverityError, Field: "tools",
		Message: "cyclic Agent() spawn list: " + strings.Join(cycle, " -> "),
		Hint:    "subagents must not spawn their ancestors; remove one Agent() entry of the cycle"})
}

// canonicalCycle names a cycle independently of where it was entered.
func canonicalCycle(c []string) string {
	first := 0
	for i := range c {
		if c[i] < c[first] {
			first = i
		}
	}
	return strings.Join(append(append([]string(nil), c[first:]...), c[:first]...), ",")
}

// KnownHint lists the known names of a kind (what: "agents", "skills")
// for a hint about name, after the closest one when one is close.
func KnownHint(what, name string, known []string) string {
	if len(known) == 0 {
		return "no " + what + " are defined in this project"
	}
	hint := "known " + what + ": " + strings.Join(known, ", ")
	if s := suggest(name, known); s != "" {
		hint = fmt.Sprintf("did you mean %q? %s", s, hint)
	}
	return hint
}

func sortedMapKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// sortDiags orders diagnostics by file, line, column, then message.
func sortDiags(ds Diagnostics) {
	slices.SortStableFunc(ds, func(x, y Diagnostic) int {
		return cmp.Or(x.Pos.Compare(y.Pos), cmp.Compare(x.Message, y.Message))
	})
}
