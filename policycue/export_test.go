package policycue

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueyaml "cuelang.org/go/encoding/yaml"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// TestOpenShellSchemaCUE: the whole file is the embedded one; pinned, its
// #Policy is PolicySchema for that release.
func TestOpenShellSchemaCUE(t *testing.T) {
	whole, err := OpenShellSchemaCUE("")
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := fs.ReadFile(openshellSchemaFS, path.Join(OpenShellSchemaDir, "policy.cue"))
	if err != nil || !bytes.Equal(whole, embedded) {
		t.Errorf("whole schema differs from the embedded file (%v)", err)
	}
	ctx := cuecontext.New()
	fixture := func(v string) cue.Value {
		data, err := os.ReadFile(filepath.Join("..", "openshell", "validate", "testdata", "valid", v+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := cueyaml.Extract(v+".yaml", data)
		if err != nil {
			t.Fatal(err)
		}
		return ctx.BuildFile(f)
	}
	for _, v := range []string{"v0.0.83", "0.0.97", "v0.0.111"} {
		src, err := OpenShellSchemaCUE(v)
		if err != nil {
			t.Fatal(err)
		}
		pinned := ctx.CompileBytes(src).LookupPath(cue.ParsePath("#Policy"))
		want, err := PolicySchema(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if err := pinned.Err(); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		for _, doc := range openshell.SupportedVersions() {
			got := pinned.Unify(fixture(doc)).Validate(cue.Concrete(true)) == nil
			exp := want.Unify(fixture(doc)).Validate(cue.Concrete(true)) == nil
			if got != exp {
				t.Errorf("schema pinned to %s on the %s fixture: ok=%v, PolicySchema ok=%v", v, doc, got, exp)
			}
		}
	}
	if _, err := OpenShellSchemaCUE("v0.0.1"); !errors.Is(err, openshell.ErrUnsupportedVersion) {
		t.Errorf("v0.0.1: %v, want ErrUnsupportedVersion", err)
	}
}

// TestInputSchemaCUE: the merged file is one CUE package with every
// definition, judging documents as the embedded package does.
func TestInputSchemaCUE(t *testing.T) {
	src, err := InputSchemaCUE()
	if err != nil {
		t.Fatal(err)
	}
	ctx := cuecontext.New()
	merged := ctx.CompileBytes(src)
	if err := merged.Err(); err != nil {
		t.Fatal(err)
	}
	pkg, err := InputSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{
		"name: a\ndescription: d\n",
		"name: a\ndescription: d\nmode: subagent\n",
		"description: d\npermission: {bash: {\"gh *\": allow}, webfetch: deny}\ntools: {write: false}\n",
		"description: d\npermission: {webfetch: {\"*\": allow}}\n",
		"name: s\ndescription: d\nmetadata: {a: b}\n",
		"tier: network\nendpoints: [{host: api.github.com, access: full, rules: [\"GET /\"]}]\n",
	}
	for _, k := range InputKinds() {
		m, e := merged.LookupPath(cue.ParsePath(k.Definition())), pkg.LookupPath(cue.ParsePath(k.Definition()))
		if !m.Exists() {
			t.Fatalf("merged schema has no %s", k.Definition())
		}
		for _, doc := range docs {
			f, err := cueyaml.Extract("d.yaml", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			v := ctx.BuildFile(f)
			got := m.Unify(v).Validate(cue.Concrete(true)) == nil
			exp := e.Unify(v).Validate(cue.Concrete(true)) == nil
			if got != exp {
				t.Errorf("%s on %q: merged ok=%v, embedded ok=%v", k.Definition(), doc, got, exp)
			}
		}
	}
}
