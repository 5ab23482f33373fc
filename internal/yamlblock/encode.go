// Package yamlblock writes block YAML byte for byte as yaml.v3's Encoder
// does with SetIndent(2), for a subset of values, without yaml.v3's
// per-document event buffer.
package yamlblock

import (
	"bytes"
	"encoding"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"gopkg.in/yaml.v3"
)

// blockEncoder writes one document; see Encode.
type blockEncoder struct {
	buf *bytes.Buffer
}

// ErrOutsideSubset is returned for a value Encode does not write exactly as
// yaml.v3 would; the caller encodes it with yaml.v3 instead.
var ErrOutsideSubset = errors.New("value outside yamlblock's subset")

// Encode appends v's document to buf, byte for byte what yaml.v3's Encoder
// writes with SetIndent(2), for the values a compiled policy holds:
// structs, string-keyed maps, slices of non-slices, strings, integers,
// booleans, and yaml.Marshaler values that return those. Anything else, and
// any string whose quoting it does not reproduce exactly (see scalarStyle),
// returns ErrOutsideSubset, with buf partly written: the caller truncates
// it and uses yaml.v3. So does an error from a MarshalYAML method.
//
// It exists for speed: yaml.v3's emitter keeps every event of a document in
// a slice it never shrinks (emitterc.go, yaml_emitter_emit), some 100 KB per
// policy, which made encoding the largest allocator of `policy compile`.
// TestEncodeMatchesYAMLv3 and FuzzEncode hold it to yaml.v3's output.
func Encode(buf *bytes.Buffer, v any) error {
	e := blockEncoder{buf: buf}
	n, err := e.resolve(reflect.ValueOf(v))
	if err != nil {
		return err
	}
	switch kindOf(n) {
	case kindMapping:
		fields, err := e.entries(n)
		if err != nil {
			return err
		}
		if len(fields) == 0 {
			buf.WriteString("{}\n")
			return nil
		}
		return e.mapping(fields, 0, false)
	case kindScalar:
		s, err := e.scalar(n, false, e.column())
		if err != nil {
			return err
		}
		buf.WriteString(s)
		buf.WriteByte('\n')
		return nil
	}
	return ErrOutsideSubset // top-level sequences and nulls: never a policy
}

var (
	marshalerType     = reflect.TypeFor[yaml.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	nodeType          = reflect.TypeFor[yaml.Node]()
)

// resolve follows pointers, interfaces and MarshalYAML results to the value
// yaml.v3 encodes (encode.go, (*encoder).marshal); an invalid Value is null.
func (e *blockEncoder) resolve(v reflect.Value) (reflect.Value, error) {
	for {
		if !v.IsValid() {
			return v, nil
		}
		k := v.Kind()
		if (k == reflect.Pointer || k == reflect.Interface) && v.IsNil() {
			return reflect.Value{}, nil
		}
		t := v.Type()
		if t == nodeType || (k == reflect.Pointer && t.Elem() == nodeType) || t.PkgPath() == "time" {
			return v, ErrOutsideSubset
		}
		if t.Implements(marshalerType) {
			out, err := v.Interface().(yaml.Marshaler).MarshalYAML()
			if err != nil {
				return v, err
			}
			v = reflect.ValueOf(out)
			continue
		}
		if t.Implements(textMarshalerType) {
			return v, ErrOutsideSubset
		}
		if k == reflect.Pointer || k == reflect.Interface {
			v = v.Elem()
			continue
		}
		return v, nil
	}
}

type nodeKind int

const (
	kindScalar nodeKind = iota
	kindMapping
	kindSequence
	kindOther
)

func kindOf(v reflect.Value) nodeKind {
	if !v.IsValid() {
		return kindScalar // null
	}
	switch v.Kind() {
	case reflect.Struct, reflect.Map:
		return kindMapping
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return kindOther
		}
		return kindSequence
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return kindScalar
	}
	return kindOther
}

// blockEntry is one key and its resolved value.
type blockEntry struct {
	key   string
	value reflect.Value
}

// entries lists a struct's encoded fields in order, or a map's entries in
// yaml.v3's key order.
func (e *blockEncoder) entries(v reflect.Value) ([]blockEntry, error) {
	if v.Kind() == reflect.Map {
		if v.Type().Key().Kind() != reflect.String {
			return nil, ErrOutsideSubset
		}
		out := make([]blockEntry, 0, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			val, err := e.resolve(iter.Value())
			if err != nil {
				return nil, err
			}
			out = append(out, blockEntry{key: iter.Key().String(), value: val})
		}
		slices.SortFunc(out, func(a, b blockEntry) int {
			switch {
			case yamlKeyLess(a.key, b.key):
				return -1
			case yamlKeyLess(b.key, a.key):
				return 1
			}
			return 0
		})
		return out, nil
	}
	fields, err := structFieldsOf(v.Type())
	if err != nil {
		return nil, err
	}
	out := make([]blockEntry, 0, len(fields))
	for _, f := range fields {
		fv := v.Field(f.index)
		if f.omitEmpty && yamlIsZero(fv) {
			continue
		}
		val, err := e.resolve(fv)
		if err != nil {
			return nil, err
		}
		out = append(out, blockEntry{key: f.key, value: val})
	}
	return out, nil
}

// mapping writes entries at indent; inline means the first key follows a
// sequence dash already written.
func (e *blockEncoder) mapping(entries []blockEntry, indent int, inline bool) error {
	for i, en := range entries {
		key, err := e.scalarString(en.key, true, 0)
		if err != nil {
			return err
		}
		if i > 0 || !inline {
			e.indent(indent)
		}
		e.buf.WriteString(key)
		e.buf.WriteByte(':')
		if err := e.value(en.value, indent, false); err != nil {
			return err
		}
	}
	return nil
}

// value writes v after a key written at indent (dash false) or after a
// sequence dash written at indent (dash true): a scalar or an empty
// collection on that line; a mapping below the key, or from the dash's
// line on; a sequence below the key (never after a dash: "- - x" is
// outside the subset, and no policy field nests sequences).
func (e *blockEncoder) value(v reflect.Value, indent int, dash bool) error {
	switch kindOf(v) {
	case kindScalar:
		s, err := e.scalar(v, false, e.column()+1)
		if err != nil {
			return err
		}
		e.buf.WriteByte(' ')
		e.buf.WriteString(s)
		e.buf.WriteByte('\n')
		return nil
	case kindMapping:
		entries, err := e.entries(v)
		if err != nil {
			return err
		}
		switch {
		case len(entries) == 0:
			e.buf.WriteString(" {}\n")
			return nil
		case dash:
			e.buf.WriteByte(' ')
			return e.mapping(entries, indent+2, true)
		}
		e.buf.WriteByte('\n')
		return e.mapping(entries, indent+2, false)
	case kindSequence:
		switch {
		case v.Len() == 0:
			e.buf.WriteString(" []\n")
			return nil
		case dash:
			return ErrOutsideSubset
		}
		e.buf.WriteByte('\n')
		return e.sequence(v, indent+2)
	}
	return ErrOutsideSubset
}

// sequence writes a non-empty sequence's items at indent.
func (e *blockEncoder) sequence(v reflect.Value, indent int) error {
	for i := range v.Len() {
		item, err := e.resolve(v.Index(i))
		if err != nil {
			return err
		}
		e.indent(indent)
		e.buf.WriteByte('-')
		if err := e.value(item, indent, true); err != nil {
			return err
		}
	}
	return nil
}

func (e *blockEncoder) indent(n int) {
	for range n {
		e.buf.WriteByte(' ')
	}
}

// scalar renders a resolved scalar value (an invalid Value is null) that
// starts at column col.
func (e *blockEncoder) scalar(v reflect.Value, key bool, col int) (string, error) {
	if !v.IsValid() {
		return "null", nil
	}
	switch v.Kind() {
	case reflect.String:
		return e.scalarString(v.String(), key, col)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), nil
	}
	return "", ErrOutsideSubset
}

// scalarString renders a string key or value; a value starts at column
// col.
func (e *blockEncoder) scalarString(s string, key bool, col int) (string, error) {
	// A key over 128 characters is not a simple key: yaml.v3 writes it
	// with "? " (emitterc.go, yaml_emitter_check_simple_key).
	if key && len(s) > 128 {
		return "", ErrOutsideSubset
	}
	var out string
	switch scalarStyle(s) {
	case styleEmpty:
		return `""`, nil
	case stylePlain:
		out = s
	case styleSingleQuoted:
		out = "'" + strings.ReplaceAll(s, "'", "''") + "'"
	default:
		return "", ErrOutsideSubset
	}
	// yaml.v3 folds a plain or single-quoted value at a space past column
	// 80 (yaml_emitter_write_plain_scalar, _write_single_quoted_scalar;
	// best_width); keys never fold. A value that ends by column 80 has no
	// such space.
	if !key && col+len(out) > bestWidth && strings.IndexByte(s, ' ') >= 0 {
		return "", ErrOutsideSubset
	}
	return out, nil
}

// bestWidth is yaml.v3's default line width (emitterc.go,
// yaml_emitter_emit_stream_start).
const bestWidth = 80

// column is the column the next byte written lands in.
func (e *blockEncoder) column() int {
	b := e.buf.Bytes()
	return len(b) - 1 - bytes.LastIndexByte(b, '\n')
}

type scalarStyleKind int

const (
	styleOther scalarStyleKind = iota
	styleEmpty
	stylePlain
	styleSingleQuoted
)

// scalarStyle is the style yaml.v3 gives a string in block context, for
// strings of printable ASCII and spaces, which no style escapes; any other
// string is styleOther. (Spaces allow line folding: see scalarString.)
//
// yaml.v3 writes a string plain when it resolves, unquoted, to a string
// (resolve.go, resolve; encode.go, stringv) and the emitter allows plain
// block style for it (emitterc.go, yaml_emitter_analyze_scalar); a string
// that resolves to a string but may not be plain is single-quoted
// (yaml_emitter_select_scalar_style). Strings that resolve otherwise are
// double-quoted; resolving those needs yaml.v3's number and timestamp
// rules, so strings starting with a sign, a digit or a dot are styleOther,
// except the empty string, which resolves to null and is written "".
func scalarStyle(s string) scalarStyleKind {
	if s == "" {
		return styleEmpty
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] >= 0x7f {
			return styleOther
		}
	}
	switch s[0] {
	case '+', '-', '.', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return styleOther
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O', '~':
		if resolvesToOther(s) {
			return styleOther
		}
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' || hasBlockIndicator(s) {
		return styleSingleQuoted
	}
	return stylePlain
}

// resolvesToOther reports the words yaml.v3 reads as booleans or null
// (resolve.go, resolveMap) or refuses to write plain (encode.go, isOldBool).
func resolvesToOther(s string) bool {
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE",
		"null", "Null", "NULL", "~",
		"y", "Y", "yes", "Yes", "YES", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return true
	}
	return false
}

// hasBlockIndicator is yaml_emitter_analyze_scalar's block_indicators for a
// string of printable ASCII and spaces: a document marker, an indicator
// first, "?" or ":" first and followed by a space or the end, a ":"
// followed by a space or the end, a "#" after a space. ("-" first counts
// only before a space or the end, and scalarStyle already sends every
// string starting with "-" elsewhere.)
func hasBlockIndicator(s string) bool {
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		return true
	}
	followedByBlank := func(i int) bool { return i+1 == len(s) || s[i+1] == ' ' }
	switch s[0] {
	case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return true
	case '?', ':':
		if followedByBlank(0) {
			return true
		}
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case ':':
			if followedByBlank(i) {
				return true
			}
		case '#':
			if s[i-1] == ' ' {
				return true
			}
		}
	}
	return false
}

// yamlKeyLess is yaml.v3's order for string map keys (sorter.go,
// keyList.Less): letters compare by code point, runs of digits by value,
// non-letters before letters.
func yamlKeyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	digits := false
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			digits = unicode.IsDigit(ar[i])
			continue
		}
		al, bl := unicode.IsLetter(ar[i]), unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			if digits {
				return al
			}
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}

// yamlIsZero is yaml.v3's omitempty test (yaml.go, isZero).
func yamlIsZero(v reflect.Value) bool {
	kind := v.Kind()
	if z, ok := v.Interface().(yaml.IsZeroer); ok {
		if (kind == reflect.Pointer || kind == reflect.Interface) && v.IsNil() {
			return true
		}
		return z.IsZero()
	}
	switch kind {
	case reflect.String:
		return v.Len() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Struct:
		t := v.Type()
		for i := v.NumField() - 1; i >= 0; i-- {
			if t.Field(i).PkgPath != "" {
				continue
			}
			if !yamlIsZero(v.Field(i)) {
				return false
			}
		}
		return true
	}
	return false
}

// structField is one encoded field of a struct type.
type structField struct {
	index     int
	key       string
	omitEmpty bool
}

// structFields caches each struct type's encoded fields, like yaml.v3's
// structMap (and encoding/json's field cache): types never change, so the
// cache only grows to the number of policy types.
var structFields sync.Map // reflect.Type -> []structField

// structFieldsOf lists t's encoded fields in declaration order, as yaml.v3's
// getStructInfo does; inline and flow fields and embedded fields are
// outside the subset.
func structFieldsOf(t reflect.Type) ([]structField, error) {
	if f, ok := structFields.Load(t); ok {
		return f.([]structField), nil
	}
	var out []structField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil, ErrOutsideSubset
		}
		if f.PkgPath != "" {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "" && !strings.Contains(string(f.Tag), ":") {
			tag = string(f.Tag)
		}
		if tag == "-" {
			continue
		}
		name, flags, _ := strings.Cut(tag, ",")
		sf := structField{index: i, key: name}
		for _, flag := range strings.Split(flags, ",") {
			switch flag {
			case "":
			case "omitempty":
				sf.omitEmpty = true
			default:
				return nil, ErrOutsideSubset
			}
		}
		if sf.key == "" {
			sf.key = strings.ToLower(f.Name)
		}
		out = append(out, sf)
	}
	structFields.Store(t, out)
	return out, nil
}
