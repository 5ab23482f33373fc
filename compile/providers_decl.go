package compile

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// providers reads `sandbox.providers`: a list of OpenShell provider profile
// ids (Providers v2), each a built-in profile of the target release or a
// project profile profiles/<id>.yaml. Which one a name is, and whether it
// exists, is the compiler's to decide (providers.go): it knows the target
// release and reads the project. Here: the syntax OpenShell's
// normalize_profile_id accepts (lowercase kebab-case, profiles.rs:1472-1480
// @ v0.0.111) and no name twice (a second provider of one name cannot be
// created, so the layer the tests composed would not exist).
func (d *decoder) providers(n *yaml.Node, name string) []NameRef {
	items, _ := d.stringList(n, name, false)
	var out []NameRef
	seen := map[string]Pos{}
	for _, it := range items {
		if !identRE.MatchString(it.value) {
			d.errAt(d.pos(it.node), it.field, fmt.Sprintf("invalid provider profile id %q", it.value),
				"a profile id is lowercase kebab-case, such as github or fullsend-github-ro (a project profile is profiles/<id>.yaml)")
			continue
		}
		if first, dup := seen[it.value]; dup {
			d.errAt(d.pos(it.node), it.field, fmt.Sprintf("provider %q is named twice (first at line %d)", it.value, first.Line),
				"name each provider once")
			continue
		}
		seen[it.value] = d.pos(it.node)
		out = append(out, NameRef{Name: it.value, Pos: d.pos(it.node)})
	}
	return out
}
