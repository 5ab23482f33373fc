package policydiff

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

const providersProject = "../testdata/fullsend-providers"

// readComposed reads the fullsend-providers bundle with its provider
// layers composed from root.
func readComposed(t *testing.T, root fs.FS) (*Side, error) {
	t.Helper()
	policies := os.DirFS(filepath.Join(providersProject, "policies"))
	s, err := ReadBundle("bundle", policies)
	if err != nil {
		t.Fatal(err)
	}
	return s, ComposeProviders(s, policies, root)
}

// TestComposeProvidersBundle: a bundle side's agents get the layers the
// manifest names, from the pinned project profiles and the built-in
// catalog, with provenance at the profiles' lines; a profile that is not
// the pinned one is refused.
func TestComposeProvidersBundle(t *testing.T) {
	s, err := readComposed(t, os.DirFS(providersProject))
	if err != nil {
		t.Fatal(err)
	}
	for agent, key := range map[string]string{"review": "_provider_fullsend_github_ro", "code": "_provider_fullsend_gitleaks", "scan": "_provider_github"} {
		if _, ok := s.Agents[agent].Policy.NetworkPolicies[key]; !ok {
			t.Errorf("%s: no layer %s", agent, key)
		}
	}
	if src := s.Agents["review"].Prov["network_policies._provider_fullsend_github_ro.endpoints[0]"]; len(src) == 0 || src[0].File != "profiles/fullsend-github-ro.yaml" {
		t.Errorf("review's layer provenance %v, want profiles/fullsend-github-ro.yaml", src)
	}

	root := fstest.MapFS{}
	for _, f := range []string{"fullsend-github-ro", "fullsend-github-code", "fullsend-gitleaks", "fullsend-package-registries"} {
		data, err := os.ReadFile(filepath.Join(providersProject, "profiles", f+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		root["profiles/"+f+".yaml"] = &fstest.MapFile{Data: data}
	}
	ro := root["profiles/fullsend-github-ro.yaml"]
	ro.Data = []byte(strings.Replace(string(ro.Data), "access: read-only", "access: read-write", 1))
	if _, err := readComposed(t, root); err == nil || !strings.Contains(err.Error(), "the manifest pins") {
		t.Errorf("a changed profile file composed: %v", err)
	}
}

// TestCompareProviders: an agent gaining a provider shows the provider and
// each endpoint its layer grants, with their risk; losing it shows them
// removed.
func TestCompareProviders(t *testing.T) {
	head, err := readComposed(t, os.DirFS(providersProject))
	if err != nil {
		t.Fatal(err)
	}
	base, err := ReadBundle("bundle", os.DirFS(filepath.Join(providersProject, "policies")))
	if err != nil {
		t.Fatal(err)
	}
	// The base: review without providers (its own policy alone).
	for name, a := range base.Agents {
		if name != "review" {
			base.Agents[name] = head.Agents[name]
			continue
		}
		a.Manifest.Providers = nil
	}
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
	if c := find(gain, "provider_profile", ActionAdd); c == nil || c.Policy != "_provider_fullsend_github_ro" {
		t.Errorf("gaining fullsend-github-ro: no provider_profile change: %+v", gain.Agents)
	}
	if c := find(gain, "endpoint", ActionAdd); c == nil || c.Policy != "_provider_fullsend_github_ro" || c.Risk == RiskInfo {
		t.Errorf("gaining fullsend-github-ro: its endpoints are not graded grants: %+v", c)
	}
	lose := Compare(head, base, Options{})
	if find(lose, "provider_profile", ActionRemove) == nil || find(lose, "endpoint", ActionRemove) == nil {
		t.Errorf("losing fullsend-github-ro: %+v", lose.Agents)
	}
}
