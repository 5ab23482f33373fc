package compile

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

// selection is the part of a project that --agent NAME keeps: the named
// agents, the subagents they may spawn and the skills they use,
// transitively, with the files those come from.
type selection struct {
	agents map[string]bool
	skills map[string]bool
	files  map[string]bool
}

// selectAgents narrows a partially loaded project to the named agents and
// what they reference, keeping only the diagnostics of those files: a
// broken file elsewhere in the project does not stop them. A name that is
// no agent is an error naming the known ones. A file that could not be read
// far enough to know its name belongs to the selection when its base name
// (agents/NAME.md, skills/NAME/SKILL.md) is a selected name.
func selectAgents(proj *agentdef.Project, diags agentdef.Diagnostics, names []string) (*agentdef.Project, agentdef.Diagnostics, error) {
	defined := proj.Defined()
	known := slices.Sorted(maps.Keys(defined))
	for _, n := range names {
		if _, ok := defined[n]; !ok && !namedFileIn(diags, n) {
			return nil, nil, fmt.Errorf("no agent %q in the project (%s)", n, agentdef.KnownHint("agents", n, known))
		}
	}
	sel := selection{agents: map[string]bool{}, skills: map[string]bool{}, files: map[string]bool{}}
	sel.addAgents(proj, names)
	var kept agentdef.Diagnostics
	for _, d := range diags {
		if sel.keeps(d) {
			kept = append(kept, d)
		}
	}
	out := *proj
	out.Agents = nil
	for _, a := range proj.Agents {
		if sel.agents[a.Name] {
			out.Agents = append(out.Agents, a)
		}
	}
	return &out, kept, nil
}

// addAgents adds the named agents and, transitively, the subagents and
// skills they use.
func (sel *selection) addAgents(proj *agentdef.Project, names []string) {
	queue := slices.Clone(names)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if sel.agents[n] {
			continue
		}
		sel.agents[n] = true
		if a, ok := proj.Defined()[n]; ok {
			queue = append(queue, sel.addAgent(proj, a)...)
		}
	}
}

// addAgent adds an agent's file and skills, and returns the agents it and
// its skills may spawn.
func (sel *selection) addAgent(proj *agentdef.Project, a *agentdef.Agent) []string {
	sel.files[a.File] = true
	spawn := sel.addRules(proj, a.Tools)
	for _, ref := range a.Skills {
		spawn = append(spawn, sel.addSkill(proj, ref.Name)...)
	}
	return spawn
}

// keeps reports whether a diagnostic belongs to the selection: it has no
// file, or its file is selected or named after a selected name.
func (sel *selection) keeps(d agentdef.Diagnostic) bool {
	return d.Pos.File == "" || sel.files[d.Pos.File] || sel.names(d.Pos.File)
}

// addRules adds the skills a rule list names and returns the agents it may
// spawn.
func (sel *selection) addRules(proj *agentdef.Project, rules []agentdef.ToolRule) []string {
	var spawn []string
	for _, r := range rules {
		switch {
		case r.Tool == "Agent":
			spawn = append(spawn, r.Agents...)
		case r.Tool == "Skill" && r.SkillName != "":
			spawn = append(spawn, sel.addSkill(proj, r.SkillName)...)
		}
	}
	return spawn
}

// addSkill adds a skill and returns the agents its allowed tools spawn.
func (sel *selection) addSkill(proj *agentdef.Project, name string) []string {
	if sel.skills[name] {
		return nil
	}
	sel.skills[name] = true
	s, ok := proj.Skills[name]
	if !ok {
		return nil
	}
	sel.files[s.File] = true
	if s.PolicyFile != "" {
		sel.files[path.Join(s.Dir, s.PolicyFile)] = true
	}
	return sel.addRules(proj, s.AllowedTools)
}

// names reports whether file is named after a selected agent or skill:
// agents/NAME.md, skills/NAME/SKILL.md (any layout).
func (sel *selection) names(file string) bool {
	base := path.Base(file)
	if base == "SKILL.md" {
		return sel.skills[path.Base(path.Dir(file))]
	}
	return sel.agents[strings.TrimSuffix(base, path.Ext(base))]
}

// namedFileIn reports whether a diagnostic points at an agent file named
// after name (one too broken to know its name from).
func namedFileIn(diags agentdef.Diagnostics, name string) bool {
	for _, d := range diags {
		base := path.Base(d.Pos.File)
		if base != "SKILL.md" && strings.TrimSuffix(base, path.Ext(base)) == name {
			return true
		}
	}
	return false
}
