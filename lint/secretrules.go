package lint

import (
	"fmt"

	"github.com/fullsend-ai/agent-sandbox/secretscan"
	"github.com/open-policy-agent/opa/v1/util"
)

// secretRulesFile is the builtin rule file generated from secretscan: the
// secret rules FS018 applies, as Rego data, for conftest and opa.
const secretRulesFile = "secretrules.rego"

// secretRulesData returns the values of rules/secretrules.rego, straight
// from secretscan. The engine stores them as data.fullsend.lib.secretrules
// instead of compiling that file, whose 100 KB of literals cost OPA's parser
// and compiler some 45 ms at every start. TestSecretRulesData checks that
// they equal the file's.
func secretRulesData() (map[string]any, error) {
	out := map[string]any{}
	for name, js := range secretscan.RegoValues() {
		var v any
		if err := util.UnmarshalJSON(js, &v); err != nil {
			return nil, fmt.Errorf("secret rules: %s: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

// addSecretRules puts rules (secretRulesData) at data.fullsend.lib.secretrules.
func addSecretRules(data, rules map[string]any) error {
	node := data
	for _, key := range []string{"fullsend", "lib"} {
		next, ok := node[key].(map[string]any)
		if !ok {
			if node[key] != nil {
				return fmt.Errorf("lint data: data.%s is not an object", key)
			}
			next = map[string]any{}
			node[key] = next
		}
		node = next
	}
	if _, ok := node["secretrules"]; ok {
		return fmt.Errorf("lint data: data.fullsend.lib.secretrules is reserved for the builtin secret rules")
	}
	node["secretrules"] = rules
	return nil
}
