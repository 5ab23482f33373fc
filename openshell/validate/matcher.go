package validate

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Matchers: the query and tool matchers (a glob string or {any: [globs]},
// OpenShell's untagged QueryMatcherDef) and the MCP params that nest them.

// matcher checks a query/tool matcher: a glob string or {any: [globs]}.
func (c *checker) matcher(v *yaml.Node, path string) bool {
	v = resolveAlias(v)
	if v == nil {
		return false
	}
	switch v.Kind {
	case yaml.ScalarNode:
		if !c.globString(v, path) {
			return false
		}
		if v.Value == "" {
			c.errorf(v, path, CodeQueryMatcher, `use "*" to match any value`, "empty glob matches only an empty value")
		}
		c.globSyntax(v, path)
		return true
	case yaml.MappingNode:
		return c.anyMatcher(v, path)
	}
	c.errorf(v, path, CodeType, "", "matcher must be a glob string or {any: [globs]}, got %s", describe(v))
	return false
}

// anyMatcher checks the mapping form of a matcher, {any: [globs]}.
func (c *checker) anyMatcher(v *yaml.Node, path string) bool {
	anyFound := false
	for k, list := range pairs(v) {
		switch {
		case k.Value != "any":
			c.errorf(k, joinPath(path, k.Value), CodeUnknownField, "a matcher is a glob string or {any: [globs]}", "unknown matcher key %q", k.Value)
			return false
		case anyFound:
			// QueryAnyDef is a struct: serde_derive's "duplicate field",
			// and then no variant of the untagged QueryMatcherDef matches
			// (lib.rs:342-363 @ v0.0.111).
			c.errorf(k, joinPath(path, "any"), CodeDuplicateKey, "keep one any: list with every glob",
				"duplicate key %q: OpenShell refuses the matcher (duplicate field in {any: [...]})", "any")
			return false
		}
		anyFound = true
		if !c.anyGlobs(list, path) {
			return false
		}
	}
	if !anyFound {
		c.errorf(v, path, CodeQueryMatcher, "list at least one glob", "matcher {} matches nothing")
	}
	return true
}

// anyGlobs checks the list of an {any: [globs]} matcher; false when it is not
// a list.
func (c *checker) anyGlobs(list *yaml.Node, path string) bool {
	if list == nil || list.Kind != yaml.SequenceNode {
		c.errorf(list, joinPath(path, "any"), CodeType, "", "any must be a list of glob strings, got %s", describe(list))
		return false
	}
	if len(list.Content) == 0 {
		c.errorf(list, joinPath(path, "any"), CodeQueryMatcher, "list at least one glob", "any: [] matches nothing")
	}
	for j, e := range list.Content {
		e = resolveAlias(e)
		if e != nil && c.globString(e, fmt.Sprintf("%s.any[%d]", path, j)) {
			c.globSyntax(e, fmt.Sprintf("%s.any[%d]", path, j))
		}
	}
	return true
}

// paramMatcher checks an MCP params value: a matcher or a nested map.
func (c *checker) paramMatcher(v *yaml.Node, path string, depth int) {
	v = resolveAlias(v)
	if v == nil || !c.spend() {
		return
	}
	// serde_yml stops at 128 nested levels; params start about 10 deep.
	if depth > 110 {
		c.errorf(v, path, CodeType, "flatten the params", "params nest deeper than OpenShell's YAML recursion limit")
		return
	}
	if v.Kind == yaml.MappingNode && !isAnyMatcher(v) {
		c.paramMap(v, path, depth)
		return
	}
	c.matcher(v, path)
}

// isAnyMatcher reports a mapping of the one key any: the {any: [globs]}
// form of a matcher.
func isAnyMatcher(v *yaml.Node) bool {
	if len(v.Content) != 2 {
		return false
	}
	k := resolveAlias(v.Content[0])
	return k != nil && k.Value == "any"
}

// paramMap checks a nested params map, each value a matcher or a map.
func (c *checker) paramMap(v *yaml.Node, path string, depth int) {
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := resolveAlias(v.Content[i])
		if k == nil {
			continue
		}
		if first := seen[k.Value]; first != nil && k.Kind == yaml.ScalarNode {
			c.duplicateMapKey(k, joinPath(path, k.Value), first)
		} else if first == nil {
			seen[k.Value] = k
		}
		c.paramMatcher(v.Content[i+1], joinPath(path, k.Value), depth+1)
	}
}
