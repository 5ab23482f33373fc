package profile_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile/check"
)

// upstreamDirs are the fixture directories holding OpenShell's own
// providers/*.yaml at each catalog tag (../shared/fixtures/README.md).
func upstreamDirs(tag string) []string {
	dirs := []string{"from-project/openshell/profile/builtin/" + tag}
	if tag == "v0.0.111" {
		dirs = append(dirs, "profiles/openshell")
	}
	return dirs
}

// upstreamProfiles decodes every *.yaml of the fixture directory dir at
// tag, failing on an error diagnostic.
func upstreamProfiles(t *testing.T, dir, tag string) []*profile.Profile {
	t.Helper()
	root := fixture.Path(t, dir)
	files, err := filepath.Glob(filepath.Join(root, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no profiles in %s: %v", root, err)
	}
	var out []*profile.Profile
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, diags := profile.Decode(path.Join(dir, filepath.Base(f)), data, tag)
		if p == nil || openshell.HasErrors(diags) {
			t.Fatalf("%s does not decode at %s: %v", f, tag, diags)
		}
		out = append(out, p)
	}
	return out
}

// TestCatalogMatchesUpstream: for every catalog tag, OpenShell's own files
// (read from ../shared/fixtures) and the catalog hold the same ids, state
// the same facts per profile, validate alike, and compose into the same
// effective policy with the same layers and the same composed-policy
// findings.
func TestCatalogMatchesUpstream(t *testing.T) {
	for _, tag := range profile.BuiltinTags() {
		for _, dir := range upstreamDirs(tag) {
			t.Run(tag+"/"+dir, func(t *testing.T) {
				files := upstreamProfiles(t, dir, tag)
				var ids []string
				var fromFiles, fromCatalog []profile.Attachment
				for _, p := range files {
					ids = append(ids, p.ID)
					c, err := profile.Builtin(p.ID, tag)
					if err != nil {
						t.Fatalf("%s: %v", p.File, err)
					}
					compareProfile(t, p, c, tag)
					fromFiles = append(fromFiles, profile.Attachment{Provider: p.ID, Profile: p})
					fromCatalog = append(fromCatalog, profile.Attachment{Provider: p.ID, Profile: c})
				}
				slices.Sort(ids)
				if want := profile.BuiltinIDs(tag); !slices.Equal(ids, want) {
					t.Errorf("upstream ids %v, catalog ids %v", ids, want)
				}
				compareComposed(t, fromFiles, fromCatalog, tag)
			})
		}
	}
}

// compareProfile checks one upstream profile against its catalog entry.
func compareProfile(t *testing.T, file, cat *profile.Profile, tag string) {
	t.Helper()
	if !profile.SameFacts(file, cat) {
		a, _ := json.MarshalIndent(file, "", " ")
		b, _ := json.MarshalIndent(cat, "", " ")
		t.Errorf("%s: the catalog's facts differ\nupstream: %s\ncatalog:  %s", file.File, a, b)
	}
	if !profile.IsBuiltinProfile(file) {
		t.Errorf("%s is not recognised as OpenShell's own file", file.File)
	}
	if file.HasCredentialedEndpoints() != cat.HasCredentialedEndpoints() {
		t.Errorf("%s: credentialed %v, catalog %v", file.File, file.HasCredentialedEndpoints(), cat.HasCredentialedEndpoints())
	}
	file.Builtin = true // the gateway loads it as its catalog
	if a, b := findings(profile.CheckSet([]*profile.Profile{file}, tag)), findings(profile.CheckSet([]*profile.Profile{cat}, tag)); !slices.Equal(a, b) {
		t.Errorf("%s: validate_profile_set finds %v, on the catalog %v", file.File, a, b)
	}
}

// compareComposed composes every profile of a tag onto an empty policy,
// from the files and from the catalog, and compares the results.
func compareComposed(t *testing.T, fromFiles, fromCatalog []profile.Attachment, tag string) {
	t.Helper()
	gw := profile.Gateway{ProvidersV2Enabled: true}
	a := profile.Compose(&openshell.Policy{Version: 1}, fromFiles, gw)
	b := profile.Compose(&openshell.Policy{Version: 1}, fromCatalog, gw)
	ya, errA := openshell.Marshal(a.Policy, "")
	yb, errB := openshell.Marshal(b.Policy, "")
	if errA != nil || errB != nil || !bytes.Equal(ya, yb) {
		t.Errorf("composed policies differ (%v, %v)\nupstream:\n%s\ncatalog:\n%s", errA, errB, ya, yb)
	}
	if la, lb := layers(a), layers(b); !slices.Equal(la, lb) {
		t.Errorf("layers %v, catalog %v", la, lb)
	}
	if fa, fb := findings(check.Composed(a, tag)), findings(check.Composed(b, tag)); !slices.Equal(fa, fb) {
		t.Errorf("composed findings %v, catalog %v", fa, fb)
	}
}

// findings renders diagnostics without their file positions, which the
// catalog does not have.
func findings(diags []openshell.Diagnostic) []string {
	var out []string
	for _, d := range diags {
		file := strings.TrimSuffix(path.Base(d.File), ".yaml")
		out = append(out, fmt.Sprintf("%s %s %s %s: %s", file, d.Severity, d.Code, d.Path, d.Message))
	}
	slices.Sort(out)
	return out
}

func layers(c *profile.Composed) []string {
	var out []string
	for _, l := range c.Layers {
		out = append(out, fmt.Sprintf("%s %s %s %v", l.Key, l.Provider, l.ProfileID, l.Credentialed))
	}
	return out
}
