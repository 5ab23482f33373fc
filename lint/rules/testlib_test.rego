# Fixtures shared by the rule tests: a minimal, clean policy that each test
# bends in one place.
package fullsend.test

import rego.v1

# ep returns a clean L7 endpoint with fields overridden.
ep(fields) := object.union(
	{"host": "api.example.com", "port": 443, "protocol": "rest", "enforcement": "enforce", "access": "read-only"},
	fields,
)

# without returns an endpoint with some keys removed.
without(e, keys) := object.remove(e, keys)

# policy wraps endpoints and binary paths in one network policy "p".
policy(endpoints, binaries) := {
	"version": 1,
	"network_policies": {"p": {
		"name": "p",
		"endpoints": endpoints,
		"binaries": [{"path": b} | some b in binaries],
	}},
}

# fs is a policy with only a filesystem section.
fs(ro, rw) := {"version": 1, "filesystem_policy": {"include_workdir": true, "read_only": ro, "read_write": rw}}

# clean is a policy no rule flags.
clean := policy([ep({})], ["/usr/bin/gh"])

# ids collects the rule ids of a set of findings.
ids(findings) := {f.id | some f in findings}
