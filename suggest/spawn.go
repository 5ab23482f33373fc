package suggest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/containment"
)

// spawnWorkdir is the sandbox's working directory, which compile's spawn
// proof assumes (compile/spawns.go workdir).
const spawnWorkdir = "/sandbox"

// spawnNotes marks each suggestion that would widen a spawned agent beyond
// a parent: `policy compile` proves every spawn target contained in its
// parent (compile/spawns.go, package containment) and refuses the patched
// project unless the parent declares the grant in sandbox.spawn-widening.
// suggest's verifying compile leaves that proof out (the agent alone is
// compiled), so it runs the proof here, on the patched agent's effective
// policy against each parent's, and names the declaration the parent needs.
func (p *planner) spawnNotes(after *Target, version string) {
	child := cmp.Or(after.Effective, after.Policy)
	for _, parent := range after.Parents {
		vs, err := containment.Check(child, parent.Policy, containment.Options{Version: version, Values: p.opts.Values, Workdir: spawnWorkdir})
		if err != nil {
			p.res.Warnings = append(p.res.Warnings, fmt.Sprintf("cannot prove %s's patched policy contained in %s's (its parent): %v", after.Name, parent.Name, err))
			continue
		}
		for _, v := range vs {
			if parent.declares(v) {
				continue
			}
			for _, s := range p.widening(v) {
				s.addNote(fmt.Sprintf("%s is spawned by %s (%s), whose policy does not allow %s: policy compile refuses this unless %s declares it in its sandbox: spawn-widening: [{agent: %s, %s}]",
					after.Name, parent.Name, parent.File, v.Grant(), parent.Name, after.Name, v.Declaration()))
			}
		}
	}
}

// widening returns the suggestions a violation comes from: for a network
// grant, those that newly allow that binary to reach that host and port;
// for any other, those that raise the tier.
func (p *planner) widening(v containment.Violation) []*Suggestion {
	var out []*Suggestion
	for _, s := range p.sugs {
		if v.Kind != containment.KindNetwork {
			if s.TierAfter != s.TierBefore {
				out = append(out, s)
			}
			continue
		}
		if slices.ContainsFunc(s.Grants, func(g Grant) bool {
			return strings.EqualFold(g.Host, v.Host) && g.Port == v.Port && (v.Binary == "" || g.Binary == v.Binary)
		}) {
			out = append(out, s)
		}
	}
	return out
}

// declares reports whether the parent's spawn-widening allows v, as
// compile's declared does.
func (pa Parent) declares(v containment.Violation) bool {
	switch v.Kind {
	case containment.KindNetwork:
		return slices.ContainsFunc(pa.Hosts, func(h string) bool { return strings.EqualFold(h, v.Host) })
	case containment.KindFilesystem:
		return slices.Contains(pa.Paths, v.Path)
	}
	return pa.Process
}
