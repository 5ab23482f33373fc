package openshell

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Difference compares two policies as documents: what Marshal would write
// for each, without writing it. It returns "" when they are the same policy
// and otherwise the YAML path of the first difference (in schema order, map
// keys sorted), for example `network_policies.github.endpoints[0].host`.
//
// It sees a value as the encoder does: provenance and other fields tagged
// `yaml:"-"` are ignored; a type with a MarshalYAML method is compared by
// what that method returns (a Binary is its path); a nil slice or map equals
// an empty one, and a zero field equals an omitted one (both decode alike);
// numbers in free-form values (a middleware's config) compare by value
// whatever their Go type. The compiler uses it to check that every policy
// file it writes decodes to exactly the policy it linted, tested and
// validated.
func Difference(a, b *Policy) string {
	return difference(reflect.ValueOf(a), reflect.ValueOf(b), "")
}

var marshalerType = reflect.TypeFor[yaml.Marshaler]()

// difference walks a and b together; path is the YAML path so far.
func difference(a, b reflect.Value, path string) string {
	a, b = encoderView(a), encoderView(b)
	switch {
	case !a.IsValid() || !b.IsValid() || a.Kind() != b.Kind():
		if (isEmpty(a) && isEmpty(b)) || numbersEqual(a, b) {
			return ""
		}
		return orRoot(path)
	}
	switch a.Kind() {
	case reflect.Struct:
		if a.Type() != b.Type() {
			return orRoot(path)
		}
		return structDifference(a, b, path)
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return orRoot(path)
		}
		for i := range a.Len() {
			if d := difference(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		return mapDifference(a, b, path)
	case reflect.String:
		return unless(a.String() == b.String(), path)
	case reflect.Bool:
		return unless(a.Bool() == b.Bool(), path)
	}
	if _, ok := number(a); ok {
		return unless(numbersEqual(a, b), path)
	}
	return unless(a.Type() == b.Type() && reflect.DeepEqual(a.Interface(), b.Interface()), path)
}

// unless returns "" when same holds, else the path of the difference.
func unless(same bool, path string) string {
	if same {
		return ""
	}
	return orRoot(path)
}

// encoderView dereferences pointers and interfaces and replaces a value
// that has a MarshalYAML method by what it returns, as yaml.v3's encoder
// does; a nil pointer or interface becomes the invalid Value.
func encoderView(v reflect.Value) reflect.Value {
	for v.IsValid() {
		if v.Type().Implements(marshalerType) && !(v.Kind() == reflect.Pointer && v.IsNil()) {
			out, err := v.Interface().(yaml.Marshaler).MarshalYAML()
			if err != nil {
				// Marshal would fail on this value too; compare it as is.
				return v
			}
			v = reflect.ValueOf(out)
			continue
		}
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return reflect.Value{}
			}
			v = v.Elem()
		default:
			return v
		}
	}
	return v
}

// structDifference compares the encoded fields of two structs of one type.
func structDifference(a, b reflect.Value, path string) string {
	t := a.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if d := difference(a.Field(i), b.Field(i), join(path, name)); d != "" {
			return d
		}
	}
	return ""
}

// mapDifference compares two maps key by key, in sorted key order; a key
// missing on one side differs unless its value on the other is empty.
func mapDifference(a, b reflect.Value, path string) string {
	keys := map[string]reflect.Value{}
	for _, m := range []reflect.Value{a, b} {
		for _, k := range m.MapKeys() {
			keys[fmt.Sprint(k.Interface())] = k
		}
	}
	names := make([]string, 0, len(keys))
	for n := range keys {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		k := keys[n]
		if d := difference(a.MapIndex(k), b.MapIndex(k), join(path, n)); d != "" {
			return d
		}
	}
	return ""
}

// isEmpty reports whether v encodes as nothing or as an empty collection or
// zero scalar: the invalid Value, a zero scalar, an empty slice or map.
func isEmpty(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	case reflect.Struct:
		return false
	default:
		return v.IsZero()
	}
}

// numbersEqual reports whether a and b are numbers of equal value.
func numbersEqual(a, b reflect.Value) bool {
	x, okA := number(a)
	y, okB := number(b)
	return okA && okB && x == y
}

func number(v reflect.Value) (float64, bool) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint()), true
	case reflect.Float32, reflect.Float64:
		return v.Float(), true
	}
	return 0, false
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func orRoot(path string) string {
	if path == "" {
		return "(document)"
	}
	return path
}
