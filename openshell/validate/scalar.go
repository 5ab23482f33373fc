package validate

import (
	"fmt"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"gopkg.in/yaml.v3"
)

// OpenShell decodes policies with serde_yml, whose scalar rules differ from
// YAML's core schema and from yaml.v3's tags. The functions here mirror them:
//
//   - a String field takes any scalar verbatim (1000 is "1000", true is "true",
//     even null is "null");
//   - integer and boolean fields take only plain (unquoted) scalars, integers
//     in decimal (no leading zeros), 0x, 0o or 0b form with an optional "+",
//     booleans spelled true/True/TRUE/false/False/FALSE;
//   - untagged enums (query/tool matchers) buffer the scalar first, so a plain
//     null, boolean, integer or float there is not a string.
//
// The scalar rules themselves are the model's (openshell/serde.go); this file
// applies them to the policy's fields.

// isPlain reports a scalar written without quotes or a block style.
func isPlain(v *yaml.Node) bool {
	return v.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
}

// intValue returns the value of a well-typed integer scalar (0 when it is
// not one).
func intValue(s string) int64 {
	n, ok := openshell.SerdeUint(s)
	if !ok || n > 1<<62 {
		return 0
	}
	return int64(n)
}

// scalar checks a scalar against a string, integer or boolean kind, as
// serde_yml would decode it.
func (c *checker) scalar(v *yaml.Node, path string, k kind, max int64) bool {
	if v.Kind != yaml.ScalarNode {
		c.errorf(v, path, CodeType, "", "%s must be %s, got %s", lastSegment(path), kindNames[k], describe(v))
		return false
	}
	if _, ok := c.scalarTag(v, path); !ok {
		return false
	}
	field := lastSegment(path)
	switch k {
	case kString:
		c.stringScalar(v, path, field)
		return true
	case kBool:
		return c.boolScalar(v, path, field)
	case kInt:
		return c.intScalar(v, path, field, max)
	}
	return false
}

// stringScalar warns about a plain null spelling in a string field, which
// serde_yml reads as that text.
func (c *checker) stringScalar(v *yaml.Node, path, field string) {
	if isPlain(v) && v.Value != "" && openshell.SerdeNull(v.Value) {
		c.warnf(v, path, CodeType, "remove the key to leave the field unset, or quote the value",
			"%s: %s is read as the literal string %q, not as an unset field", field, v.Value, v.Value)
	}
}

// boolScalar checks a plain serde_yml boolean.
func (c *checker) boolScalar(v *yaml.Node, path, field string) bool {
	if _, ok := openshell.SerdeBool(v.Value); ok && isPlain(v) {
		return true
	}
	c.errorf(v, path, CodeType, "write true or false, unquoted", "%s must be a boolean, got %s", field, describe(v))
	return false
}

// intScalar checks a plain unsigned integer of at most max.
func (c *checker) intScalar(v *yaml.Node, path, field string, max int64) bool {
	if !isPlain(v) {
		c.errorf(v, path, CodeType, "remove the quotes", "%s must be an integer, got quoted %q", field, v.Value)
		return false
	}
	n, ok := openshell.SerdeUint(v.Value)
	if !ok {
		c.errorf(v, path, CodeType, "write a plain decimal number", "%s must be an integer between 0 and %d, got %s", field, max, v.Value)
		return false
	}
	if n > uint64(max) {
		c.errorf(v, path, CodeType, "", "%s must be an integer between 0 and %d, got %s", field, max, v.Value)
		return false
	}
	return true
}

// globString checks a matcher glob. Matchers are untagged enums in
// OpenShell, so a plain null, boolean or number matches no form: quote it.
func (c *checker) globString(v *yaml.Node, path string) bool {
	if v.Kind != yaml.ScalarNode {
		c.errorf(v, path, CodeType, "", "glob must be a string, got %s", describe(v))
		return false
	}
	if _, ok := c.scalarTag(v, path); !ok {
		return false
	}
	if isPlain(v) {
		if t := openshell.SerdePlainType(v.Value); t != "string" {
			c.errorf(v, path, CodeType, fmt.Sprintf("quote it: %q", v.Value),
				"glob must be a string, got %s %s, which matches no OpenShell matcher form", t, v.Value)
			return false
		}
	}
	return true
}
