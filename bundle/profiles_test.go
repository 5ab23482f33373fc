package bundle

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// withProviders gives triage a built-in provider and a project profile
// pinned in the manifest.
func withProviders(m *Manifest, f fstest.MapFS) {
	f["policies/profiles/acme-api.yaml"] = &fstest.MapFile{Data: []byte("id: acme-api\ndisplay_name: Acme\n")}
	m.Profiles = []SourceFile{{Path: "profiles/acme-api.yaml", SHA256: SHA256Hex(f["policies/profiles/acme-api.yaml"].Data)}}
	a := m.Agents["triage"]
	a.Providers = []ProviderRef{{Name: "github", Profile: "github", Builtin: true},
		{Name: "acme", Profile: "acme-api", File: "profiles/acme-api.yaml", Credentials: []string{"ACME_TOKEN"}}}
	m.Agents["triage"] = a
}

func TestOpenProviderProfiles(t *testing.T) {
	edit := func(fn func(*ManifestAgent, *Manifest, fstest.MapFS)) func(*Manifest, fstest.MapFS) {
		return func(m *Manifest, f fstest.MapFS) {
			withProviders(m, f)
			a := m.Agents["triage"]
			fn(&a, m, f)
			m.Agents["triage"] = a
		}
	}
	tests := []struct {
		name    string
		edit    func(*Manifest, fstest.MapFS)
		opts    []Option
		wantErr error
		wantMsg string
		want    []string
	}{
		{name: "pinned", edit: withProviders, want: []string{"profiles/acme-api.yaml"}},
		{name: "other agent only", edit: withProviders, opts: []Option{WithAgents("reader")}},
		{name: "tampered", edit: edit(func(_ *ManifestAgent, _ *Manifest, f fstest.MapFS) {
			f["policies/profiles/acme-api.yaml"] = &fstest.MapFile{Data: []byte("id: acme-api\ndisplay_name: Evil\n")}
		}), wantErr: ErrDigestMismatch, wantMsg: `agent "triage": providers[1]: provider profile profiles/acme-api.yaml has sha256`},
		{name: "not pinned", edit: edit(func(_ *ManifestAgent, m *Manifest, _ fstest.MapFS) { m.Profiles = nil }),
			wantErr: ErrManifest, wantMsg: "provider profile profiles/acme-api.yaml is not pinned"},
		{name: "missing file", edit: edit(func(_ *ManifestAgent, _ *Manifest, f fstest.MapFS) { delete(f, "policies/profiles/acme-api.yaml") }),
			wantErr: fs.ErrNotExist, wantMsg: "provider profile profiles/acme-api.yaml"},
		{name: "outside profiles/", edit: edit(func(a *ManifestAgent, _ *Manifest, _ fstest.MapFS) { a.Providers[1].File = "triage.yaml" }),
			wantErr: ErrUnsafePath, wantMsg: `provider profile "triage.yaml"`},
		{name: "escape", edit: edit(func(a *ManifestAgent, _ *Manifest, _ fstest.MapFS) { a.Providers[1].File = "profiles/../../x.yaml" }),
			wantErr: ErrUnsafePath},
		{name: "both builtin and file", edit: edit(func(a *ManifestAgent, _ *Manifest, _ fstest.MapFS) { a.Providers[1].Builtin = true }),
			wantErr: ErrManifest, wantMsg: "want exactly one of builtin and file"},
		{name: "neither", edit: edit(func(a *ManifestAgent, _ *Manifest, _ fstest.MapFS) { a.Providers[0].Builtin = false }),
			wantErr: ErrManifest, wantMsg: "want exactly one of builtin and file"},
		{name: "no name", edit: edit(func(a *ManifestAgent, _ *Manifest, _ fstest.MapFS) { a.Providers[0].Name = "" }),
			wantErr: ErrManifest, wantMsg: "providers[0]: name and profile are required"},
		{name: "name twice", edit: edit(func(a *ManifestAgent, _ *Manifest, _ fstest.MapFS) { a.Providers[1].Name = "github" }),
			wantErr: ErrManifest, wantMsg: `provider name "github" is attached twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Open(testProject(t, tt.edit), "policies", tt.opts...)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("error %v, want %v saying %q", err, tt.wantErr, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for p := range b.Profiles {
				got = append(got, p)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("verified profiles %v, want %v", got, tt.want)
			}
		})
	}
}

// TestManifestProvidersRoundTrip pins the JSON shape the compiler writes.
func TestManifestProvidersRoundTrip(t *testing.T) {
	files := testProject(t, withProviders)
	m, err := DecodeManifest(files["policies/manifest.json"].Data)
	if err != nil {
		t.Fatal(err)
	}
	data := string(files["policies/manifest.json"].Data)
	for _, want := range []string{`"profiles": [`, `"path": "profiles/acme-api.yaml"`, `"providers": [`,
		`"name": "acme"`, `"profile": "acme-api"`, `"file": "profiles/acme-api.yaml"`, `"builtin": true`, `"credentials": [`} {
		if !strings.Contains(data, want) {
			t.Errorf("manifest JSON lacks %s:\n%s", want, data)
		}
	}
	if got := m.Agents["triage"].Providers; len(got) != 2 || got[1].Credentials[0] != "ACME_TOKEN" {
		t.Errorf("decoded providers %+v", got)
	}
}
