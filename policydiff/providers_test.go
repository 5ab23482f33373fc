package policydiff

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
)

// providersBundle is a compiled bundle whose agents name provider profiles:
// testdata/fullsend-providers/policies with the profile copies it pins,
// fullsend-ai/agents' files, read in ../shared/fixtures (internal/fixture).
func providersBundle(t testing.TB) string {
	t.Helper()
	return fixture.Overlay(t, filepath.Join("..", "testdata", "fullsend-providers", "policies"),
		"from-project/testdata/fullsend-providers/policies", "profiles")
}

// TestComposeProvidersBundle: a bundle side's agents get the layers the
// manifest names, from the pinned project profile copies and the built-in
// catalog, with provenance at the profiles' lines; a profile copy that is
// not the pinned one is refused.
func TestComposeProvidersBundle(t *testing.T) {
	bundleDir := providersBundle(t)
	s, err := ReadBundle("bundle", os.DirFS(bundleDir))
	if err != nil {
		t.Fatal(err)
	}
	for agent, key := range map[string]string{"review": "_provider_github_ro", "code": "_provider_gitleaks", "scan": "_provider_github"} {
		if _, ok := s.Agents[agent].Policy.NetworkPolicies[key]; !ok {
			t.Errorf("%s: no layer %s", agent, key)
		}
	}
	if src := s.Agents["review"].Prov["network_policies._provider_github_ro.endpoints[0]"]; len(src) == 0 || src[0].File != "profiles/fullsend-github-ro.yaml" {
		t.Errorf("review's layer provenance %v, want profiles/fullsend-github-ro.yaml", src)
	}

	policies := fstest.MapFS{}
	if err := fs.WalkDir(os.DirFS(bundleDir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(filepath.Join(bundleDir, filepath.FromSlash(p)))
		policies[p] = &fstest.MapFile{Data: data}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ro := policies["profiles/fullsend-github-ro.yaml"]
	ro.Data = []byte(strings.Replace(string(ro.Data), "access: read-only", "access: read-write", 1))
	if _, err := ReadBundle("bundle", policies); err == nil || !strings.Contains(err.Error(), "fullsend-github-ro.yaml has sha256") {
		t.Errorf("a changed profile copy composed: %v", err)
	}
}

// TestCompareProviders: an agent gaining a provider shows the provider and
// each endpoint its layer grants, with their risk; losing it shows them
// removed.
func TestCompareProviders(t *testing.T) {
	bundleDir := providersBundle(t)
	read := func() *Side {
		s, err := ReadBundle("bundle", os.DirFS(bundleDir))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	head, base := read(), read()
	// The base: review without providers (its own policy alone).
	review := base.Agents["review"]
	review.Manifest.Providers = nil
	delete(review.Policy.NetworkPolicies, "_provider_github_ro")
	find := func(r *Result, kind, action string) *Change {
		for _, ad := range r.Agents {
			for i, c := range ad.Changes {
				if ad.Agent == "review" && c.Kind == kind && c.Action == action {
					return &ad.Changes[i]
				}
			}
		}
		return nil
	}
	gain := Compare(base, head, Options{})
	if c := find(gain, "provider_profile", ActionAdd); c == nil || c.Policy != "_provider_github_ro" {
		t.Errorf("gaining fullsend-github-ro: no provider_profile change: %+v", gain.Agents)
	}
	if c := find(gain, "endpoint", ActionAdd); c == nil || c.Policy != "_provider_github_ro" || c.Risk == RiskInfo {
		t.Errorf("gaining fullsend-github-ro: its endpoints are not graded grants: %+v", c)
	}
	lose := Compare(head, base, Options{})
	if find(lose, "provider_profile", ActionRemove) == nil || find(lose, "endpoint", ActionRemove) == nil {
		t.Errorf("losing fullsend-github-ro: %+v", lose.Agents)
	}
	for _, ad := range gain.Agents {
		if ad.Agent != "review" {
			t.Errorf("agent %s changed: %+v", ad.Agent, ad.Changes)
		}
	}
}
