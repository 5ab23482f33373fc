package denial

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// jsonScanner reads one JSON text in place, checking its syntax as
// encoding/json does (RFC 8259: no control byte in a string, only the
// escapes \" \\ \/ \b \f \n \r \t \uXXXX, numbers without a leading zero
// or '+'), and stops (false) at the first byte it does not read.
type jsonScanner struct {
	s     string
	i     int
	depth int
}

// fastDepth bounds the nesting scanOCSF reads; a deeper line is left to
// encoding/json (which allows 10000 levels).
const fastDepth = 128

// space skips JSON whitespace.
func (sc *jsonScanner) space() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, 0 at the end.
func (sc *jsonScanner) peek() byte {
	sc.space()
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

// object reads an object (at '{'), calling member with each key (without
// its quotes; plain when it has no escape) and the scanner at its value.
func (sc *jsonScanner) object(member func(key string, plain bool) bool) bool {
	if !sc.enter() {
		return false
	}
	if sc.peek() == '}' {
		return sc.leave()
	}
	for {
		if sc.peek() != '"' {
			return false
		}
		key, plain, ok := sc.str()
		if !ok || sc.peek() != ':' {
			return false
		}
		sc.i++
		sc.space()
		if !member(key[1:len(key)-1], plain) {
			return false
		}
		switch sc.peek() {
		case ',':
			sc.i++
		case '}':
			return sc.leave()
		default:
			return false
		}
	}
}

// array reads an array (at '[').
func (sc *jsonScanner) array() bool {
	if !sc.enter() {
		return false
	}
	if sc.peek() == ']' {
		return sc.leave()
	}
	for {
		if !sc.skip() {
			return false
		}
		switch sc.peek() {
		case ',':
			sc.i++
		case ']':
			return sc.leave()
		default:
			return false
		}
	}
}

// enter steps into an object or array, within fastDepth.
func (sc *jsonScanner) enter() bool {
	sc.i++
	sc.depth++
	return sc.depth <= fastDepth
}

// leave steps out of an object or array, past its closing byte.
func (sc *jsonScanner) leave() bool {
	sc.i++
	sc.depth--
	return true
}

// skip reads any value.
func (sc *jsonScanner) skip() bool {
	switch c := sc.peek(); {
	case c == '{':
		return sc.object(func(string, bool) bool { return sc.skip() })
	case c == '[':
		return sc.array()
	case c == '"':
		_, _, ok := sc.str()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		_, _, ok := sc.number()
		return ok
	}
	return sc.literal("true") || sc.literal("false") || sc.literal("null")
}

// literal reads word when it is next.
func (sc *jsonScanner) literal(word string) bool {
	if len(sc.s)-sc.i >= len(word) && sc.s[sc.i:sc.i+len(word)] == word {
		sc.i += len(word)
		return true
	}
	return false
}

// str reads a string (at '"') and returns it with its quotes; plain when
// it has no escape.
func (sc *jsonScanner) str() (tok string, plain, ok bool) {
	start := sc.i
	plain = true
	for sc.i++; sc.i < len(sc.s); {
		switch c := sc.s[sc.i]; {
		case c == '"':
			sc.i++
			return sc.s[start:sc.i], plain, true
		case c == '\\':
			plain = false
			if !sc.escape() {
				return "", false, false
			}
		case c < 0x20:
			return "", false, false
		default:
			sc.i++
		}
	}
	return "", false, false
}

// escape reads an escape (at '\').
func (sc *jsonScanner) escape() bool {
	if sc.i+1 >= len(sc.s) {
		return false
	}
	switch sc.s[sc.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		sc.i += 2
		return true
	case 'u':
		if sc.i+6 > len(sc.s) || !isHex4(sc.s[sc.i+2:sc.i+6]) {
			return false
		}
		sc.i += 6
		return true
	}
	return false
}

// isHex4 reports four hexadecimal digits.
func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		if c := s[i] | 0x20; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// number reads a number; integer when it has neither fraction nor
// exponent.
func (sc *jsonScanner) number() (tok string, integer, ok bool) {
	start := sc.i
	if sc.at('-') {
		sc.i++
	}
	if sc.at('0') {
		sc.i++
	} else if !sc.digits() {
		return "", false, false
	}
	integer = true
	if sc.at('.') {
		sc.i++
		if !sc.digits() {
			return "", false, false
		}
		integer = false
	}
	if sc.at('e') || sc.at('E') {
		sc.i++
		if sc.at('+') || sc.at('-') {
			sc.i++
		}
		if !sc.digits() {
			return "", false, false
		}
		integer = false
	}
	return sc.s[start:sc.i], integer, true
}

// at reports whether the next byte is c.
func (sc *jsonScanner) at(c byte) bool {
	return sc.i < len(sc.s) && sc.s[sc.i] == c
}

// digits reads one or more decimal digits.
func (sc *jsonScanner) digits() bool {
	start := sc.i
	for sc.i < len(sc.s) && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' {
		sc.i++
	}
	return sc.i > start
}

// isNull reads null when it is next (a null field keeps its zero value).
func (sc *jsonScanner) isNull() bool {
	return sc.literal("null")
}

// stringValue reads a string field into dst, setting *has when has is not
// nil; an escaped string, or one that is not valid UTF-8, is decoded by
// encoding/json (which replaces bad bytes with U+FFFD).
func (sc *jsonScanner) stringValue(dst *string, has *bool) bool {
	if sc.isNull() {
		return true
	}
	if sc.peek() != '"' {
		return false
	}
	tok, plain, ok := sc.str()
	if !ok {
		return false
	}
	if !plain || !utf8.ValidString(tok) {
		return decodeString(tok, dst, has)
	}
	*dst = tok[1 : len(tok)-1]
	setHas(has)
	return true
}

// decodeString decodes a string token with encoding/json.
func decodeString(tok string, dst *string, has *bool) bool {
	var v string
	if json.Unmarshal([]byte(tok), &v) != nil {
		return false
	}
	*dst = v
	setHas(has)
	return true
}

// intValue reads an int field (encoding/json: an integer that fits an int).
func (sc *jsonScanner) intValue(dst *int, has *bool) bool {
	var n int64
	var set bool
	if !sc.integer(&n, strconv.IntSize, &set) {
		return false
	}
	if set {
		*dst = int(n)
		setHas(has)
	}
	return true
}

// int64Value reads an int64 field.
func (sc *jsonScanner) int64Value(dst *int64) bool {
	return sc.integer(dst, 64, nil)
}

// integer reads an integer of bits bits, or null.
func (sc *jsonScanner) integer(dst *int64, bits int, has *bool) bool {
	if sc.isNull() {
		return true
	}
	tok, integer, ok := sc.number()
	if !ok || !integer {
		return false
	}
	n, err := strconv.ParseInt(tok, 10, bits)
	if err != nil {
		return false
	}
	*dst = n
	setHas(has)
	return true
}

// setHas sets *has when has is not nil.
func setHas(has *bool) {
	if has != nil {
		*has = true
	}
}
