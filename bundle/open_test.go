package bundle

import (
	"errors"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// testProject returns a compiled project with two agents: triage (one skill)
// and reader, both pinned by a consistent manifest.
func testProject(t *testing.T, edit func(m *Manifest, files fstest.MapFS)) fstest.MapFS {
	t.Helper()
	files := fstest.MapFS{
		"agents/triage.md":       {Data: []byte("---\nname: triage\n---\n")},
		"agents/reader.md":       {Data: []byte("---\nname: reader\n---\n")},
		"skills/labels/SKILL.md": {Data: []byte("---\nname: labels\n---\n")},
		"catalog/org.cue":        {Data: []byte("package catalog\n")},
		"policies/triage.yaml":   {Data: []byte("version: 1\n# triage\n")},
		"policies/reader.yaml":   {Data: []byte("version: 1\n# reader\n")},
	}
	pin := func(p string) SourceFile { return SourceFile{Path: p, SHA256: SHA256Hex(files[p].Data)} }
	m := &Manifest{Schema: ManifestSchema, OpenShellVersion: "v0.0.111", Agents: map[string]ManifestAgent{
		"triage": {Policy: "triage.yaml", PolicySHA256: SHA256Hex(files["policies/triage.yaml"].Data), Source: "agents/triage.md",
			Sources: []SourceFile{pin("agents/triage.md"), pin("skills/labels/SKILL.md"), pin("catalog/org.cue")}},
		"reader": {Policy: "reader.yaml", PolicySHA256: SHA256Hex(files["policies/reader.yaml"].Data), Source: "agents/reader.md",
			Sources: []SourceFile{pin("agents/reader.md")}},
	}}
	if edit != nil {
		edit(m, files)
	}
	data, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	files["policies/manifest.json"] = &fstest.MapFile{Data: data}
	return files
}

func TestOpen(t *testing.T) {
	good := testProject(t, nil)
	goodSum := SHA256Hex(good["policies/manifest.json"].Data)
	tamper := func(p string) func(*Manifest, fstest.MapFS) {
		return func(_ *Manifest, f fstest.MapFS) { f[p] = &fstest.MapFile{Data: append(slices.Clone(f[p].Data), '#')} }
	}
	notCatalog := func(_ string, _ ManifestAgent, s SourceFile) bool { return !strings.HasPrefix(s.Path, "catalog/") }
	tests := []struct {
		name        string
		edit        func(*Manifest, fstest.MapFS)
		raw         func(fstest.MapFS) // edits after the manifest is encoded
		opts        []Option
		wantErr     []error
		wantMsg     string
		wantPol     []string
		wantSources []string
	}{
		{name: "all policies, no sources", wantPol: []string{"reader", "triage"}},
		{name: "all sources", opts: []Option{WithSources(nil)}, wantPol: []string{"reader", "triage"},
			wantSources: []string{"agents/reader.md", "agents/triage.md", "catalog/org.cue", "skills/labels/SKILL.md"}},
		{name: "one agent, filtered sources", opts: []Option{WithAgents("triage"), WithSources(notCatalog)},
			wantPol: []string{"triage"}, wantSources: []string{"agents/triage.md", "skills/labels/SKILL.md"}},
		{name: "manifest only", opts: []Option{WithAgents()}, edit: tamper("policies/triage.yaml")},
		{name: "pinned digest", opts: []Option{WithDigest("sha256:" + strings.ToUpper(goodSum)), WithAgents()}},
		{name: "pinned digest differs", opts: []Option{WithDigest(strings.Repeat("ab", 32))},
			wantErr: []error{ErrDigestMismatch}, wantMsg: "policies/manifest.json has sha256 " + goodSum},
		{name: "pinned digest malformed", opts: []Option{WithDigest("sha256:xyz")},
			wantErr: []error{ErrInvalidDigest}, wantMsg: `policies digest "sha256:xyz" is not a sha256 hex digest`},
		{name: "manifest missing", raw: func(f fstest.MapFS) { delete(f, "policies/manifest.json") },
			wantErr: []error{ErrManifest, fs.ErrNotExist}, wantMsg: "reading policy manifest"},
		{name: "manifest unknown field", raw: func(f fstest.MapFS) {
			f["policies/manifest.json"] = &fstest.MapFile{Data: []byte(`{"schema":"` + ManifestSchema + `","extra":1}`)}
		}, wantErr: []error{ErrManifest}, wantMsg: "unknown field"},
		{name: "manifest schema", edit: func(m *Manifest, _ fstest.MapFS) { m.Schema = "x" },
			wantErr: []error{ErrManifest}, wantMsg: `schema "x"`},
		{name: "policy tampered", edit: tamper("policies/triage.yaml"),
			wantErr: []error{ErrDigestMismatch}, wantMsg: `agent "triage": policy triage.yaml has sha256`},
		{name: "policy missing", edit: func(_ *Manifest, f fstest.MapFS) { delete(f, "policies/reader.yaml") },
			wantErr: []error{fs.ErrNotExist}, wantMsg: `agent "reader"`},
		{name: "policy outside", edit: func(m *Manifest, _ fstest.MapFS) {
			a := m.Agents["reader"]
			a.Policy = "../agents/reader.md"
			m.Agents["reader"] = a
		}, wantErr: []error{ErrUnsafePath}, wantMsg: "outside the policies directory"},
		{name: "unknown agent", opts: []Option{WithAgents("nobody")},
			wantErr: []error{ErrUnknownAgent}, wantMsg: `agent "nobody" is not in the policy manifest (have [reader triage])`},
		{name: "source tampered", edit: tamper("skills/labels/SKILL.md"), opts: []Option{WithSources(nil)},
			wantErr: []error{ErrDigestMismatch}, wantMsg: `agent "triage": source skills/labels/SKILL.md has sha256`},
		{name: "source tampered, sources not checked", edit: tamper("skills/labels/SKILL.md"), wantPol: []string{"reader", "triage"}},
		{name: "source tampered, filtered out", edit: tamper("catalog/org.cue"), opts: []Option{WithSources(notCatalog)},
			wantPol:     []string{"reader", "triage"},
			wantSources: []string{"agents/reader.md", "agents/triage.md", "skills/labels/SKILL.md"}},
		{name: "source missing", edit: func(_ *Manifest, f fstest.MapFS) { delete(f, "agents/reader.md") }, opts: []Option{WithSources(nil)},
			wantErr: []error{fs.ErrNotExist}, wantMsg: "source agents/reader.md"},
		{name: "source outside", edit: func(m *Manifest, _ fstest.MapFS) {
			a := m.Agents["reader"]
			a.Sources = []SourceFile{{Path: "../etc/passwd", SHA256: "00"}}
			m.Agents["reader"] = a
		}, opts: []Option{WithSources(nil)}, wantErr: []error{ErrUnsafePath}, wantMsg: `manifest names source "../etc/passwd" outside the project`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := testProject(t, tt.edit)
			if tt.raw != nil {
				tt.raw(files)
			}
			b, err := Open(files, "policies", tt.opts...)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatal("Open succeeded")
				}
				for _, want := range tt.wantErr {
					if !errors.Is(err, want) {
						t.Errorf("error %q does not wrap %q", err, want)
					}
				}
				if !strings.Contains(err.Error(), tt.wantMsg) {
					t.Errorf("error %q does not say %q", err, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkVerified(t, b, files, tt.wantPol, tt.wantSources)
		})
	}
}

// checkVerified checks that b holds exactly the wanted policies and sources,
// with the bytes of files.
func checkVerified(t *testing.T, b *Bundle, files fstest.MapFS, wantPol, wantSources []string) {
	t.Helper()
	if b.ManifestSHA256 != SHA256Hex(files["policies/manifest.json"].Data) || len(b.Manifest.Agents) != 2 {
		t.Errorf("manifest %+v, sha256 %s", b.Manifest, b.ManifestSHA256)
	}
	if got := slices.Sorted(maps.Keys(b.Policies)); !slices.Equal(got, wantPol) {
		t.Errorf("verified policies %v, want %v", got, wantPol)
	}
	for name, data := range b.Policies {
		if string(data) != string(files["policies/"+name+".yaml"].Data) {
			t.Errorf("policy %s: bytes differ", name)
		}
	}
	if got := slices.Sorted(maps.Keys(b.Sources)); !slices.Equal(got, wantSources) {
		t.Errorf("verified sources %v, want %v", got, wantSources)
	}
	for p, data := range b.Sources {
		if string(data) != string(files[p].Data) {
			t.Errorf("source %s: bytes differ", p)
		}
	}
}

// TestOpenPoliciesRoot opens a policies directory given as the root, as
// `fullsend policy lint DIR` does.
func TestOpenPoliciesRoot(t *testing.T) {
	policies, err := fs.Sub(testProject(t, nil), "policies")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(policies, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Policies) != 2 {
		t.Errorf("verified %d policies, want 2", len(b.Policies))
	}
	if _, err := Open(policies, "../x"); err == nil {
		t.Error("an invalid policies directory was accepted")
	}
}
