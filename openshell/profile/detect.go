package profile

import (
	"bytes"
	"slices"

	"gopkg.in/yaml.v3"
)

// IsProfile reports whether data has the shape of a provider profile rather
// than a sandbox policy: a top-level mapping with an id and endpoints,
// credentials, binaries or display_name, and none of a policy's top-level
// keys (version, network_policies, filesystem_policy, landlock, process).
// It looks at keys only, so a broken profile is still recognised.
func IsProfile(data []byte) bool {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil || len(doc.Content) != 1 {
		return false
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return false
	}
	keys := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		keys[root.Content[i].Value] = true
	}
	has := func(k string) bool { return keys[k] }
	return has("id") && !slices.ContainsFunc(policyKeys, has) && slices.ContainsFunc(profileKeys, has)
}

// policyKeys are a sandbox policy's top-level keys; profileKeys those of
// which a profile has at least one beside its id.
var (
	policyKeys  = []string{"version", "network_policies", "filesystem_policy", "landlock", "process", "network_middlewares"}
	profileKeys = []string{"endpoints", "credentials", "binaries", "display_name"}
)
