# METADATA
# title: Agent rules
# description: >-
#   Findings that need the fullsend context (data.fullsend.context): the
#   agent's tier, provenance and the spawn graph of all agents.
package fullsend.rules.agents

import rego.v1

import data.fullsend.lib

# METADATA
# title: Write access in a read-only agent
# description: >-
#   The agent's tier is read-only, yet an endpoint lets it change state (a
#   write method, access read-write or full, or an uninspected L4 endpoint).
# custom:
#   id: FS014
#   severity: deny
deny_readonly_writes contains f if {
	lib.context.tier == "read-only"
	some [key, i, ep] in lib.endpoints
	lib.writes(ep)
	f := lib.finding(
		rego.metadata.rule(),
		lib.ep_path(key, i),
		sprintf("read-only agent %s can write to %s", [object.get(lib.context, "agent", ""), ep.host]),
	)
}

provenance := object.get(lib.context, "provenance", {})

has_source(path, _) if count(object.get(provenance, path, [])) > 0

has_source(_, parent) if count(object.get(provenance, parent, [])) > 0

capabilities contains [lib.ep_path(key, i), key, ep.host] if some [key, i, ep] in lib.endpoints

capabilities contains [lib.bin_path(key, i), key, p] if some [key, i, p] in lib.binaries

# METADATA
# title: Capability without provenance
# description: >-
#   An endpoint or binary traces back to no tool, skill, profile or sandbox
#   declaration: something granted more than the agent asked for.
# custom:
#   id: FS024
#   severity: warn
warn_no_provenance contains f if {
	count(provenance) > 0
	some [path, key, what] in capabilities
	not has_source(path, concat(".", ["network_policies", key]))
	f := lib.finding(rego.metadata.rule(), path, sprintf("%s traces back to no tool or declaration", [what]))
}

agents := object.get(lib.context, "agents", {})

spawn_graph := {name: object.get(a, "spawns", []) | some name, a in agents}

# METADATA
# title: Privilege lifting through Agent()
# description: >-
#   A read-only agent can start, directly or through other subagents, an agent
#   that writes: whatever it cannot do itself it can ask the subagent to do.
# custom:
#   id: FS027
#   severity: deny
deny_privilege_lifting contains f if {
	lib.context.tier == "read-only"
	me := lib.context.agent
	some other in reachable
	other != me
	agents[other].writes == true
	f := lib.finding(
		rego.metadata.rule(),
		"",
		sprintf("read-only agent %s can reach writing agent %s through Agent()", [me, other]),
	)
}

# reachable is the set of agents the agent can start through Agent(),
# directly or through other subagents, itself included. fullsend's engine
# computes it (lib.facts.reachable_agents) with a walk of the agents
# reached; without it (conftest, opa) the rule builds the whole spawn graph.
reachable := r if {
	r := lib.facts.reachable_agents
} else := graph.reachable(
	object.union(spawn_graph, {lib.context.agent: object.get(lib.context, "spawns", [])}),
	{lib.context.agent},
)
