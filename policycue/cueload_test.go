package policycue

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueyaml "cuelang.org/go/encoding/yaml"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"golang.org/x/mod/semver"
)

func TestLoadEmbedded(t *testing.T) {
	ctx := cuecontext.New()
	fsys := fstest.MapFS{
		"defs/a.cue":     {Data: []byte("package x\n#A: {n: int}\n")},
		"defs/b.cue":     {Data: []byte("package x\nval: #A & {n: 3}\n")},
		"defs/notes.txt": {Data: []byte("ignored")},
		"empty/x.txt":    {Data: []byte("no cue here")},
		"bad/a.cue":      {Data: []byte("package x\nval: 1 & 2\n")},
	}
	v, err := LoadEmbedded(ctx, fsys, "defs")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := v.LookupPath(cue.ParsePath("val.n")).Int64(); err != nil || n != 3 {
		t.Fatalf("val.n = %d, %v", n, err)
	}
	if _, err := LoadEmbedded(ctx, fsys, "empty"); !errors.Is(err, ErrNoCUEFiles) {
		t.Fatalf("empty dir: %v", err)
	}
	if _, err := LoadEmbedded(ctx, fsys, "missing"); err == nil {
		t.Fatal("missing dir loaded")
	}
	if _, err := LoadEmbedded(ctx, fsys, "bad"); err == nil || !strings.Contains(err.Error(), "conflicting values") {
		t.Fatalf("conflict not reported: %v", err)
	}
}

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

// TestCUESchemaMatchesGoSchema keeps policy.cue and the Go field table in
// step: for every supported release, every struct has exactly the same
// fields in both.
func TestCUESchemaMatchesGoSchema(t *testing.T) {
	ctx := cuecontext.New()
	for _, v := range allVersions(t) {
		schema, err := PolicySchema(ctx, v)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		compareStruct(t, v, "policy", openshell.SchemaFields(), schema)
	}
}

func compareStruct(t *testing.T, version, path string, fields []openshell.SchemaField, v cue.Value) {
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
		if f.Nested == openshell.NestNone || (f.Since != "" && !openshell.Supports(f.Since, version)) {
			continue
		}
		fv := v.LookupPath(cue.MakePath(cue.Str(f.Name).Optional()))
		switch f.Nested {
		case openshell.NestList:
			fv = fv.LookupPath(cue.MakePath(cue.AnyIndex))
		case openshell.NestMap:
			fv = fv.LookupPath(cue.MakePath(cue.AnyString))
		case openshell.NestStruct:
			fv = fv.Unify(v.Context().CompileString("{}"))
		}
		compareStruct(t, version, path+"."+f.Name, f.Fields, fv)
	}
}

// TestCUESchemaAgreesOnFixtures runs the CUE schema over the fixtures: it
// accepts the valid ones and rejects the ones whose problem is pure shape.
func TestCUESchemaAgreesOnFixtures(t *testing.T) {
	ctx := cuecontext.New()
	check := func(file, version string) error {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		schema, err := PolicySchema(ctx, version)
		if err != nil {
			t.Fatal(err)
		}
		f, err := cueyaml.Extract(file, data)
		if err != nil {
			return err
		}
		return schema.Unify(ctx.BuildFile(f)).Validate(cue.Concrete(true))
	}
	for _, v := range openshell.SupportedVersions {
		if err := check(filepath.Join("..", "openshell", "testdata", "validate", "valid", v+".yaml"), v); err != nil {
			t.Errorf("CUE rejects valid %s fixture: %v", v, err)
		}
	}
	shapeCodes := map[string]bool{openshell.CodeUnknownField: true, openshell.CodeType: true, openshell.CodeFieldTooNew: true, openshell.CodeRequired: true, openshell.CodeVersion: true}
	// The invalid fixtures whose only errors, as the Go validator reports
	// them for a release, are pure shape must be rejected by CUE too.
	invalid := filepath.Join("..", "openshell", "testdata", "validate", "invalid")
	entries, err := os.ReadDir(invalid)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".yaml")
		if name == "merge_key" || name == "query_glob_key" || name == "include_workdir_not_bool" || name == "host_null_literal" {
			// Merge keys, {glob:} matchers and scalars read as strings are
			// YAML/serde details CUE's YAML decoder treats differently.
			continue
		}
		file := filepath.Join(invalid, e.Name())
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range openshell.SupportedVersions {
			if !onlyShapeErrors(openshell.Validate(file, data, v), shapeCodes) {
				continue
			}
			if err := check(file, v); err == nil {
				t.Errorf("CUE accepts invalid fixture %s for %s", name, v)
			}
		}
	}
	if err := check(filepath.Join("..", "openshell", "testdata", "validate", "valid", "v0.0.111.yaml"), "v0.0.83"); err == nil {
		t.Error("CUE accepts the v0.0.111 fixture (protocol tcp, credential_binding) for v0.0.83")
	}
}

// BenchmarkCUEValidate measures checking one typical policy with the CUE
// schema (compiled once) - the alternative to Validate's Go walk, for the
// record: it is why Validate uses the Go table cross-checked against CUE.
func BenchmarkCUEValidate(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "openshell", "testdata", "validate", "valid", "v0.0.111.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := cuecontext.New()
	schema, err := PolicySchema(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		f, err := cueyaml.Extract("p.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		if err := schema.Unify(ctx.BuildFile(f)).Validate(cue.Concrete(true)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkValidateTypical is Validate on the same policy as BenchmarkCUEValidate.
func BenchmarkValidateTypical(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "openshell", "testdata", "validate", "valid", "v0.0.111.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		openshell.Validate("p.yaml", data, "")
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// onlyShapeErrors reports whether diags has errors and every error's code is
// one of shape.
func onlyShapeErrors(diags []openshell.Diagnostic, shape map[string]bool) bool {
	errs := 0
	for _, d := range diags {
		if d.Severity != openshell.SeverityError {
			continue
		}
		if !shape[d.Code] {
			return false
		}
		errs++
	}
	return errs > 0
}
