package validate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

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

// serdeUint parses a plain scalar the way serde_yml parses unsigned integers.
func serdeUint(s string) (uint64, bool) {
	u := strings.TrimPrefix(s, "+")
	if n, ok, prefixed := serdeRadixUint(u); prefixed {
		return n, ok
	}
	if u == "" || digitsButNotNumber(s) || !allDigits(u) {
		return 0, false
	}
	n, err := strconv.ParseUint(u, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// serdeRadixUint parses the 0x, 0o and 0b forms; prefixed is false when u
// has none of those prefixes.
func serdeRadixUint(u string) (n uint64, ok, prefixed bool) {
	for _, p := range []struct {
		prefix string
		base   int
	}{{"0x", 16}, {"0o", 8}, {"0b", 2}} {
		rest, found := strings.CutPrefix(u, p.prefix)
		if !found {
			continue
		}
		if rest == "" || rest[0] == '+' || rest[0] == '-' {
			return 0, false, true
		}
		n, err := strconv.ParseUint(rest, p.base, 64)
		if err != nil {
			return 0, false, true
		}
		return n, true, true
	}
	return 0, false, false
}

// allDigits reports whether s holds only the digits 0-9.
func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// digitsButNotNumber: leading zeros followed by digits is a string in YAML 1.2.
func digitsButNotNumber(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if len(s) < 2 || s[0] != '0' {
		return false
	}
	for _, r := range s[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func serdeBool(s string) (bool, bool) {
	switch s {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	return false, false
}

func serdeNull(s string) bool {
	switch s {
	case "", "null", "Null", "NULL", "~":
		return true
	}
	return false
}

// plainScalarType is what serde_yml makes of a plain scalar in an untagged
// position: "null", "boolean", "integer", "float" or "string".
func plainScalarType(s string) string {
	if serdeNull(s) {
		return "null"
	}
	if _, ok := serdeBool(s); ok {
		return "boolean"
	}
	if serdeInt(s) {
		return "integer"
	}
	if !digitsButNotNumber(s) && serdeFloat(s) {
		return "float"
	}
	return "string"
}

// serdeInt reports a plain scalar serde_yml reads as an integer: unsigned,
// or one minus sign before an unsigned integer.
func serdeInt(s string) bool {
	if _, ok := serdeUint(s); ok {
		return true
	}
	if !strings.HasPrefix(s, "-") || strings.HasPrefix(s, "--") {
		return false
	}
	_, ok := serdeUint(s[1:])
	return ok
}

// serdeFloat reports a plain scalar serde_yml reads as a float: the YAML
// infinities and NaNs, or a finite decimal float without _, hex or binary
// exponent forms.
func serdeFloat(s string) bool {
	switch strings.TrimPrefix(s, "+") {
	case ".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN":
		return true
	}
	if s == "-.inf" || s == "-.Inf" || s == "-.INF" {
		return true
	}
	f, err := strconv.ParseFloat(strings.TrimPrefix(s, "+"), 64)
	return err == nil && !strings.ContainsAny(s, "_xXpP") && !math.IsInf(f, 0) && !math.IsNaN(f)
}

func isPlain(v *yaml.Node) bool {
	return v.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
}

// intValue returns the value of a well-typed integer scalar (0 when it is
// not one).
func intValue(s string) int64 {
	n, ok := serdeUint(s)
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
	if isPlain(v) && v.Value != "" && serdeNull(v.Value) {
		c.warnf(v, path, CodeType, "remove the key to leave the field unset, or quote the value",
			"%s: %s is read as the literal string %q, not as an unset field", field, v.Value, v.Value)
	}
}

// boolScalar checks a plain serde_yml boolean.
func (c *checker) boolScalar(v *yaml.Node, path, field string) bool {
	if _, ok := serdeBool(v.Value); ok && isPlain(v) {
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
	n, ok := serdeUint(v.Value)
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
		if t := plainScalarType(v.Value); t != "string" {
			c.errorf(v, path, CodeType, fmt.Sprintf("quote it: %q", v.Value),
				"glob must be a string, got %s %s, which matches no OpenShell matcher form", t, v.Value)
			return false
		}
	}
	return true
}
