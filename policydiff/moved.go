package policydiff

import "github.com/fullsend-ai/agent-sandbox/bundle"

// compareMoved compares an agent whose definition moved to another file
// under the same name (agents/x.md to .claude/agents/x.md): one move row
// says so, and the grants are compared as if the base's definition had
// been at the head's path, so that what only moved with the file is no
// change and what changed is blamed on the new path's lines. The base's
// sources in the changes (Was, and From of a remove) keep its path.
func compareMoved(n string, b, h *Agent, opts Options) AgentDiff {
	oldPath, newPath := b.Manifest.Source, h.Manifest.Source
	changes := compareAgent(renamedSources(b, oldPath, newPath), h, opts)
	for i := range changes {
		c := &changes[i]
		renameIn(c.Was, newPath, oldPath)
		if c.Action == ActionRemove {
			renameIn(c.From, newPath, oldPath)
		}
	}
	move := Change{Action: ActionMove, Kind: "agent", Before: oldPath, After: newPath, Risk: RiskInfo, Categories: []string{},
		Why:  "the definition moved to another file under the same name; its grants are compared at the new path",
		From: sourcesFor(h, ""), Was: sourcesFor(b, ""), order: "0"}
	return AgentDiff{Agent: n, Status: "moved", Tier: Before{Before: b.Manifest.Tier, After: h.Manifest.Tier},
		Changes: append([]Change{move}, changes...)}
}

// renamedSources is a copy of a with every source in file from named to
// instead (its provenance, tier lines and manifest source).
func renamedSources(a *Agent, from, to string) *Agent {
	c := *a
	c.Manifest.Source = to
	c.Prov = make(map[string][]bundle.Source, len(a.Prov))
	for k, ss := range a.Prov {
		c.Prov[k] = renameIn(append([]bundle.Source(nil), ss...), from, to)
	}
	c.TierWhy = renameIn(append([]bundle.Source(nil), a.TierWhy...), from, to)
	return &c
}

// renameIn renames, in place, the file of the sources in from to to.
func renameIn(ss []bundle.Source, from, to string) []bundle.Source {
	for i := range ss {
		if ss[i].File == from {
			ss[i].File = to
		}
	}
	return ss
}
