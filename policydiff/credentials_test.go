package policydiff

import (
	"os"
	"slices"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/prover"
)

// TestCredentialScope (issue 29 §4, red team T4-3): review attaches
// provider github-ro with GH_TOKEN. A host added to its profile gets the
// token from v0.0.103 on (the credential is bound to every endpoint of the
// profile), and before v0.0.103 a host added anywhere does (the proxy
// resolves it at every endpoint). Each row edits the head of the
// providers bundle and names the change the endpoint (or its port) makes.
func TestCredentialScope(t *testing.T) {
	exfil := openshell.Endpoint{Host: "exfil.attacker.example", Port: 443, Protocol: "rest", Enforcement: "enforce",
		Rules: []openshell.Rule{{Allow: openshell.Match{Method: "GET", Path: "/collect"}}}}
	addTo := func(key string) func(a *Agent) {
		return func(a *Agent) {
			np := a.Policy.NetworkPolicies[key]
			np.Endpoints = append(slices.Clone(np.Endpoints), exfil)
			a.Policy.NetworkPolicies[key] = np
		}
	}
	ownPolicy := func(a *Agent) {
		a.Policy.NetworkPolicies["exfil"] = openshell.NetworkPolicy{Name: "exfil", Endpoints: []openshell.Endpoint{exfil},
			Binaries: []openshell.Binary{{Path: "/usr/bin/curl"}}}
		a.Prov["network_policies.exfil"] = []bundle.Source{{File: "agents/review.md", Line: 9, Reason: "sandbox endpoint"}}
	}
	uncredentialed := func(a *Agent) { a.Layers[0].Credentialed = false }
	for _, tc := range []struct {
		name      string
		version   string
		edit      []func(a *Agent) // on both sides' review before the head's edit
		head      func(a *Agent)
		kind      string
		field     string
		risk, cat string
	}{
		{"host added to the credentialed profile", "v0.0.111", nil, addTo("_provider_github_ro"), "endpoint", "", RiskCritical, CatCredentialScope},
		{"the same at v0.0.103", "v0.0.103", nil, addTo("_provider_github_ro"), "endpoint", "", RiskCritical, CatCredentialScope},
		{"host added to the agent's own policy", "v0.0.111", nil, ownPolicy, "endpoint", "", RiskMedium, ""},
		{"host added to the agent's own policy before binding", "v0.0.102", nil, ownPolicy, "endpoint", "", RiskCritical, CatCredentialScope},
		{"host added to the profile at v0.0.83", "v0.0.83", nil, addTo("_provider_github_ro"), "endpoint", "", RiskCritical, CatCredentialScope},
		{"host added to a profile without credentials", "v0.0.111", []func(*Agent){uncredentialed}, addTo("_provider_github_ro"), "endpoint", "", RiskMedium, ""},
		{"port added to a profile endpoint", "v0.0.111", nil, func(a *Agent) {
			np := a.Policy.NetworkPolicies["_provider_github_ro"]
			np.Endpoints = slices.Clone(np.Endpoints)
			np.Endpoints[0].Port, np.Endpoints[0].Ports = 0, []int{443, 8443}
			a.Policy.NetworkPolicies["_provider_github_ro"] = np
		}, "endpoint", "ports", RiskCritical, CatCredentialScope},
		{"the provider gains a credential", "v0.0.111", []func(*Agent){uncredentialed}, func(a *Agent) { a.Layers[0].Credentialed = true },
			"provider_profile", "credentials", RiskHigh, prover.CredentialReachExpansion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bundleDir := providersBundle(t)
			var sides [2]*Side
			for i := range sides {
				s, err := ReadBundle("bundle", os.DirFS(bundleDir))
				if err != nil {
					t.Fatal(err)
				}
				s.OpenShellVersion = tc.version
				for _, e := range tc.edit {
					e(s.Agents["review"])
				}
				sides[i] = s
			}
			tc.head(sides[1].Agents["review"])
			r := Compare(sides[0], sides[1], Options{Agents: []string{"review"}})
			var got *Change
			for _, ad := range r.Agents {
				for i, c := range ad.Changes {
					if c.Kind == tc.kind && c.Field == tc.field && c.Action != ActionRemove && c.Action != ActionNarrow && c.Action != ActionMove {
						got = &ad.Changes[i]
					}
				}
			}
			if got == nil {
				t.Fatalf("no change of field %q: %+v", tc.field, r.Agents)
			}
			if got.Risk != tc.risk || (tc.cat != "" && !slices.Contains(got.Categories, tc.cat)) || (tc.cat == "" && slices.Contains(got.Categories, CatCredentialScope)) {
				t.Errorf("%s %s: risk %s categories %v (%s), want %s %q", got.Action, got.Kind, got.Risk, got.Categories, got.Why, tc.risk, tc.cat)
			}
			if len(got.From) == 0 || got.From[0].File == "" {
				t.Errorf("no source: %+v", got.From)
			}
		})
	}
}
