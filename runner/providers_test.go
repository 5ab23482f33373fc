package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// acmeProfile is a project profile holding one credential.
const acmeProfile = `id: acme-api
display_name: Acme API
category: other
credentials:
  - name: token
    env_vars: [ACME_TOKEN]
    required: true
    auth_style: bearer
    header_name: authorization
endpoints:
  - host: api.acme.example.com
    port: 443
    protocol: rest
    access: read-only
    enforcement: enforce
binaries: [/usr/bin/curl]
`

// Secrets of the provider tests; none may reach argv, the log or the result.
const (
	acmeSecret   = "acme_SECRET_4f1c9e0b7d"
	githubSecret = "ghp_SECRETGITHUB_0123456789abcdef"
)

// withProfileProviders makes triage attach refs, the project profiles
// (path relative to policies/ -> bytes) pinned in the manifest.
func withProfileProviders(t testing.TB, project fstest.MapFS, refs []bundle.ProviderRef, files map[string]string) {
	t.Helper()
	m, err := bundle.DecodeManifest(project["policies/manifest.json"].Data)
	if err != nil {
		t.Fatal(err)
	}
	for p, data := range files {
		project["policies/"+p] = &fstest.MapFile{Data: []byte(data)}
		m.Profiles = append(m.Profiles, bundle.SourceFile{Path: p, SHA256: bundle.SHA256Hex([]byte(data))})
	}
	slices.SortFunc(m.Profiles, func(a, b bundle.SourceFile) int { return strings.Compare(a.Path, b.Path) })
	a := m.Agents["triage"]
	a.Providers = refs
	m.Agents["triage"] = a
	mb, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	project["policies/manifest.json"] = &fstest.MapFile{Data: mb}
}

var (
	acmeRef   = bundle.ProviderRef{Name: "acme", Profile: "acme-api", File: "profiles/acme-api.yaml"}
	githubRef = bundle.ProviderRef{Name: "github", Profile: "github", Builtin: true}
)

func newProviderHarness(t *testing.T, version string, refs []bundle.ProviderRef, files map[string]string) *harness {
	t.Helper()
	h := newHarness(t, CIGitHub)
	h.env["OPENSHELL_FAKE_VERSION"] = strings.TrimPrefix(version, "v")
	h.env["ACME_TOKEN"] = acmeSecret
	h.env["GITHUB_TOKEN"] = githubSecret
	h.project = testProject(t, version)
	withProfileProviders(t, h.project, refs, files)
	return h
}

// TestProfileProviders runs an agent that attaches a project profile and
// a built-in one against the fake at v0.0.111: the profile is imported,
// providers_v2_enabled set, the providers created from the environment
// and attached in order, and the effective policy the fake composed is
// confirmed as the compiled policy plus exactly the expected layers.
func TestProfileProviders(t *testing.T) {
	h := newProviderHarness(t, "v0.0.111", []bundle.ProviderRef{acmeRef, githubRef}, map[string]string{"profiles/acme-api.yaml": acmeProfile})
	res, err := h.run(context.Background(), Request{})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if !res.Deleted {
		t.Error("sandbox not deleted")
	}
	want := []string{
		"openshell provider list-profiles -o json",
		"openshell provider profile import --from ",
		"openshell settings set --global --key providers_v2_enabled --value true --yes",
		"openshell provider create --name acme --type acme-api --credential ACME_TOKEN",
		"openshell provider create --name github --type github --credential GITHUB_TOKEN",
	}
	for _, w := range want {
		if h.count(w) != 1 {
			t.Errorf("want one call %q; calls:\n%s", w, callList(h))
		}
	}
	for _, c := range h.calls() {
		if strings.HasPrefix(c.String(), "openshell sandbox create") && !strings.Contains(c.String(), "--provider acme --provider github") {
			t.Errorf("providers not attached in order: %s", c)
		}
		if strings.HasPrefix(c.String(), "openshell provider create --name acme") && !slices.Contains(c.Env, "ACME_TOKEN") {
			t.Errorf("ACME_TOKEN not in the environment of %s: %v", c, c.Env)
		}
	}
	if !strings.Contains(h.log.String(), "the effective policy is the compiled policy plus provider layers _provider_acme, _provider_github") {
		t.Errorf("composition not confirmed:\n%s", h.log.String())
	}
	assertNoSecrets(t, h, res)
}

// assertNoSecrets checks the fake's recorded argv, the runner's log and the
// result for the provider secrets.
func assertNoSecrets(t *testing.T, h *harness, res Result) {
	t.Helper()
	calls, _ := os.ReadFile(filepath.Join(h.state, "calls.jsonl"))
	b, _ := json.Marshal(res)
	for _, secret := range []string{acmeSecret, githubSecret} {
		if strings.Contains(string(calls), secret) {
			t.Errorf("secret in a recorded openshell call:\n%s", calls)
		}
		for _, line := range strings.Split(h.log.String(), "\n") {
			if strings.Contains(line, secret) && line != "::add-mask::"+secret {
				t.Errorf("secret in the log: %q", line)
			}
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("secret in the result: %s", b)
		}
	}
}

func callList(h *harness) string {
	var out []string
	for _, c := range h.calls() {
		out = append(out, c.String())
	}
	return strings.Join(out, "\n")
}

// TestProfileProvidersRefused covers what the runner refuses, each before
// the agent runs: the older tag (no credential endpoint binding), a
// gateway that composes more than the profiles hold, a global policy, a
// project profile with a built-in's id, a missing secret, and --provider
// added to an agent with profiles.
func TestProfileProvidersRefused(t *testing.T) {
	builtinID := strings.Replace(acmeProfile, "id: acme-api", "id: github", 1)
	tests := []struct {
		name    string
		version string
		refs    []bundle.ProviderRef
		files   map[string]string
		edit    func(h *harness)
		wantErr error
		wantMsg string
		// created: a sandbox was created (and must be deleted).
		created bool
	}{
		{name: "v0.0.83 cannot bind credentials", version: "v0.0.83", wantErr: ErrPreflight,
			wantMsg: "OpenShell v0.0.83 does not bind a provider's credentials to its profile endpoints (from v0.0.103)"},
		{name: "gateway composes an unexpected endpoint", edit: func(h *harness) { h.env["OPENSHELL_FAKE_FAIL"] = "compose-extra" },
			wantErr: ErrPolicy, created: true,
			wantMsg: "the effective policy is not the compiled policy plus the provider layers _provider_acme, _provider_github: first difference at network_policies._provider_acme.endpoints"},
		{name: "global policy", edit: func(h *harness) { h.env["OPENSHELL_FAKE_FAIL"] = "global-policy" },
			wantErr: ErrPolicy, created: true, wantMsg: "the sandbox enforces the gateway's global policy"},
		{name: "project profile with a built-in id",
			refs:    []bundle.ProviderRef{{Name: "gh", Profile: "github", File: "profiles/github.yaml"}},
			files:   map[string]string{"profiles/github.yaml": builtinID},
			wantErr: ErrPolicy, wantMsg: `id "github" is an OpenShell built-in profile at v0.0.111; the gateway refuses to import it`},
		{name: "manifest id differs from the file's", refs: []bundle.ProviderRef{{Name: "acme", Profile: "acme", File: "profiles/acme-api.yaml"}},
			wantErr: ErrPolicy, wantMsg: `has id "acme-api", the manifest says "acme"`},
		{name: "secret missing", edit: func(h *harness) { delete(h.env, "ACME_TOKEN") },
			wantErr: ErrCredential, wantMsg: "provider credential missing: provider acme of agent triage (sandbox.providers in agents/triage.md): " +
				"a required credential is not set: set ACME_TOKEN (credential token of profile acme-api, policies/profiles/acme-api.yaml:6:15)"},
		{name: "optional secret missing", edit: func(h *harness) { delete(h.env, "ACME_TOKEN") },
			files:   map[string]string{"profiles/acme-api.yaml": strings.Replace(acmeProfile, "    required: true\n", "", 1)},
			wantErr: ErrCredential, wantMsg: "no credential is set: set ACME_TOKEN (credential token of profile acme-api, policies/profiles/acme-api.yaml:6:15)"},
		{name: "with --provider", edit: func(h *harness) {
			h.opts.Providers = []Provider{{Name: "anthropic", Type: "anthropic", CredentialEnv: []string{"ACME_TOKEN"}}}
		}, wantErr: ErrPreflight, wantMsg: "--provider cannot be added to it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			version, refs, files := tt.version, tt.refs, tt.files
			if version == "" {
				version = "v0.0.111"
			}
			if refs == nil {
				refs = []bundle.ProviderRef{acmeRef, githubRef}
			}
			if files == nil {
				files = map[string]string{"profiles/acme-api.yaml": acmeProfile}
			}
			h := newProviderHarness(t, version, refs, files)
			if tt.edit != nil {
				tt.edit(h)
			}
			res, err := h.run(context.Background(), Request{})
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %v, want %v saying %q\n%s", err, tt.wantErr, tt.wantMsg, h.log.String())
			}
			if errors.Is(tt.wantErr, ErrCredential) && ExitCode(err) != ExitPolicy {
				t.Errorf("exit %d, want %d", ExitCode(err), ExitPolicy)
			}
			if h.count("openshell sandbox exec") > 0 {
				t.Error("the agent ran")
			}
			if got := h.count("openshell sandbox create") > 0; got != tt.created {
				t.Errorf("sandbox created: %v, want %v", got, tt.created)
			}
			if tt.created && (!res.Deleted || len(h.sandboxesLeft()) > 0) {
				t.Error("sandbox not deleted")
			}
			if !tt.created && h.count("openshell provider create") > 0 {
				t.Errorf("a provider was created before the refusal:\n%s", callList(h))
			}
			assertNoSecrets(t, h, res)
		})
	}
}

// TestProfileAlreadyImported runs twice on one gateway: the second run
// finds the profile imported by the first and does not import it again;
// a bundle whose profile differs from the gateway's is refused.
func TestProfileAlreadyImported(t *testing.T) {
	h := newProviderHarness(t, "v0.0.111", []bundle.ProviderRef{acmeRef}, map[string]string{"profiles/acme-api.yaml": acmeProfile})
	for i := range 2 {
		if _, err := h.run(context.Background(), Request{}); err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, h.log.String())
		}
	}
	if n := h.count("openshell provider profile import"); n != 1 {
		t.Errorf("%d imports, want 1:\n%s", n, callList(h))
	}
	if !strings.Contains(h.log.String(), "provider profile acme-api: already on the gateway, the same as profiles/acme-api.yaml") {
		t.Errorf("log:\n%s", h.log.String())
	}
	changed := strings.Replace(acmeProfile, "api.acme.example.com", "evil.example.com", 1)
	h.project = testProject(t, "v0.0.111")
	withProfileProviders(t, h.project, []bundle.ProviderRef{acmeRef}, map[string]string{"profiles/acme-api.yaml": changed})
	_, err := h.run(context.Background(), Request{})
	if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), "the gateway already holds a provider profile acme-api that differs from the bundle's profiles/acme-api.yaml at endpoints[0].host") {
		t.Fatalf("error %v", err)
	}
}

func TestCredentialEnv(t *testing.T) {
	env := MapEnv(map[string]string{"A": "1", "GH_TOKEN": "2", "EMPTY": ""})
	p := mustProfile(t, "id: p\ndisplay_name: P\ncredentials:\n  - name: t\n    env_vars: [GITHUB_TOKEN, GH_TOKEN]\n    required: true\n  - name: o\n    env_vars: [OPT]\n")
	tests := []struct {
		name    string
		ref     bundle.ProviderRef
		want    []string
		wantErr string
	}{
		{name: "from the profile, first set", want: []string{"GH_TOKEN"}},
		{name: "manifest list", ref: bundle.ProviderRef{Credentials: []string{"A"}}, want: []string{"A"}},
		{name: "manifest list, unset", ref: bundle.ProviderRef{Credentials: []string{"EMPTY"}}, wantErr: "credential variable EMPTY is not set"},
		{name: "manifest list, bad name", ref: bundle.ProviderRef{Credentials: []string{"A=B"}}, wantErr: "is not an environment variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := credentialEnv(tt.ref, p, env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	none := mustProfile(t, "id: p\ndisplay_name: P\nendpoints:\n  - host: a.example.com\n    port: 443\n")
	if _, err := credentialEnv(bundle.ProviderRef{}, none, env); err == nil || !strings.Contains(err.Error(), "profile p (p.yaml) declares no credential") {
		t.Errorf("a provider without credentials: %v", err)
	}
}

func mustProfile(t *testing.T, src string) *profile.Profile {
	t.Helper()
	p, diags := profile.Decode("p.yaml", []byte(src), "v0.0.111")
	if p == nil {
		t.Fatalf("profile does not decode: %v", diags)
	}
	return p
}

// TestProfileSecretMaskedEarly gives a placeholder the value of a provider
// credential: the runner prints placeholder values before the providers
// step, so the credential must be masked from the start.
func TestProfileSecretMaskedEarly(t *testing.T) {
	h := newProviderHarness(t, "v0.0.111", []bundle.ProviderRef{acmeRef, githubRef}, map[string]string{"profiles/acme-api.yaml": acmeProfile})
	res, _ := h.run(context.Background(), Request{Values: placeholder.Values{"OWNER": acmeSecret, "REPO_NAME": githubSecret}})
	if !strings.Contains(h.log.String(), "{{OWNER}} = ***") {
		t.Errorf("placeholder line not masked:\n%s", h.log.String())
	}
	assertNoSecrets(t, h, res)
}
