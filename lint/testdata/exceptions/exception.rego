# A user exception in conftest's shape: the model endpoint's subdomain
# wildcard is accepted for every policy that has a "model" network policy.
package fullsend.rules.network

import rego.v1

exception contains rules if {
	input.network_policies.model
	rules := ["subdomain_wildcard"]
}
