package openshell

import (
	"math"
	"strconv"
	"strings"
)

// OpenShell reads policies and provider profiles with serde_yml 0.0.12
// (Cargo.lock @ v0.0.83 and v0.0.111; serde_yml::from_str in
// crates/openshell-policy/src/lib.rs:961 @ v0.0.83, :1027 @ v0.0.111, and
// crates/openshell-providers/src/profiles.rs:977 @ v0.0.83, :1385 @
// v0.0.111), whose scalar rules are serde_yaml
// 0.9's (de.rs: parse_null, parse_bool, parse_unsigned_int,
// parse_negative_int, parse_f64, digits_but_not_number). They differ from
// YAML's core schema and from yaml.v3's tags, and the validator, the profile
// decoder and the fake all ask the same questions of a plain scalar, so the
// rules live here once:
//
//   - null is "", ~, null, Null or NULL;
//   - a boolean is true, True, TRUE, false, False or FALSE;
//   - an integer is decimal without leading zeros, or 0x, 0o or 0b, with one
//     optional sign ("+" only for an unsigned one): "-+5" and "+-5" are not;
//   - a float is .inf with an optional "+", -.inf, .nan exactly, or a finite
//     decimal float (Rust's f64 syntax: no '_', no hex) with one optional
//     sign.

// SerdeNull reports a plain scalar serde_yml reads as null.
func SerdeNull(s string) bool {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return true
	}
	return false
}

// SerdeBool parses a plain scalar as serde_yml parses a bool.
func SerdeBool(s string) (value, ok bool) {
	switch s {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	return false, false
}

// serdeRadixes are the prefixes of serde_yml's non-decimal integers.
var serdeRadixes = [...]struct {
	prefix string
	base   int
}{{"0x", 16}, {"0o", 8}, {"0b", 2}}

// SerdeUint parses a plain scalar as serde_yml parses a u64
// (parse_unsigned_int): one optional "+", then decimal digits without a
// leading zero, or a 0x, 0o or 0b prefix and digits of that base.
// strconv.ParseUint with an explicit base takes digits only: no sign, no
// '_', no prefix.
func SerdeUint(s string) (uint64, bool) {
	digits, base := strings.TrimPrefix(s, "+"), 10
	for _, r := range serdeRadixes {
		if rest, ok := strings.CutPrefix(digits, r.prefix); ok {
			digits, base = rest, r.base
			break
		}
	}
	if base == 10 && digitsButNotNumber(digits) {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// SerdeInt parses a plain scalar as serde_yml parses an i64:
// parse_unsigned_int, then parse_negative_int, which hands "-DIGITS" (or
// "-" and the digits after a -0x, -0o or -0b prefix) to i64::from_str_radix,
// which takes one sign: "-+5" is no integer.
func SerdeInt(s string) (int64, bool) {
	digits, neg := strings.CutPrefix(s, "-")
	if neg && strings.HasPrefix(digits, "+") {
		return 0, false
	}
	u, ok := SerdeUint(digits)
	switch {
	case !ok:
		return 0, false
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	case neg && u <= 1<<63:
		return -int64(u-1) - 1, true
	}
	return 0, false
}

// serdeInteger reports a plain scalar serde_yml reads as an integer in an
// untagged position: a u64, or a '-' and a u64's digits. (serde_yml goes on
// to 128 bits there; a magnitude above 2^64-1 is not named an integer here.)
func serdeInteger(s string) bool {
	if _, ok := SerdeUint(s); ok {
		return true
	}
	digits, neg := strings.CutPrefix(s, "-")
	if !neg || strings.HasPrefix(digits, "+") {
		return false
	}
	_, ok := SerdeUint(digits)
	return ok
}

// SerdeFloat reports a plain scalar serde_yml reads as a float (parse_f64):
// .inf, .Inf or .INF with one optional "+", -.inf, -.Inf or -.INF, .nan,
// .NaN or .NAN as written, or a finite decimal float with one optional sign.
func SerdeFloat(s string) bool {
	unpositive, plus := strings.CutPrefix(s, "+")
	if plus && strings.HasPrefix(unpositive, "+") || plus && strings.HasPrefix(unpositive, "-") {
		return false
	}
	switch {
	case unpositive == ".inf" || unpositive == ".Inf" || unpositive == ".INF",
		s == "-.inf" || s == "-.Inf" || s == "-.INF",
		s == ".nan" || s == ".NaN" || s == ".NAN":
		return true
	}
	// Go's ParseFloat also takes '_' between digits and hex floats, which
	// Rust's f64 parser does not; both take inf and nan, which parse_f64
	// refuses as not finite.
	f, err := strconv.ParseFloat(unpositive, 64)
	return err == nil && !strings.ContainsAny(s, "_xXpP") && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// SerdePlainType names what serde_yml makes of a plain scalar in an untagged
// position (an untagged enum buffers it first): "null", "boolean",
// "integer", "float" or "string". digits_but_not_number keeps a run of
// digits with a leading zero ("0443") a string.
func SerdePlainType(s string) string {
	switch {
	case SerdeNull(s):
		return "null"
	case isSerdeBool(s):
		return "boolean"
	case serdeInteger(s):
		return "integer"
	case !digitsButNotNumber(strings.TrimLeft(s, "+-")) && SerdeFloat(s):
		return "float"
	}
	return "string"
}

func isSerdeBool(s string) bool {
	_, ok := SerdeBool(s)
	return ok
}

// digitsButNotNumber: a leading zero followed by digits only is a string in
// YAML 1.2 (serde_yaml's digits_but_not_number, on the digits after any
// sign).
func digitsButNotNumber(digits string) bool {
	return len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0123456789") == ""
}
