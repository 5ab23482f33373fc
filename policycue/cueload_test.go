package policycue

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueyaml "cuelang.org/go/encoding/yaml"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
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

// TestPolicySchemaFeatures: every #Features switch names a known
// openshell.Feature, and PolicySchema turns the switches off for the
// releases before it (the field-by-field comparison with the generated
// validator table is openshell's TestCUESchemaMatchesGoSchema).
func TestPolicySchemaFeatures(t *testing.T) {
	ctx := cuecontext.New()
	pkg, err := LoadEmbedded(ctx, openshellSchemaFS, OpenShellSchemaDir)
	if err != nil {
		t.Fatal(err)
	}
	switches, err := featureSwitches(pkg)
	if err != nil {
		t.Fatal(err)
	}
	if len(switches) < 10 {
		t.Fatalf("only %d feature switches: %v", len(switches), switches)
	}
	for name, f := range switches {
		if _, ok := openshell.Since(f); !ok {
			t.Errorf("#Features.%s: @feature(%s) is not an openshell.Feature", name, f)
		}
	}
	endpoint := func(version string) cue.Value {
		schema, err := PolicySchema(ctx, version)
		if err != nil {
			t.Fatal(err)
		}
		return schema.LookupPath(cue.ParsePath("#Endpoint"))
	}
	binding := cue.MakePath(cue.Str("credential_binding").Optional())
	if !endpoint("v0.0.111").LookupPath(binding).Exists() || endpoint("v0.0.83").LookupPath(binding).Exists() {
		t.Error("credential_binding must exist for v0.0.111 and not for v0.0.83")
	}
	if _, err := featureSwitches(ctx.CompileString("#Features: {a: *true | bool}")); err == nil {
		t.Error("a switch without @feature was accepted")
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
	for _, v := range openshell.SupportedVersions() {
		if err := check(filepath.Join("..", "openshell", "validate", "testdata", "valid", v+".yaml"), v); err != nil {
			t.Errorf("CUE rejects valid %s fixture: %v", v, err)
		}
	}
	shapeCodes := map[string]bool{validate.CodeUnknownField: true, validate.CodeType: true, validate.CodeFieldTooNew: true, validate.CodeRequired: true, validate.CodeVersion: true}
	// The invalid fixtures whose only errors, as the Go validator reports
	// them for a release, are pure shape must be rejected by CUE too.
	invalid := filepath.Join("..", "openshell", "validate", "testdata", "invalid")
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
		for _, v := range openshell.SupportedVersions() {
			if !onlyShapeErrors(validate.File(file, data, v), shapeCodes) {
				continue
			}
			if err := check(file, v); err == nil {
				t.Errorf("CUE accepts invalid fixture %s for %s", name, v)
			}
		}
	}
	if err := check(filepath.Join("..", "openshell", "validate", "testdata", "valid", "v0.0.111.yaml"), "v0.0.83"); err == nil {
		t.Error("CUE accepts the v0.0.111 fixture (protocol tcp, credential_binding) for v0.0.83")
	}
}

// BenchmarkCUEValidate measures checking one typical policy with the CUE
// schema (compiled once) - the alternative to Validate's Go walk, for the
// record: it is why Validate walks a Go table generated from the CUE.
func BenchmarkCUEValidate(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "openshell", "validate", "testdata", "valid", "v0.0.111.yaml"))
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
	data, err := os.ReadFile(filepath.Join("..", "openshell", "validate", "testdata", "valid", "v0.0.111.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		validate.File("p.yaml", data, "")
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

// TestNamedReleaseDefinitions: the named per-release definitions users pass
// to `cue vet -d` (#Policy, #Policy_v0_0_83) switch exactly the features
// PolicySchema switches for that release. #Policy_v0_0_83 once left
// network_middlewares (v0.0.86) on, so cue vet accepted what v0.0.83 refuses.
func TestNamedReleaseDefinitions(t *testing.T) {
	ctx := cuecontext.New()
	pkg, err := LoadEmbedded(ctx, openshellSchemaFS, OpenShellSchemaDir)
	if err != nil {
		t.Fatal(err)
	}
	switches, err := featureSwitches(pkg)
	if err != nil {
		t.Fatal(err)
	}
	for def, version := range map[string]string{"#Policy": openshell.DefaultOpenShellVersion, "#Policy_v0_0_83": "v0.0.83"} {
		f := pkg.LookupPath(cue.ParsePath(def + ".#f"))
		if err := f.Err(); err != nil {
			t.Fatalf("%s: %v", def, err)
		}
		for name, feature := range switches {
			got, _ := f.LookupPath(cue.ParsePath(name)).Default()
			on, err := got.Bool()
			if err != nil {
				t.Fatalf("%s.#f.%s: %v", def, name, err)
			}
			if want := openshell.Supports(feature, version); on != want {
				t.Errorf("%s: %s is %v, but OpenShell %s supports it: %v", def, name, on, version, want)
			}
		}
	}
}
