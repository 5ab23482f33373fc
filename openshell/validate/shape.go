package validate

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"

	"github.com/fullsend-ai/agent-sandbox/internal/didyoumean"

	"gopkg.in/yaml.v3"
)

// obj is a walked mapping: the well-typed values of its fields, with nodes
// kept for positions.
type obj struct {
	node  *yaml.Node
	path  string
	keys  map[string]*yaml.Node // key node of every known field present
	vals  map[string]*yaml.Node // value node of every well-typed, non-null field
	kids  map[string]*obj       // kStruct fields
	lists map[string][]*obj     // kList fields
	maps  map[string][]entry    // kMap fields, in document order
}

type entry struct {
	key     string
	keyNode *yaml.Node
	val     *obj
}

func (o *obj) has(name string) bool { return o != nil && o.vals[name] != nil }

// hasItems reports whether a list or map field has elements (some may have
// failed the shape check and been dropped from o.lists or o.maps, which
// never hold more).
func (o *obj) hasItems(name string) bool {
	n := o.vals[name]
	return n != nil && len(n.Content) > 0
}

// broken reports a field that is present but failed its shape check; the
// semantic checks skip it rather than report it as missing.
func (o *obj) broken(name string) bool {
	return o != nil && o.keys[name] != nil && o.vals[name] == nil && !isNullKey(o, name)
}

func isNullKey(o *obj, name string) bool {
	for i := 0; i+1 < len(o.node.Content); i += 2 {
		if o.node.Content[i] == o.keys[name] {
			v := resolveAlias(o.node.Content[i+1])
			return v != nil && v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null"
		}
	}
	return false
}

// str returns a string field ("" when absent).
func (o *obj) str(name string) string {
	if o == nil || o.vals[name] == nil {
		return ""
	}
	return o.vals[name].Value
}

func (o *obj) boolean(name string) bool { return o.str(name) == "true" }

// num returns an integer field (0 when absent).
func (o *obj) num(name string) int64 {
	if o == nil || o.vals[name] == nil {
		return 0
	}
	return intValue(o.vals[name].Value)
}

// strs returns a list-of-strings field with the node of each element.
func (o *obj) strs(name string) ([]string, []*yaml.Node) {
	if o == nil || o.vals[name] == nil {
		return nil, nil
	}
	var vals []string
	var nodes []*yaml.Node
	for _, n := range o.vals[name].Content {
		n = resolveAlias(n)
		vals = append(vals, n.Value)
		nodes = append(nodes, n)
	}
	return vals, nodes
}

// pos returns the best node to point at for field name: its value, its key,
// or the mapping itself when absent.
func (o *obj) pos(name string) *yaml.Node {
	if n := o.vals[name]; n != nil {
		return n
	}
	if n := o.keys[name]; n != nil {
		return n
	}
	return o.node
}

func (o *obj) sub(name string) string { return joinPath(o.path, name) }

func joinPath(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// pairs yields the key/value pairs of mapping n with aliases resolved,
// skipping a pair either side of which resolves to nothing (yaml.v3 binds
// every alias it decodes, so in a parsed document that is none).
func pairs(n *yaml.Node) iter.Seq2[*yaml.Node, *yaml.Node] {
	return func(yield func(k, v *yaml.Node) bool) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := resolveAlias(n.Content[i]), resolveAlias(n.Content[i+1])
			if k != nil && v != nil && !yield(k, v) {
				return
			}
		}
	}
}

// isNull reports a scalar that resolves to null: null, ~ or an empty plain
// value.
func isNull(v *yaml.Node) bool {
	return v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null"
}

func (c *checker) spend() bool {
	c.budget--
	return c.budget >= 0
}

// scalarTag returns the resolved YAML tag of a scalar, and false for tags
// OpenShell's serde_yml cannot decode into the policy types.
func (c *checker) scalarTag(n *yaml.Node, path string) (string, bool) {
	tag := n.ShortTag()
	switch tag {
	case "!!str", "!!int", "!!bool", "!!null", "!!float", "!!timestamp", "!!binary":
		return tag, true
	}
	c.errorf(n, path, CodeYAMLFeature, "remove the tag", "custom YAML tag %s is not supported", n.Tag)
	return "", false
}

// walkStruct type-checks a mapping against def and returns its fields. It
// returns nil when n is not a mapping (after reporting it).
func (c *checker) walkStruct(n *yaml.Node, path string, def *structDef) *obj {
	n = resolveAlias(n)
	if n == nil || !c.spend() {
		if c.budget == -1 {
			c.errorf(n, path, CodeYAMLFeature, "expand aliases by hand", "document expands to too many nodes (alias bomb?)")
		}
		return nil
	}
	if isEmptyPlain(n) {
		n = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	}
	if n.Kind != yaml.MappingNode {
		c.notMapping(n, path, def)
		return nil
	}
	o := &obj{node: n, path: path, keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{},
		kids: map[string]*obj{}, lists: map[string][]*obj{}, maps: map[string][]entry{}}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		c.walkStructField(o, def, seen, n.Content[i], n.Content[i+1])
	}
	c.checkRequired(o, def, seen)
	return o
}

// checkRequired reports each required field of def that the walked mapping
// o lacks (seen holds the field names its keys spelled).
func (c *checker) checkRequired(o *obj, def *structDef, seen map[string]bool) {
	for _, f := range def.fields {
		if f.required && o.keys[f.name] == nil && !seen[f.name] {
			c.errorf(o.node, joinPath(o.path, f.name), CodeRequired, requiredHint(f.name), "missing required field %q in %s", f.name, def.name)
		}
	}
}

// notMapping reports a struct whose node is not a mapping.
func (c *checker) notMapping(n *yaml.Node, path string, def *structDef) {
	if path == "" {
		c.errorf(n, path, CodeType, "start the file with `version: 1`", "policy must be a YAML mapping, got %s", describe(n))
		return
	}
	c.errorf(n, path, CodeType, "", "%s must be a mapping, got %s", def.name, describe(n))
}

// walkStructField checks one key/value pair of a struct mapping: the key is a
// known, unique field available in the target version, then its value.
func (c *checker) walkStructField(o *obj, def *structDef, seen map[string]bool, key, v *yaml.Node) {
	path := o.path
	k := resolveAlias(key)
	if k == nil || k.Kind != yaml.ScalarNode {
		c.errorf(k, path, CodeType, "", "keys must be plain strings")
		return
	}
	name := k.Value
	fpath := joinPath(path, name)
	if seen[name] {
		c.duplicateField(k, fpath)
		return
	}
	seen[name] = true
	f := def.field(name)
	if f == nil {
		c.errorf(k, fpath, CodeUnknownField, unknownFieldHint(name, def), "unknown field %q in %s", name, def.name)
		return
	}
	o.keys[name] = k
	if f.since != "" && !c.supports(f.since) {
		since, _ := openshell.Since(f.since)
		c.errorf(k, fpath, CodeFieldTooNew, fmt.Sprintf("target OpenShell %s or later, or remove the field", since),
			"field %q needs OpenShell %s; %s rejects it as an unknown field", name, since, c.version)
		return
	}
	c.walkField(o, f, v, fpath)
}

func unknownFieldHint(name string, def *structDef) string {
	if name == "<<" {
		return "OpenShell does not apply YAML merge keys; write the fields out"
	}
	if s := suggest(name, def); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	return "OpenShell rejects unknown fields; check the spelling"
}

func requiredHint(name string) string {
	switch name {
	case "version":
		return "add `version: 1`"
	case "allow":
		return "wrap the match in `allow:`, e.g. `- allow: {method: GET, path: \"/**\"}`"
	}
	return ""
}

// walkField checks one field value against its kind and records it on o.
func (c *checker) walkField(o *obj, f *fieldDef, v *yaml.Node, path string) {
	v = resolveAlias(v)
	if v == nil || !c.spend() || c.nullField(f, v, path) {
		return
	}
	switch f.kind {
	case kString, kInt, kBool:
		c.walkScalar(o, f, v, path)
	case kStringList, kIntList:
		c.walkScalarList(o, f, v, path)
	case kStruct:
		c.walkKid(o, f, v, path)
	case kList:
		c.walkList(o, f, v, path)
	case kMap:
		c.walkMap(o, f, v, path)
	case kMatcher:
		c.walkMatcher(o, f, v, path)
	case kMatcherMap, kParamMap, kOpaqueMap:
		c.walkValueMap(o, f, v, path)
	}
}

// walkScalar checks a string, integer or boolean.
func (c *checker) walkScalar(o *obj, f *fieldDef, v *yaml.Node, path string) {
	if c.scalar(v, path, f.kind, f.max) {
		o.vals[f.name] = v
	}
}

// walkKid checks a nested struct.
func (c *checker) walkKid(o *obj, f *fieldDef, v *yaml.Node, path string) {
	if kid := c.walkStruct(v, path, f.def); kid != nil {
		o.kids[f.name] = kid
		o.vals[f.name] = v
	}
}

// walkMatcher checks a query or tool matcher.
func (c *checker) walkMatcher(o *obj, f *fieldDef, v *yaml.Node, path string) {
	if c.matcher(v, path) {
		o.vals[f.name] = v
	}
}

// nullField reports whether v is a null the field cannot hold as a value:
// skipped when the field is nullable, an error otherwise. Strings take null
// as a scalar.
//
// serde_yml reads an empty plain value (`endpoints:` with nothing after it)
// as an empty sequence, map or struct (deserialize_seq/deserialize_map in
// serde_yaml 0.9's de.rs, which serde_yml forks), but an explicit `null` or
// `~` only as an Option's None. So an empty value of a list or map field is
// an empty list or map, and of a struct field an empty struct (walkStruct).
func (c *checker) nullField(f *fieldDef, v *yaml.Node, path string) bool {
	if !isNull(v) || f.kind == kString {
		return false
	}
	if f.nullable {
		return true
	}
	if isEmptyPlain(v) && !slices.Contains(nullOnlyKinds, f.kind) {
		return f.kind != kStruct // a struct is walked as an empty mapping
	}
	c.errorf(v, path, CodeType, "give a value or remove the key", "%s must be %s, got null", f.name, kindNames[f.kind])
	return true
}

// nullOnlyKinds are the kinds serde_yml reads an empty plain value into
// only as null; the others take it as empty.
var nullOnlyKinds = []kind{kInt, kBool, kMatcher}

// isEmptyPlain reports an empty, untagged plain scalar: what `key:` with no
// value parses to.
func isEmptyPlain(v *yaml.Node) bool {
	return v != nil && v.Kind == yaml.ScalarNode && v.Value == "" && isPlain(v) && (v.Tag == "" || v.Tag == "!!null")
}

// walkScalarList checks a list of strings or integers.
func (c *checker) walkScalarList(o *obj, f *fieldDef, v *yaml.Node, path string) {
	if v.Kind != yaml.SequenceNode {
		c.errorf(v, path, CodeType, listHint(v), "%s must be %s, got %s", f.name, kindNames[f.kind], describe(v))
		return
	}
	ok := true
	elem := kString
	if f.kind == kIntList {
		elem = kInt
	}
	for i, e := range v.Content {
		e = resolveAlias(e)
		if e == nil || !c.scalar(e, fmt.Sprintf("%s[%d]", path, i), elem, f.max) {
			ok = false
		}
	}
	if ok {
		o.vals[f.name] = v
	}
}

// walkList checks a list of structs.
func (c *checker) walkList(o *obj, f *fieldDef, v *yaml.Node, path string) {
	if v.Kind != yaml.SequenceNode {
		c.errorf(v, path, CodeType, listHint(v), "%s must be %s, got %s", f.name, kindNames[f.kind], describe(v))
		return
	}
	items := make([]*obj, 0, len(v.Content))
	for i, e := range v.Content {
		if item := c.walkStruct(e, fmt.Sprintf("%s[%d]", path, i), f.def); item != nil {
			items = append(items, item)
		}
	}
	o.lists[f.name] = items
	o.vals[f.name] = v
}

// Duplicate keys. OpenShell reads a policy with serde_yml 0.0.12
// (serde_yml::from_str, openshell-policy/src/lib.rs:1027 @ v0.0.111, :961 @
// v0.0.83), whose deserializer hands every key/value pair of a mapping to
// the visitor without looking for repeats (MapAccess, serde_yml src/de.rs:
// 911-960 @ 0.0.12; only its own Value/Mapping type refuses them,
// mapping.rs:1005). What a repeat does is the target type's business:
//
//   - a struct field twice (two `port:` in an endpoint, two `version:`) is
//     serde_derive's "duplicate field" error (serde_derive/src/de/struct_.rs:
//     269 @ serde 1.0.228, the version both tags lock): OpenShell refuses the
//     file, an error here;
//   - a key twice in a BTreeMap field (network_policies, network_middlewares,
//     graphql_persisted_queries, query, params and nested params maps; lib.rs:
//     66, 68, 163, 328, 338, 356 @ v0.0.111; :51, 138, 295, 305, 323 @
//     v0.0.83) is inserted again (map_impl, serde_core/src/de/impls.rs:1543
//     @ serde 1.0.228): the file loads and the last entry silently replaces
//     the earlier one, a trap here. Each value is still deserialized in turn,
//     so a shape error in a dropped entry still refuses the file.

// duplicateField reports k, a struct field repeated in its mapping: serde's
// "duplicate field", which refuses the file.
func (c *checker) duplicateField(k *yaml.Node, path string) {
	c.errorf(k, path, CodeDuplicateKey, "keep one", "duplicate key %q", k.Value)
}

// noteMapKey records k, a key of the BTreeMap-typed mapping at path, in
// seen; when seen already holds it, it reports the duplicate instead and
// returns true.
func (c *checker) noteMapKey(seen map[string]*yaml.Node, k *yaml.Node, path string) bool {
	if first := seen[k.Value]; first != nil {
		c.duplicateMapKey(k, joinPath(path, k.Value), first)
		return true
	}
	seen[k.Value] = k
	return false
}

// duplicateMapKey reports k, a key of a BTreeMap-typed mapping that repeats
// the key at line first, as the trap it is.
func (c *checker) duplicateMapKey(k *yaml.Node, path string, first *yaml.Node) {
	c.trapf(k, path, CodeDuplicateKey, "rename or merge the entries",
		"duplicate key %q: OpenShell loads the file and keeps only the last entry; the one at line %d is silently dropped", k.Value, first.Line)
}

// walkMap checks a map of structs keyed by name, keeping document order.
// A repeated key replaces its earlier entry in place, as OpenShell's
// BTreeMap does; both values are walked.
func (c *checker) walkMap(o *obj, f *fieldDef, v *yaml.Node, path string) {
	if v.Kind != yaml.MappingNode {
		c.errorf(v, path, CodeType, "", "%s must be %s, got %s", f.name, kindNames[f.kind], describe(v))
		return
	}
	seen := map[string]*yaml.Node{}
	var entries []entry
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := resolveAlias(v.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			c.errorf(k, path, CodeType, "", "keys of %s must be strings", f.name)
			continue
		}
		if c.noteMapKey(seen, k, path) {
			entries = slices.DeleteFunc(entries, func(e entry) bool { return e.key == k.Value })
		}
		if item := c.walkStruct(v.Content[i+1], joinPath(path, k.Value), f.def); item != nil {
			entries = append(entries, entry{key: k.Value, keyNode: k, val: item})
		}
	}
	o.maps[f.name] = entries
	o.vals[f.name] = v
}

// walkValueMap checks a map of matchers, MCP params or opaque mappings.
func (c *checker) walkValueMap(o *obj, f *fieldDef, v *yaml.Node, path string) {
	if v.Kind != yaml.MappingNode {
		c.errorf(v, path, CodeType, "", "%s must be %s, got %s", f.name, kindNames[f.kind], describe(v))
		return
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := resolveAlias(v.Content[i]), resolveAlias(v.Content[i+1])
		if k == nil {
			continue
		}
		if k.Kind == yaml.ScalarNode {
			c.noteMapKey(seen, k, path)
		}
		if val != nil {
			c.walkMapValue(f, val, joinPath(path, k.Value))
		}
	}
	o.vals[f.name] = v
}

// walkMapValue checks one value of a matcher, params or opaque map.
func (c *checker) walkMapValue(f *fieldDef, val *yaml.Node, kp string) {
	switch f.kind {
	case kMatcherMap:
		c.matcher(val, kp)
	case kParamMap:
		c.paramMatcher(val, kp, 0)
	case kOpaqueMap:
		if val.Kind != yaml.MappingNode {
			c.errorf(val, kp, CodeType, "", "%s entries must be mappings, got %s", f.name, describe(val))
		}
	}
}

func listHint(v *yaml.Node) string {
	if v.Kind == yaml.ScalarNode {
		return "write a one-element list: [" + v.Value + "]"
	}
	return ""
}

func describe(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%s %q", tagWord(n.ShortTag()), n.Value)
	}
	return "an unsupported node"
}

// tagWord names a YAML tag in a message: the tag without its !! prefix,
// except for the three abbreviated ones.
func tagWord(tag string) string {
	return cmp.Or(tagWords[tag], strings.TrimPrefix(tag, "!!"))
}

var tagWords = map[string]string{"!!str": "string", "!!int": "integer", "!!bool": "boolean"}

func lastSegment(path string) string {
	if i := strings.LastIndexAny(path, "."); i >= 0 {
		return path[i+1:]
	}
	return path
}

// suggest returns the known field of def closest to name, if close enough.
func suggest(name string, def *structDef) string {
	names := make([]string, len(def.fields))
	for i, f := range def.fields {
		names[i] = f.name
	}
	return didyoumean.Closest(name, names)
}
