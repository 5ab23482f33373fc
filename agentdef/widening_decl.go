package agentdef

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// SpawnWideningDecl is one entry of `sandbox.spawn-widening`: a subagent
// the agent spawns (Agent(NAME)) and what its policy may hold beyond the
// agent's own. The compiler proves every spawned agent's policy contained
// in its parent's (package containment) and refuses one that is not,
// unless its parent declares the widening here.
type SpawnWideningDecl struct {
	Agent NameRef
	// Hosts are host patterns as the child's endpoints write them: any
	// request to them may go beyond the parent's.
	Hosts []NameRef
	// Paths are filesystem paths as the child's policy writes them.
	Paths []PathDecl
	// Process allows weaker process settings (user, group, Landlock,
	// middlewares).
	Process bool
	Pos     Pos
}

// spawnWidening reads `sandbox.spawn-widening`: a list of mappings {agent,
// hosts, paths, process}, each naming something; an agent named twice is
// an error (one entry says all it may add).
func (d *decoder) spawnWidening(n *yaml.Node, name string) []SpawnWideningDecl {
	if n.Kind != yaml.SequenceNode {
		d.errAt(d.pos(n), name, fmt.Sprintf("want a list of spawn widenings, got a %s", kindName(n)),
			"write spawn-widening: [{agent: researcher, hosts: [docs.example.com]}]")
		return nil
	}
	var out []SpawnWideningDecl
	seen := map[string]Pos{}
	for i, e := range n.Content {
		w, ok := d.widening(e, fieldIndex(name, i))
		if !ok {
			continue
		}
		if first, dup := seen[w.Agent.Name]; dup {
			d.errAt(w.Pos, fieldIndex(name, i), fmt.Sprintf("agent %q is named twice (first at line %d)", w.Agent.Name, first.Line),
				"list everything the agent may add in one entry")
			continue
		}
		seen[w.Agent.Name] = w.Pos
		out = append(out, w)
	}
	return out
}

// widening reads one {agent, hosts, paths, process} entry.
func (d *decoder) widening(n *yaml.Node, name string) (SpawnWideningDecl, bool) {
	w := SpawnWideningDecl{Pos: d.pos(n)}
	if !d.mapping(n, name) {
		return w, false
	}
	before := d.nerr
	f := d.fields(n, name, spawnWideningKeys)
	v, ok := f["agent"]
	if !ok {
		d.errAt(w.Pos, fieldPath(name, "agent"), "missing required field agent", "name the spawned agent: {agent: researcher, hosts: [docs.example.com]}")
		return w, false
	}
	if s, good := d.str(v.value, fieldPath(name, "agent")); good {
		w.Agent = NameRef{Name: s, Pos: d.pos(v.value)}
	}
	if v, ok := f["hosts"]; ok {
		w.Hosts = d.widenedHosts(v.value, fieldPath(name, "hosts"))
	}
	if v, ok := f["paths"]; ok {
		w.Paths = d.absPaths(v.value, fieldPath(name, "paths"), true)
	}
	if v, ok := f["process"]; ok {
		w.Process, _ = d.boolean(v.value, fieldPath(name, "process"))
	}
	if d.nerr == before && len(w.Hosts) == 0 && len(w.Paths) == 0 && !w.Process {
		d.errAt(w.Pos, name, fmt.Sprintf("the widening of %s names nothing", w.Agent.Name),
			"name the hosts, paths or process settings the agent may add, or remove the entry")
	}
	return w, d.nerr == before
}

// widenedHosts reads a list of host patterns, checked as endpoint hosts.
func (d *decoder) widenedHosts(n *yaml.Node, name string) []NameRef {
	var out []NameRef
	items, _ := d.stringList(n, name, false)
	for _, it := range items {
		if d.host(it.node, it.field, it.value) {
			out = append(out, NameRef{Name: it.value, Pos: d.pos(it.node)})
		}
	}
	return out
}
