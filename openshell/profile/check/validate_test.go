package check

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
)

// TestBuiltinsValidate: every built-in profile of OpenShell, at the tag it
// ships with, validates as a set without an error (it is the gateway's own
// catalog: builtin_profiles() panics otherwise, profiles.rs:2398-2406), both
// as OpenShell's files (from ../shared/fixtures) and as our catalog.
func TestBuiltinsValidate(t *testing.T) {
	for _, v := range profile.BuiltinTags() {
		t.Run(v, func(t *testing.T) {
			var cat []*profile.Profile
			for _, id := range profile.BuiltinIDs(v) {
				p, err := profile.Builtin(id, v)
				if err != nil {
					t.Fatal(err)
				}
				cat = append(cat, p)
			}
			if diags := profile.CheckSet(cat, v); openshell.HasErrors(diags) {
				t.Errorf("the catalog at %s: %v", v, diags)
			}
			ins := readInputs(t, upstreamProfiles+v)
			var ids []string
			for _, r := range All(ins, v) {
				for _, d := range r.Diagnostics {
					if d.Severity == openshell.SeverityError {
						t.Errorf("%s", d)
					}
				}
			}
			for _, in := range ins {
				p, _ := profile.Decode(in.File, in.Data, v)
				ids = append(ids, p.ID)
				if !profile.IsBuiltinProfile(p) {
					t.Errorf("%s not recognised as the built-in %s", in.File, p.ID)
				}
			}
			slices.Sort(ids)
			if want := profile.BuiltinIDs(v); !slices.Equal(ids, want) {
				t.Errorf("embedded ids %v, profile.BuiltinIDs(%s) = %v", ids, v, want)
			}
		})
	}
}

// TestBuiltinTraps pins what the built-in catalog does when composed: the
// v0.0.111 aws-s3 profile's endpoints *.s3.amazonaws.com (signing_region
// us-east-1) and s3.*.amazonaws.com (no region) overlap with disagreeing
// request metadata (ambiguity.rs:58-120, 265-268 @ v0.0.111), and
// google-vertex-ai has endpoints but no binaries.
func TestBuiltinTraps(t *testing.T) {
	ins := readInputs(t, upstreamProfiles+"v0.0.111")
	var got []string
	for _, r := range All(ins, "v0.0.111") {
		for _, d := range r.Diagnostics {
			if d.Trap {
				got = append(got, filepath.Base(d.File)+":"+d.Code+":"+d.Path)
			}
		}
	}
	want := []string{"aws-s3.yaml:OSP070:endpoints[3]", "google-vertex-ai.yaml:OSP022:binaries"}
	if !slices.Equal(got, want) {
		t.Errorf("traps = %v, want %v", got, want)
	}
}

// TestAgentsProfilesValidate: fullsend-ai/agents' production profiles are
// clean at both supported releases.
func TestAgentsProfilesValidate(t *testing.T) {
	for _, v := range openshell.SupportedVersions() {
		for _, r := range All(readInputs(t, agentsFixture+"/profiles"), v) {
			for _, d := range r.Diagnostics {
				t.Errorf("%s: %s", v, d)
			}
		}
	}
}

type upstreamCase struct {
	Name string `yaml:"name"`
	Cite string `yaml:"cite"`
	// Cite83 names the same test, with the same profile, at v0.0.83: the
	// case is then replayed at that release too.
	Cite83  string   `yaml:"cite83"`
	Profile string   `yaml:"profile"`
	Expect  []string `yaml:"expect"`
	Absent  []string `yaml:"absent"`
	Clean   bool     `yaml:"clean"`
}

// TestUpstreamProfileTests replays OpenShell's profile tests
// (from-project/openshell/profile/testdata/upstream/profiles_rs_tests.yaml
// in ../shared/fixtures: profiles.rs's tests module @ v0.0.111, transcribed).
func TestUpstreamProfileTests(t *testing.T) {
	raw := fixture.ReadFile(t, "from-project/openshell/profile/testdata/upstream/profiles_rs_tests.yaml")
	var f struct {
		Cases []upstreamCase `yaml:"cases"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 40 {
		t.Fatalf("only %d cases", len(f.Cases))
	}
	n83 := 0
	for _, c := range f.Cases {
		versions := map[string]string{"v0.0.111": c.Cite}
		if c.Cite83 != "" {
			versions["v0.0.83"] = c.Cite83
			n83++
		}
		for v, cite := range versions {
			c := c
			c.Cite = cite
			t.Run(c.Name+"@"+v, func(t *testing.T) { replayUpstream(t, c, v) })
		}
	}
	if n83 < 5 {
		t.Errorf("only %d cases replayed at v0.0.83", n83)
	}
}

// replayUpstream validates one case's profile at version and checks the
// messages its upstream assertions look for.
func replayUpstream(t *testing.T, c upstreamCase, version string) {
	t.Helper()
	var errs []string
	for _, d := range File("case.yaml", []byte(c.Profile), version) {
		if d.Severity == openshell.SeverityError {
			errs = append(errs, d.Message)
		}
	}
	all := strings.Join(errs, "\n")
	if c.Clean && len(errs) > 0 {
		t.Errorf("%s: want no error, got\n%s", c.Cite, all)
	}
	for _, e := range c.Expect {
		if !strings.Contains(all, e) {
			t.Errorf("%s: want an error containing %q, got\n%s", c.Cite, e, all)
		}
	}
	for _, a := range c.Absent {
		if strings.Contains(all, a) {
			t.Errorf("%s: want no error containing %q, got\n%s", c.Cite, a, all)
		}
	}
}

// TestBrokenProfiles: each broken profile is refused (or warned about) with
// its code at the line of the cause.
func TestBrokenProfiles(t *testing.T) {
	tests := []struct {
		name, version, doc string
		code               string
		line               int
		sev                openshell.Severity
		trap               bool
	}{
		{"yaml syntax", "", "id: x\ndisplay_name: [\n", profile.CodeSyntax, 3, openshell.SeverityError, false},
		{"empty", "", "", profile.CodeSyntax, 1, openshell.SeverityError, false},
		{"not a mapping", "", "- id: x\n", profile.CodeType, 1, openshell.SeverityError, false},
		{"missing display_name", "", "id: x\nendpoints: []\n", profile.CodeRequired, 1, openshell.SeverityError, false},
		{"missing id", "", "display_name: X\n", profile.CodeRequired, 1, openshell.SeverityError, false},
		{"id not kebab", "", "id: My_Profile\ndisplay_name: X\n", profile.CodeID, 1, openshell.SeverityError, false},
		{"builtin id", "", "id: github\ndisplay_name: Mine\n", profile.CodeBuiltinID, 1, openshell.SeverityError, false},
		{"builtin id at v0.0.83 (aws-s3 is not one yet)", "v0.0.83", "id: aws-s3\ndisplay_name: Mine\n", "", 0, "", false},
		{"unknown key is a trap", "", "id: x\ndisplay_name: X\nendpoints:\n  - host: a.example.com\n    port: 443\n    protcol: rest\n", profile.CodeUnknownField, 6, openshell.SeverityWarning, true},
		{"merge key is a trap", "", "id: x\ndisplay_name: X\n<<: {description: d}\n", profile.CodeUnknownField, 3, openshell.SeverityWarning, true},
		{"credential_binding is ignored in a profile", "", "id: x\ndisplay_name: X\nendpoints:\n  - host: a.example.com\n    port: 443\n    credential_binding: {provider: p}\n", profile.CodeUnknownField, 6, openshell.SeverityWarning, true},
		{"too new at v0.0.83", "v0.0.83", "id: x\ndisplay_name: X\nendpoints:\n  - host: a.example.com\n    port: 443\n    allow_uninspected_credentials: true\n", profile.CodeFieldTooNew, 6, openshell.SeverityWarning, true},
		{"port out of range", "", "id: x\ndisplay_name: X\nendpoints:\n  - host: a.example.com\n    port: 70000\n", profile.CodeEndpoint, 4, openshell.SeverityError, false},
		{"quoted port", "", "id: x\ndisplay_name: X\nendpoints:\n  - host: a.example.com\n    port: \"443\"\n", profile.CodeType, 5, openshell.SeverityError, false},
		{"unknown category", "", "id: x\ndisplay_name: X\ncategory: cloud\n", profile.CodeType, 3, openshell.SeverityError, false},
		{"numeric binary", "", "id: x\ndisplay_name: X\nbinaries: [123]\n", profile.CodeType, 3, openshell.SeverityError, false},
		{"empty binary", "", "id: x\ndisplay_name: X\nbinaries: ['']\n", profile.CodeBinary, 3, openshell.SeverityError, false},
		{"duplicate key", "", "id: x\nid: y\ndisplay_name: X\n", profile.CodeDuplicateKey, 2, openshell.SeverityError, false},
		{"custom tag", "", "id: !env X\ndisplay_name: X\n", profile.CodeYAMLFeature, 1, openshell.SeverityError, false},
		{"aws sts before v0.0.86", "v0.0.83", "id: x\ndisplay_name: X\ncredentials:\n  - name: k\n    refresh:\n      strategy: aws_sts_assume_role\n", profile.CodeType, 6, openshell.SeverityError, false},
		{"credentialed L4 at v0.0.111", "", "id: x\ndisplay_name: X\ncredentials: [{name: t, env_vars: [T]}]\nendpoints:\n  - host: a.example.com\n    port: 443\n", profile.CodeUninspected, 5, openshell.SeverityError, false},
		{"credentialed L4 at v0.0.83 is accepted", "v0.0.83", "id: x\ndisplay_name: X\ncredentials: [{name: t, env_vars: [T]}]\nendpoints:\n  - host: a.example.com\n    port: 443\n", "", 0, "", false},
		{"audit by omission", "", "id: x\ndisplay_name: X\nendpoints:\n  - host: a.example.com\n    port: 443\n    protocol: rest\n    access: read-only\nbinaries: [/usr/bin/gh]\n", validate.CodeEnforcement, 4, openshell.SeverityWarning, true},
		{"bad host glob in composed policy", "", "id: x\ndisplay_name: X\nendpoints:\n  - host: '*'\n    port: 443\nbinaries: [/usr/bin/gh]\n", validate.CodeHostWildcard, 4, openshell.SeverityWarning, true},
		{"reserved env var", "", "id: x\ndisplay_name: X\ncredentials:\n  - name: t\n    env_vars: [v2_TOKEN]\n", profile.CodeCredential, 5, openshell.SeverityError, false},
		{"syntax: block mapping", "", "id: x\nendpoints:\n  - host: a\n port: 1\n", profile.CodeSyntax, 4, openshell.SeverityError, false},
		{"no profiles before v0.0.37", "v0.0.30", "id: x\ndisplay_name: X\n", profile.CodeUnsupported, 1, openshell.SeverityError, false},
		{"annotations are too new at v0.0.83", "v0.0.83", "id: x\ndisplay_name: X\nannotations: {a: b}\n", profile.CodeFieldTooNew, 3, openshell.SeverityWarning, true},
		{"a non-canonical spelling of a built-in id conflicts too", "", "id: GitHub\ndisplay_name: X\n", profile.CodeBuiltinID, 1, openshell.SeverityError, false},
		{"too many documents", "", "id: x\ndisplay_name: X\n---\nid: y\n", profile.CodeSyntax, 3, openshell.SeverityError, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			diags := File("p.yaml", []byte(tc.doc), tc.version)
			if tc.code == "" {
				for _, d := range diags {
					if d.Severity == openshell.SeverityError {
						t.Errorf("unexpected %s", d)
					}
				}
				return
			}
			for _, d := range diags {
				if d.Code == tc.code {
					if d.Line != tc.line || d.Severity != tc.sev || d.Trap != tc.trap || d.File != "p.yaml" {
						t.Errorf("got %s (trap %v), want line %d %s trap %v", d, d.Trap, tc.line, tc.sev, tc.trap)
					}
					return
				}
			}
			t.Errorf("no %s in %v", tc.code, diags)
		})
	}
}

func FuzzValidate(f *testing.F) {
	for _, b := range fuzzSeeds(upstreamProfiles+"v0.0.111", agentsFixture+"/profiles") {
		f.Add(b)
	}
	f.Add([]byte("id: x\ndisplay_name: X\nendpoints: [{host: a, port: 1, rules: [{allow: {tool: 1}}]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v := range openshell.SupportedVersions() {
			for _, d := range File("f.yaml", data, v) {
				if d.Line < 1 || d.Code == "" {
					t.Fatalf("bad diagnostic %+v", d)
				}
			}
		}
		_ = profile.IsProfile(data)
	})
}
