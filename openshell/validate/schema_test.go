package validate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// TestModelMatchesSchema: every YAML field of the hand-written Policy model
// exists in the generated validator table at the same path, with a kind
// that can hold the Go type, so the model cannot drift from policy.cue.
func TestModelMatchesSchema(t *testing.T) {
	n := checkModel(t, "policy", reflect.TypeFor[openshell.Policy](), policyDef)
	if n < 20 {
		t.Errorf("walked only %d model fields", n)
	}
}

func checkModel(t *testing.T, path string, typ reflect.Type, def *structDef) int {
	t.Helper()
	n := 0
	for sf := range typ.Fields() {
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if !sf.IsExported() || name == "-" {
			continue
		}
		n++
		fpath := path + "." + name
		f := def.field(name)
		if f == nil {
			t.Errorf("%s (%s.%s): not in the schema's %s", fpath, typ.Name(), sf.Name, def.name)
			continue
		}
		elem, want := modelKind(sf.Type)
		if f.kind == kOpaqueMap && want == kMap {
			continue // the schema does not look inside; the model may
		}
		if want != f.kind {
			t.Errorf("%s (%s.%s): Go type %s, schema kind %s", fpath, typ.Name(), sf.Name, sf.Type, kindNames[f.kind])
			continue
		}
		if f.def != nil {
			n += checkModel(t, fpath, elem, f.def)
		}
	}
	return n
}

// modelKind returns the schema kind of a Go field type (-1 for none) and,
// for a struct, list of structs or map of structs, the element type.
func modelKind(typ reflect.Type) (reflect.Type, kind) {
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ.Kind() {
	case reflect.String:
		return nil, kString
	case reflect.Int, reflect.Int32, reflect.Uint32:
		return nil, kInt
	case reflect.Bool:
		return nil, kBool
	case reflect.Struct:
		if typ == reflect.TypeFor[openshell.QueryMatch]() {
			return nil, kMatcher
		}
		return typ, kStruct
	case reflect.Slice:
		switch e := typ.Elem(); e.Kind() {
		case reflect.String:
			return nil, kStringList
		case reflect.Int:
			return nil, kIntList
		case reflect.Struct:
			return e, kList
		}
	case reflect.Map:
		if typ.Elem() == reflect.TypeFor[openshell.QueryMatch]() {
			return nil, kMatcherMap
		}
		if typ.Elem() == reflect.TypeFor[openshell.ParamMatch]() {
			return nil, kParamMap
		}
		if typ.Elem().Kind() == reflect.Struct {
			return typ.Elem(), kMap
		}
	}
	return nil, -1
}
