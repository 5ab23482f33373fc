package validate_test

import (
	"fmt"
	"slices"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"golang.org/x/mod/semver"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// allVersions lists every release between MinOpenShellVersion and
// MaxOpenShellVersion.
func allVersions(t *testing.T) []string {
	t.Helper()
	var out []string
	for p := 0; p < 1000; p++ {
		v := fmt.Sprintf("v0.0.%d", p)
		if semver.Compare(v, openshell.MinOpenShellVersion) >= 0 && semver.Compare(v, openshell.MaxOpenShellVersion) <= 0 {
			out = append(out, v)
		}
	}
	return out
}

// TestCUESchemaMatchesGoSchema checks the generated field table against
// policy.cue evaluated for every supported release (as PolicySchema and
// `cue vet` see it): every struct has exactly the same fields in both, so
// the generator's reading of the release gates is the CUE's.
func TestCUESchemaMatchesGoSchema(t *testing.T) {
	ctx := cuecontext.New()
	for _, v := range allVersions(t) {
		schema, err := policycue.PolicySchema(ctx, v)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		compareStruct(t, v, "policy", validate.SchemaFields(), schema)
	}
}

func compareStruct(t *testing.T, version, path string, fields []validate.SchemaField, v cue.Value) {
	t.Helper()
	var goFields []string
	for _, f := range fields {
		if f.Since == "" || openshell.Supports(f.Since, version) {
			goFields = append(goFields, f.Name)
		}
	}
	var cueFields []string
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		t.Fatalf("%s %s: %v", version, path, err)
	}
	for it.Next() {
		cueFields = append(cueFields, it.Selector().Unquoted())
	}
	slices.Sort(goFields)
	slices.Sort(cueFields)
	if !slices.Equal(goFields, cueFields) {
		t.Errorf("%s %s: Go fields %v, CUE fields %v", version, path, goFields, cueFields)
		return
	}
	for _, f := range fields {
		if f.Nested == validate.NestNone || (f.Since != "" && !openshell.Supports(f.Since, version)) {
			continue
		}
		fv := v.LookupPath(cue.MakePath(cue.Str(f.Name).Optional()))
		switch f.Nested {
		case validate.NestList:
			fv = fv.LookupPath(cue.MakePath(cue.AnyIndex))
		case validate.NestMap:
			// Unify with {} first: a nullable map is `null | {[string]: T}`.
			fv = fv.Unify(v.Context().CompileString("{}")).LookupPath(cue.MakePath(cue.AnyString))
		case validate.NestStruct:
			fv = fv.Unify(v.Context().CompileString("{}"))
		}
		compareStruct(t, version, path+"."+f.Name, f.Fields, fv)
	}
}
