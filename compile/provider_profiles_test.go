package compile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
)

// TestProviderProfilesProject: the agents of testdata/fullsend-providers
// name fullsend-ai/agents' profiles and a built-in; the compile records the
// layers in attachment order, pins the project profiles, writes the agents'
// own policies, and runs the policy tests on the composed ones, some of
// which hold only with the layers.
func TestProviderProfilesProject(t *testing.T) {
	out, _ := compileExample(t, "fullsend-providers")
	want := map[string][]ProviderLayer{
		"review": {{Name: "github-ro", Profile: "fullsend-github-ro", File: "profiles/fullsend-github-ro.yaml", Credentials: []string{"GH_TOKEN"}, Key: "_provider_github_ro"}},
		"code": {
			{Name: "package-registries", Profile: "fullsend-package-registries", File: "profiles/fullsend-package-registries.yaml", Credentials: []string{"_NOOP_PACKAGE_REGISTRIES"}, Key: "_provider_package_registries"},
			{Name: "gitleaks", Profile: "fullsend-gitleaks", File: "profiles/fullsend-gitleaks.yaml", Credentials: []string{"_NOOP_GITLEAKS"}, Key: "_provider_gitleaks"},
			{Name: "github-code", Profile: "fullsend-github-code", File: "profiles/fullsend-github-code.yaml", Credentials: []string{"GH_TOKEN"}, Key: "_provider_github_code"},
		},
		"scan": {{Name: "github", Profile: "github", Builtin: true, Key: "_provider_github"}},
	}
	for name, layers := range want {
		c := out.Agents[name]
		got := slices.Clone(c.Providers)
		for i := range got {
			got[i].Pos, got[i].data = agentdef.Pos{}, nil
		}
		if !slices.EqualFunc(got, layers, func(a, b ProviderLayer) bool {
			return a.Name == b.Name && a.Profile == b.Profile && a.Builtin == b.Builtin && a.File == b.File && a.Key == b.Key && slices.Equal(a.Credentials, b.Credentials)
		}) {
			t.Errorf("%s: layers %+v, want %+v", name, got, layers)
		}
		for _, l := range layers {
			if _, ok := c.Policy.NetworkPolicies[l.Key]; ok {
				t.Errorf("%s: the written policy holds %s: OpenShell composes it at run time", name, l.Key)
			}
			if _, ok := c.Effective().NetworkPolicies[l.Key]; !ok {
				t.Errorf("%s: the checked policy lacks %s", name, l.Key)
			}
			if l.File == "" {
				continue
			}
			// The bundle carries a copy under the policies directory,
			// pinned in the manifest; the agent's sources pin the original.
			pin := bundle.SourceFile{Path: "profiles/" + l.Profile + ".yaml", SHA256: bundle.SHA256Hex(out.Files["profiles/"+l.Profile+".yaml"])}
			if !slices.Contains(out.Manifest.Profiles, pin) || !slices.ContainsFunc(out.Manifest.Agents[name].Sources, func(s bundle.SourceFile) bool { return s.Path == l.File && s.SHA256 == pin.SHA256 }) {
				t.Errorf("%s: %s is not pinned in the manifest's profiles and the agent's sources", name, l.File)
			}
		}
		if n := len(out.Manifest.Agents[name].Providers); n != len(layers) {
			t.Errorf("%s: manifest lists %d providers, want %d", name, n, len(layers))
		}
	}

	// The same policy tests on the bare policies: the cases only a layer
	// allows fail, so the compile did test the composed policies.
	fsys := os.DirFS(exampleDir(t, "fullsend-providers"))
	files, err := decide.FindExpectations(fsys)
	if err != nil {
		t.Fatal(err)
	}
	bare := map[string]*openshell.Policy{}
	for n, c := range out.Agents {
		bare[n] = c.Policy
	}
	rep, err := decide.RunExpectations(fsys, files, bare, nil)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, r := range rep.Results {
		if !r.Pass {
			failed = append(failed, r.Agent+": "+r.Name)
		}
	}
	for _, must := range []string{
		"review: node reads the pull request (only fullsend-github-ro grants node api.github.com)",
		"code: npm installs from the registry (fullsend-package-registries)",
		"code: pre-commit downloads the gitleaks release (fullsend-gitleaks)",
		"scan: gh reads any repository's REST API (the built-in layer)",
	} {
		if !slices.Contains(failed, must) {
			t.Errorf("%q holds on the bare policy: it does not show the layer is composed (failed: %q)", must, failed)
		}
	}
}

// profileProject writes a one-agent project naming providers, with extra
// files, and returns its directory.
func profileProject(t *testing.T, tools, providers string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	agent := "---\nname: a\ndescription: d\ntools: " + tools + "\nmodel: claude-opus-4-1@20250805\nsandbox:\n  providers: " + providers + "\n---\n\nbody\n"
	all := map[string]string{"agents/a.md": agent}
	for k, v := range files {
		all[k] = v
	}
	for name, data := range all {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readProfileFixture(t *testing.T, id string) string {
	t.Helper()
	return string(fixture.ReadFile(t, "from-project/testdata/fullsend-providers/profiles/"+id+".yaml"))
}

// TestProviderProfileErrors: a provider the agent cannot have fails the
// compile at the line that names it, or at the profile's own line.
func TestProviderProfileErrors(t *testing.T) {
	const ghRead = "Read, Bash(gh pr view:*)"
	ro := readProfileFixture(t, "fullsend-github-ro")
	tests := []struct {
		name, tools, providers string
		files                  map[string]string
		pos, msg, hint         string
	}{{
		name: "unknown profile", tools: ghRead, providers: "[fullsend-github-r0]",
		files: map[string]string{"profiles/fullsend-github-ro.yaml": ro},
		pos:   "agents/a.md:7:15", msg: `no provider profile "fullsend-github-r0": neither profiles/fullsend-github-r0.yaml nor a built-in profile of OpenShell v0.0.111`,
		hint: `did you mean "fullsend-github-ro"?`,
	}, {
		name: "id differs from the file name", tools: ghRead, providers: "[ro]",
		files: map[string]string{"profiles/ro.yaml": ro},
		pos:   "profiles/ro.yaml:4", msg: `has id "fullsend-github-ro", not "ro"`, hint: "rename the file",
	}, {
		name: "key OpenShell drops", tools: ghRead, providers: "[p]",
		files: map[string]string{"profiles/p.yaml": "id: p\ndisplay_name: P\nendpoints:\n  - host: api.github.com\n    port: 443\n    protcol: rest\n    access: read-only\nbinaries: [/usr/bin/gh]\n"},
		pos:   "profiles/p.yaml:6:5", msg: "[OPP002]",
	}, {
		name: "shadows a built-in", tools: ghRead, providers: "[github]",
		files: map[string]string{"profiles/github.yaml": strings.Replace(ro, "id: fullsend-github-ro", "id: github", 1)},
		pos:   "profiles/github.yaml:4:5", msg: "[OPP012]",
	}, {
		name: "network layer for a read-only agent", tools: "Read, Grep", providers: "[fullsend-github-ro]",
		files: map[string]string{"profiles/fullsend-github-ro.yaml": ro},
		pos:   "agents/a.md:7:15", msg: "provider fullsend-github-ro grants read access on api.github.com:443, which needs tier network; the agent's tools and declarations imply tier read-only",
		hint: "profiles/fullsend-github-ro.yaml:9:5",
	}, {
		name: "writing built-in for a network agent", tools: ghRead, providers: "[claude-code]",
		pos: "agents/a.md:7:15", msg: "provider claude-code grants access read-write on statsig.anthropic.com:443, which needs tier full",
	}, {
		name: "uninspected built-in for a network agent", tools: ghRead, providers: "[pypi]",
		pos: "agents/a.md:7:15", msg: "provider pypi grants uninspected (L4) access on pypi.org:443, which needs tier full",
	}, {
		name: "named twice", tools: ghRead, providers: "[github, github]",
		pos: "agents/a.md:7:23", msg: `provider "github" is named twice (first at line 7)`,
	}, {
		name: "a credential that is not a variable name", tools: ghRead, providers: "[{profile: github, credentials: [ghp_abc-123]}]",
		pos: "agents/a.md:7:47", msg: `invalid environment variable name "ghp_abc-123"`, hint: "never the secret itself",
	}, {
		name: "mapping without a profile", tools: ghRead, providers: "[{name: gh}]",
		pos: "agents/a.md:7:15", msg: "missing required field profile",
	}, {
		name: "a path, not an id", tools: ghRead, providers: "[profiles/x.yaml]",
		pos: "agents/a.md:7:15", msg: `invalid provider profile id "profiles/x.yaml"`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := profileProject(t, tc.tools, tc.providers, tc.files)
			_, err := CompileDir(context.Background(), dir, ProjectOptions{})
			var f *Failure
			if !errors.As(err, &f) {
				t.Fatalf("compile: %v, want a failure", err)
			}
			for _, d := range f.Diagnostics {
				if d.Severity == agentdef.SeverityError && d.Pos.String() == tc.pos && strings.Contains(d.Message, tc.msg) && strings.Contains(d.Hint, tc.hint) {
					return
				}
			}
			t.Errorf("no error at %s with %q (hint %q); got:\n%v", tc.pos, tc.msg, tc.hint, f.Diagnostics)
		})
	}
}

// TestProviderProfileModelChannel: a layer that reaches the agent's model
// API needs no tier (the runtime baseline does not either), but a wildcard
// that covers more than the model host is a warning.
func TestProviderProfileModelChannel(t *testing.T) {
	exact := "id: vertex-exact\ndisplay_name: V\nendpoints:\n  - host: us-east5-aiplatform.googleapis.com\n    port: 443\n    protocol: rest\n    enforcement: enforce\n    rules:\n      - allow: {method: POST, path: \"/v1/projects/*/locations/*/publishers/*/models/**\"}\nbinaries: [/usr/local/bin/claude]\n"
	wide := "id: vertex-wide\ndisplay_name: V\nendpoints:\n  - host: \"*.googleapis.com\"\n    port: 443\n    protocol: rest\n    enforcement: enforce\n    rules:\n      - allow: {method: POST, path: \"/v1/projects/*/locations/*/publishers/*/models/**\"}\nbinaries: [/usr/local/bin/claude]\n"
	for _, tc := range []struct{ id, data, warn string }{
		{"vertex-exact", exact, ""},
		{"vertex-wide", wide, "POST /v1/projects/*/locations/*/publishers/*/models/** on *.googleapis.com covers the agent's model API and every other host it matches"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			dir := profileProject(t, "Read, Grep", "["+tc.id+"]", map[string]string{"profiles/" + tc.id + ".yaml": tc.data})
			out, err := CompileDir(context.Background(), dir, ProjectOptions{})
			if err != nil {
				t.Fatalf("a read-only agent may have its model channel through a profile: %v", err)
			}
			var warned bool
			for _, d := range out.Warnings {
				warned = warned || strings.Contains(d.Message, "covers the agent's model API")
			}
			if warned != (tc.warn != "") {
				t.Errorf("warned %v, want %v: %v", warned, tc.warn != "", out.Warnings)
			}
		})
	}
}

// TestProviderProfileNamed: the mapping form names the provider (and so
// its layer) and its credentials; one profile may be attached twice under
// two names, each its own layer, as OpenShell composes them.
func TestProviderProfileNamed(t *testing.T) {
	dir := profileProject(t, "Read, Bash(gh pr view:*)", "[{profile: github, name: gh-a, credentials: [GH_TOKEN_A]}, {profile: github, name: gh-b}]", nil)
	out, err := CompileDir(context.Background(), dir, ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := out.Manifest.Agents["a"].Providers
	if len(got) != 2 || got[0].Name != "gh-a" || got[0].Profile != "github" || !slices.Equal(got[0].Credentials, []string{"GH_TOKEN_A"}) || got[1].Name != "gh-b" || got[1].Credentials != nil {
		t.Errorf("manifest providers %+v", got)
	}
	for _, key := range []string{"_provider_gh_a", "_provider_gh_b"} {
		if _, ok := out.Agents["a"].Effective().NetworkPolicies[key]; !ok {
			t.Errorf("no layer %s", key)
		}
	}
}

// TestProviderProfileFromSkill: a skill's providers attach after the
// agent's own, a provider both name once.
func TestProviderProfileFromSkill(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"agents/a.md":       "---\nname: a\ndescription: d\ntools: Read, Bash(gh pr view:*), Skill\nmodel: claude-opus-4-1@20250805\nskills: [s]\nsandbox:\n  providers: [github]\n---\n\nbody\n",
		"skills/s/SKILL.md": "---\nname: s\ndescription: d\nsandbox:\n  providers: [github, {profile: github, name: gh-skill}]\n---\n\nbody\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := CompileDir(context.Background(), dir, ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range out.Agents["a"].Providers {
		got = append(got, l.Name+"@"+l.Pos.File)
	}
	if want := []string{"github@agents/a.md", "gh-skill@skills/s/SKILL.md"}; !slices.Equal(got, want) {
		t.Errorf("providers %v, want %v", got, want)
	}
}

// TestProviderProfileOldRelease: before v0.0.103 a provider's credential
// is not bound to its profile's endpoints, which the compile warns about
// (the runner refuses such a run).
func TestProviderProfileOldRelease(t *testing.T) {
	dir := profileProject(t, "Read, Bash(gh pr view:*)", "[github]", nil)
	for _, tc := range []struct {
		version string
		warn    bool
	}{{"v0.0.83", true}, {"v0.0.111", false}} {
		out, err := CompileDir(context.Background(), dir, ProjectOptions{OpenShellVersion: tc.version})
		if err != nil {
			t.Fatalf("%s: %v", tc.version, err)
		}
		var warned bool
		for _, d := range out.Warnings {
			warned = warned || strings.Contains(d.Message, "fullsend run refuses providers there")
		}
		if warned != tc.warn {
			t.Errorf("%s: warned %v, want %v", tc.version, warned, tc.warn)
		}
	}
}
