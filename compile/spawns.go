package compile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/containment"
)

// Spawn containment (issue 33 §3): a spawned agent runs in a sandbox of
// its own policy, so the compiler proves that policy contained in its
// parent's (package containment, on both effective policies: provider
// layers included) and refuses a child that holds more, at the child's
// line, naming the parent's Agent(...) line, unless the parent declares
// the widening in sandbox.spawn-widening.

// workdir is the sandbox's working directory, which the compiler's
// filesystem section assumes (merge.go filesystem).
const workdir = "/sandbox"

// spawnContainment checks every compiled agent's compiled spawn targets.
func spawnContainment(proj *agentdef.Project, out *Output, opts Options) agentdef.Diagnostics {
	var ds agentdef.Diagnostics
	for _, name := range out.AgentNames() {
		parent := out.Agents[name]
		ds = append(ds, wideningDecls(proj, parent)...)
		used := map[string]bool{}
		for _, child := range parent.Spawns {
			c, ok := out.Agents[child]
			if !ok || child == name {
				continue // not compiled (its errors are reported), or itself
			}
			ds = append(ds, proveChild(proj, parent, c, opts, used)...)
		}
		ds = append(ds, unusedWidenings(parent, used)...)
	}
	return ds
}

// proveChild reports each grant of child beyond parent that parent does
// not declare; used records the declarations that allowed one.
func proveChild(proj *agentdef.Project, parent, child *Compiled, opts Options, used map[string]bool) agentdef.Diagnostics {
	vs, err := containment.Check(child.Effective(), parent.Effective(), containment.Options{Version: opts.OpenShellVersion, Values: opts.Values, Workdir: workdir})
	at := spawnPos(proj, parent.Agent, child.Agent.Name)
	if err != nil {
		return agentdef.Diagnostics{{Pos: at, Severity: agentdef.SeverityError,
			Message: fmt.Sprintf("cannot prove %s's policy contained in %s's: %v", child.Agent.Name, parent.Agent.Name, err)}}
	}
	w := widening(parent.Agent, child.Agent.Name)
	var ds agentdef.Diagnostics
	for _, v := range vs {
		if key, ok := declared(w, v); ok {
			used[key] = true
			continue
		}
		ds = append(ds, agentdef.Diagnostic{Pos: grantPos(v, child.Agent), Severity: agentdef.SeverityError,
			Message: fmt.Sprintf("agent %s is spawned by %s (%s: Agent(%s)) and may do what %s may not: %s",
				child.Agent.Name, parent.Agent.Name, at, child.Agent.Name, parent.Agent.Name, v),
			Hint: fmt.Sprintf("narrow %s's grant to what %s has, or declare it in %s's sandbox: spawn-widening: [{agent: %s, %s}]",
				child.Agent.Name, parent.Agent.Name, parent.Agent.Name, child.Agent.Name, v.Declaration())})
	}
	return ds
}

// grantPos is the child's line that grants v: its first source in a
// project file, else the child's name.
func grantPos(v containment.Violation, child *agentdef.Agent) agentdef.Pos {
	for _, s := range v.From {
		if s.File != "" && s.File != "catalog" && s.Line > 0 {
			return posOf(s)
		}
	}
	return child.NamePos
}

// spawnPos is the parent's first Agent(...) rule naming child, in its
// tools or its skills' allowed-tools.
func spawnPos(proj *agentdef.Project, a *agentdef.Agent, child string) agentdef.Pos {
	rules := slices.Clone(a.Tools)
	for _, ref := range a.Skills {
		if s := proj.Skills[ref.Name]; s != nil {
			rules = append(rules, s.AllowedTools...)
		}
	}
	for _, r := range rules {
		if slices.Contains(r.Agents, child) {
			return r.Pos
		}
	}
	return a.NamePos
}

// widening is the parent's declaration for child, or nil.
func widening(a *agentdef.Agent, child string) *agentdef.SpawnWideningDecl {
	if a.Sandbox == nil {
		return nil
	}
	for i := range a.Sandbox.SpawnWidening {
		if a.Sandbox.SpawnWidening[i].Agent.Name == child {
			return &a.Sandbox.SpawnWidening[i]
		}
	}
	return nil
}

// declared reports whether w allows v, and the declaration's key.
func declared(w *agentdef.SpawnWideningDecl, v containment.Violation) (string, bool) {
	if w == nil {
		return "", false
	}
	switch v.Kind {
	case containment.KindNetwork:
		i := slices.IndexFunc(w.Hosts, func(h agentdef.NameRef) bool { return strings.EqualFold(h.Name, v.Host) })
		if i < 0 {
			return "", false
		}
		return WideningEntry(w.Agent.Name, v.Kind, w.Hosts[i].Name), true
	case containment.KindFilesystem:
		return WideningEntry(w.Agent.Name, v.Kind, v.Path), slices.ContainsFunc(w.Paths, func(p agentdef.PathDecl) bool { return p.Path == v.Path })
	}
	return WideningEntry(w.Agent.Name, v.Kind, ""), w.Process
}

// WideningEntry renders one declared widening as the manifest, explain and
// policy diff name it: "AGENT network HOST", "AGENT filesystem PATH" or
// "AGENT process".
func WideningEntry(agent string, kind containment.Kind, subject string) string {
	if kind == containment.KindProcess {
		return agent + " process"
	}
	return agent + " " + string(kind) + " " + subject
}

// Widenings lists what an agent's sandbox.spawn-widening declares, as
// WideningEntry renders it, sorted.
func Widenings(a *agentdef.Agent) []string {
	if a == nil || a.Sandbox == nil {
		return nil
	}
	var out []string
	for _, w := range a.Sandbox.SpawnWidening {
		for _, h := range w.Hosts {
			out = append(out, WideningEntry(w.Agent.Name, containment.KindNetwork, h.Name))
		}
		for _, p := range w.Paths {
			out = append(out, WideningEntry(w.Agent.Name, containment.KindFilesystem, p.Path))
		}
		if w.Process {
			out = append(out, WideningEntry(w.Agent.Name, containment.KindProcess, ""))
		}
	}
	slices.Sort(out)
	return out
}

// wideningDecls checks where the parent declares widenings: only the
// agent's own sandbox block (a skill's is refused), and only for agents it
// spawns.
func wideningDecls(proj *agentdef.Project, c *Compiled) agentdef.Diagnostics {
	var ds agentdef.Diagnostics
	for _, ref := range c.Agent.Skills {
		if s := proj.Skills[ref.Name]; s != nil && s.Sandbox != nil && len(s.Sandbox.SpawnWidening) > 0 {
			ds = append(ds, agentdef.Diagnostic{Pos: s.Sandbox.SpawnWidening[0].Pos, Severity: agentdef.SeverityError, Field: "sandbox.spawn-widening",
				Message: fmt.Sprintf("skill %s declares a spawn widening; only the agent that spawns may", s.Name),
				Hint:    "move it to the sandbox block of the agent that lists Agent(...)"})
		}
	}
	if c.Agent.Sandbox == nil {
		return ds
	}
	for _, w := range c.Agent.Sandbox.SpawnWidening {
		if !slices.Contains(c.Spawns, w.Agent.Name) {
			ds = append(ds, agentdef.Diagnostic{Pos: w.Agent.Pos, Severity: agentdef.SeverityError, Field: "sandbox.spawn-widening",
				Message: fmt.Sprintf("agent %s does not spawn %s (its Agent(...) list: %s)", c.Agent.Name, w.Agent.Name, strings.Join(c.Spawns, ", ")),
				Hint:    "name an agent of Agent(...), or remove the entry"})
		}
	}
	return ds
}

// unusedWidenings warns about each declared widening no grant of the child
// needed: the declaration would let a later change widen silently.
func unusedWidenings(c *Compiled, used map[string]bool) agentdef.Diagnostics {
	if c.Agent.Sandbox == nil {
		return nil
	}
	var ds agentdef.Diagnostics
	for _, w := range c.Agent.Sandbox.SpawnWidening {
		if !slices.Contains(c.Spawns, w.Agent.Name) {
			continue
		}
		for _, e := range Widenings(&agentdef.Agent{Sandbox: &agentdef.Sandbox{SpawnWidening: []agentdef.SpawnWideningDecl{w}}}) {
			if !used[e] {
				ds = append(ds, agentdef.Diagnostic{Pos: w.Pos, Severity: agentdef.SeverityWarning, Field: "sandbox.spawn-widening",
					Message: fmt.Sprintf("declared widening %q is not needed: %s's policy is contained there", e, w.Agent.Name),
					Hint:    "remove it, so that a later change cannot widen the child unseen"})
			}
		}
	}
	return ds
}
