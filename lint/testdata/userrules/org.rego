# An organisation rule in conftest shape, in package main: every network
# policy must name the team that owns it in its name.
package main

import rego.v1

# METADATA
# title: Network policy without an owning team
# description: Network policy names must start with a team prefix (team-).
# custom:
#   id: ORG001
#   severity: warn
warn_team_prefix contains {"msg": sprintf("network policy %s has no team- prefix", [key]), "id": "ORG001", "path": sprintf("network_policies.%s", [key])} if {
	some key, np in input.network_policies
	not startswith(np.name, "team-")
}

# A plain-string deny, as many conftest policies write them.
deny contains msg if {
	input.version != 1
	msg := "policy version must be 1"
}
