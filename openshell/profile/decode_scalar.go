package profile

import (
	"fmt"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"gopkg.in/yaml.v3"
)

// resolve follows aliases, spends the visit budget and rejects custom tags.
// A nil node (an absent field) resolves to nil at no cost.
func (d *decoder) resolve(n *yaml.Node, path string) *yaml.Node {
	if n = deref(n); n == nil || n.Kind == yaml.AliasNode {
		return nil
	}
	d.budget--
	if d.budget < 0 {
		if d.budget == -1 {
			d.errorf(n, path, CodeYAMLFeature, "expand aliases by hand", "document expands to too many nodes (alias bomb?)")
		}
		return nil
	}
	switch n.ShortTag() {
	case "!!str", "!!int", "!!bool", "!!null", "!!float", "!!timestamp", "!!binary", "!!map", "!!seq", "!!merge":
		return n
	}
	d.errorf(n, path, CodeYAMLFeature, "remove the tag", "custom YAML tag %s is not supported", n.Tag)
	return nil
}

// deref follows at most 100 aliases from n (an alias still, then, is a
// cycle).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// str decodes a String field: serde_yml takes any scalar verbatim.
func (d *decoder) str(n *yaml.Node, path string) string {
	if n = d.resolve(n, path); n == nil {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, path, CodeType, "", "%s must be a string, got %s", last(path), describe(n))
		return ""
	}
	return n.Value
}

// untaggedStr decodes a string inside an untagged enum (matchers, binaries):
// serde buffers the scalar first, so a plain null, boolean or number there
// is not a string (the openshell validator's plainScalarType rule).
func (d *decoder) untaggedStr(n *yaml.Node, path string) (string, bool) {
	if n = d.resolve(n, path); n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, path, CodeType, "", "%s must be a string, got %s", last(path), describe(n))
		return "", false
	}
	if isPlain(n) {
		if t := openshell.SerdePlainType(n.Value); t != "string" {
			d.errorf(n, path, CodeType, "quote it", "%s must be a string, got the %s %s", last(path), t, n.Value)
			return "", false
		}
	}
	return n.Value, true
}

func (d *decoder) boolean(n *yaml.Node, path string) bool {
	if n = d.resolve(n, path); n == nil {
		return false
	}
	if n.Kind == yaml.ScalarNode && isPlain(n) {
		switch n.Value {
		case "true", "True", "TRUE":
			return true
		case "false", "False", "FALSE":
			return false
		}
	}
	d.errorf(n, path, CodeType, "write true or false, unquoted", "%s must be a boolean, got %s", last(path), describe(n))
	return false
}

// optBool decodes an Option<bool>: null is unset.
func (d *decoder) optBool(n *yaml.Node, path string) *bool {
	if !present(n) {
		return nil
	}
	b := d.boolean(n, path)
	return &b
}

// uint decodes an unsigned integer of at most max (u32, u64).
func (d *decoder) uint(n *yaml.Node, path string, max uint64) uint64 {
	if n = d.resolve(n, path); n == nil {
		return 0
	}
	if n.Kind == yaml.ScalarNode && isPlain(n) {
		if u, ok := openshell.SerdeUint(n.Value); ok {
			if u > max {
				d.errorf(n, path, CodeType, "", "%s %s is out of range (at most %d)", last(path), n.Value, max)
				return 0
			}
			return u
		}
	}
	d.errorf(n, path, CodeType, "write a plain unsigned integer", "%s must be an unsigned integer, got %s", last(path), describe(n))
	return 0
}

// int64 decodes a signed 64-bit integer.
func (d *decoder) int64(n *yaml.Node, path string) int64 {
	if n = d.resolve(n, path); n == nil {
		return 0
	}
	if n.Kind == yaml.ScalarNode && isPlain(n) {
		if i, ok := openshell.SerdeInt(n.Value); ok {
			return i
		}
	}
	d.errorf(n, path, CodeType, "write a plain integer", "%s must be an integer, got %s", last(path), describe(n))
	return 0
}

// seq returns the items of a Vec field; null or an empty value is empty.
func (d *decoder) seq(n *yaml.Node, path string) []*yaml.Node {
	if n = d.resolve(n, path); !present(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, CodeType, "write a YAML list", "%s must be a list, got %s", last(path), describe(n))
		return nil
	}
	return n.Content
}

// items decodes each item of the Vec field n at path with item, at
// path[i].
func items[T any](d *decoder, n *yaml.Node, path string, item func(n *yaml.Node, path string) T) []T {
	var out []T
	for i, it := range d.seq(n, path) {
		out = append(out, item(it, fmt.Sprintf("%s[%d]", path, i)))
	}
	return out
}

// someItems is items for an item decoder that drops an item it cannot
// decode (ok false, reported).
func someItems[T any](d *decoder, n *yaml.Node, path string, item func(n *yaml.Node, path string) (T, bool)) []T {
	var out []T
	for i, it := range d.seq(n, path) {
		if v, ok := item(it, fmt.Sprintf("%s[%d]", path, i)); ok {
			out = append(out, v)
		}
	}
	return out
}

// strList decodes a Vec<String>; untagged items are strings inside an
// untagged enum (untaggedStr).
func (d *decoder) strList(n *yaml.Node, path string, untagged bool) []string {
	return items(d, n, path, func(it *yaml.Node, p string) string {
		d.pos[p] = position{it.Line, it.Column}
		if untagged {
			s, _ := d.untaggedStr(it, p)
			return s
		}
		return d.str(it, p)
	})
}

func (d *decoder) u32List(n *yaml.Node, path string) []uint32 {
	return items(d, n, path, func(it *yaml.Node, p string) uint32 {
		d.pos[p] = position{it.Line, it.Column}
		return uint32(d.uint(it, p, 1<<32-1))
	})
}

// mapEntries returns the entries of a HashMap field; a key twice is an error.
func (d *decoder) mapEntries(n *yaml.Node, path string) ([]string, []*yaml.Node) {
	if n = d.resolve(n, path); !present(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, CodeType, "", "%s must be a mapping, got %s", last(path), describe(n))
		return nil, nil
	}
	var keys []string
	var vals []*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := d.resolve(n.Content[i], path)
		if k == nil {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, CodeType, "", "%s keys must be strings", last(path))
			continue
		}
		if seen[k.Value] {
			d.errorf(k, join(path, k.Value), CodeDuplicateKey, "keep one", "duplicate entry with key %q", k.Value)
			continue
		}
		seen[k.Value] = true
		keys = append(keys, k.Value)
		vals = append(vals, n.Content[i+1])
		d.pos[join(path, k.Value)] = position{n.Content[i+1].Line, n.Content[i+1].Column}
	}
	return keys, vals
}

func (d *decoder) strMap(n *yaml.Node, path string) map[string]string {
	keys, vals := d.mapEntries(n, path)
	if keys == nil {
		return nil
	}
	out := map[string]string{}
	for i, k := range keys {
		out[k] = d.str(vals[i], join(path, k))
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func last(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

func isPlain(n *yaml.Node) bool {
	return n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
}

func isEmptyPlain(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Value == "" && isPlain(n) && (n.Tag == "" || n.Tag == "!!null")
}

// isNull reports a plain YAML null (Option fields take it as None).
func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n != nil && n.Kind == yaml.ScalarNode && isPlain(n) && openshell.SerdePlainType(n.Value) == "null"
}

// present reports a value given and not null (an Option field's Some).
func present(n *yaml.Node) bool { return n != nil && !isNull(n) }

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if !isPlain(n) {
			return fmt.Sprintf("the string %q", n.Value)
		}
		return fmt.Sprintf("the %s %q", openshell.SerdePlainType(n.Value), n.Value)
	}
	return "an alias"
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
