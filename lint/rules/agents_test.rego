package fullsend.rules.agents_test

import rego.v1

import data.fullsend.rules.agents
import data.fullsend.test as t

writer := t.policy([t.ep({"access": "read-write"})], ["/usr/bin/gh"])

test_fs014_readonly_writes if {
	t.ids(agents.deny_readonly_writes) == {"FS014"} with input as writer
		with data.fullsend.context as {"agent": "a", "tier": "read-only"}
	l4 := t.policy([t.without(t.ep({}), {"protocol", "access", "enforcement"})], ["/usr/bin/gh"])
	t.ids(agents.deny_readonly_writes) == {"FS014"} with input as l4
		with data.fullsend.context as {"agent": "a", "tier": "read-only"}
}

test_fs014_ok if {
	count(agents.deny_readonly_writes) == 0 with input as t.clean
		with data.fullsend.context as {"agent": "a", "tier": "read-only"}
	count(agents.deny_readonly_writes) == 0 with input as writer
		with data.fullsend.context as {"agent": "a", "tier": "network"}
	count(agents.deny_readonly_writes) == 0 with input as writer
}

test_fs024_no_provenance if {
	t.ids(agents.warn_no_provenance) == {"FS024"} with input as t.clean
		with data.fullsend.context as {"provenance": {"filesystem_policy.read_only[0]": [{"file": "x", "reason": "baseline"}]}}
}

test_fs024_traced_ok if {
	count(agents.warn_no_provenance) == 0 with input as t.clean
		with data.fullsend.context as {"provenance": {"network_policies.p": [{"file": "agents/a.md", "line": 3, "reason": "tool"}]}}
	count(agents.warn_no_provenance) == 0 with input as t.clean
}

graph := {
	"lead": {"tier": "full", "spawns": ["reader"], "writes": true},
	"reader": {"tier": "read-only", "spawns": ["helper"], "writes": false},
	"helper": {"tier": "read-only", "spawns": ["poster"], "writes": false},
	"poster": {"tier": "network", "writes": true},
}

test_fs027_privilege_lifting if {
	t.ids(agents.deny_privilege_lifting) == {"FS027"} with input as t.clean
		with data.fullsend.context as {"agent": "reader", "tier": "read-only", "spawns": ["helper"], "agents": graph}
}

test_fs027_no_writer_reachable_ok if {
	g := object.union(graph, {"poster": {"tier": "network", "writes": false}})
	count(agents.deny_privilege_lifting) == 0 with input as t.clean
		with data.fullsend.context as {"agent": "reader", "tier": "read-only", "spawns": ["helper"], "agents": g}
	count(agents.deny_privilege_lifting) == 0 with input as t.clean
		with data.fullsend.context as {"agent": "lead", "tier": "full", "spawns": ["reader"], "agents": graph}
}
