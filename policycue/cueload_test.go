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
		if semver.Compare(v, MinOpenShellVersion) >= 0 && semver.Compare(v, MaxOpenShellVersion) <= 0 {
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
		compareStruct(t, v, "policy", policyDef, schema)
	}
}

func compareStruct(t *testing.T, version, path string, def *structDef, v cue.Value) {
	t.Helper()
	var goFields []string
	for _, f := range def.fields {
		if f.since == "" || Supports(f.since, version) {
			goFields = append(goFields, f.name)
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
	for _, f := range def.fields {
		if f.def == nil || (f.since != "" && !Supports(f.since, version)) {
			continue
		}
		fv := v.LookupPath(cue.MakePath(cue.Str(f.name).Optional()))
		switch f.kind {
		case kList:
			fv = fv.LookupPath(cue.MakePath(cue.AnyIndex))
		case kMap:
			fv = fv.LookupPath(cue.MakePath(cue.AnyString))
		case kStruct:
			fv = fv.Unify(v.Context().CompileString("{}"))
		}
		compareStruct(t, version, path+"."+f.name, f.def, fv)
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
	for _, v := range SupportedVersions {
		if err := check(filepath.Join("testdata", "validate", "valid", v+".yaml"), v); err != nil {
			t.Errorf("CUE rejects valid %s fixture: %v", v, err)
		}
	}
	shapeCodes := map[string]bool{CodeUnknownField: true, CodeType: true, CodeFieldTooNew: true, CodeRequired: true, CodeVersion: true}
	for _, tc := range invalidCases {
		if !shapeCodes[tc.code] || tc.name == "merge_key" || tc.name == "query_glob_key" || tc.name == "include_workdir_not_bool" ||
			tc.name == "host_null_literal" {
			// Merge keys, {glob:} matchers and scalars read as strings are
			// YAML/serde details CUE's YAML decoder treats differently.
			continue
		}
		if err := check(filepath.Join("testdata", "validate", "invalid", tc.name+".yaml"), tc.version); err == nil {
			t.Errorf("CUE accepts invalid fixture %s (%s)", tc.name, tc.code)
		}
	}
	if err := check(filepath.Join("testdata", "validate", "valid", "v0.0.111.yaml"), "v0.0.83"); err == nil {
		t.Error("CUE accepts the v0.0.111 fixture (protocol tcp, credential_binding) for v0.0.83")
	}
}

// BenchmarkCUEValidate measures checking one typical policy with the CUE
// schema (compiled once) - the alternative to Validate's Go walk, for the
// record: it is why Validate uses the Go table cross-checked against CUE.
func BenchmarkCUEValidate(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "validate", "valid", "v0.0.111.yaml"))
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
	data, err := os.ReadFile(filepath.Join("testdata", "validate", "valid", "v0.0.111.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		Validate("p.yaml", data, "")
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}
