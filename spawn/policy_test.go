package spawn

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/forge"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// TestCompiledExamplePoliciesMatchTheServices checks the compiled example
// triage system (testdata/triage/policies) against the two services: every
// L7 rule towards the forge proxy (:8081) is a route the proxy serves, write
// rules appear only for write-tier agents and are pinned to the job's issue,
// and the spawn endpoint (:8082) is reachable only by agents that may spawn.
func TestCompiledExamplePoliciesMatchTheServices(t *testing.T) {
	dir := os.DirFS("../testdata/triage/policies")
	b, err := bundle.Open(dir, ".")
	if err != nil {
		t.Fatal(err)
	}
	m := b.Manifest
	if got := m.Agents["triage"].Spawns; !slices.Equal(got, []string{"completeness-assessor", "duplicate-detector", "reproducibility-verifier"}) {
		t.Fatalf("triage spawns %v", got)
	}
	if _, err := New(Config{Manifest: m, Registry: forge.NewRegistry(), Runner: &okRunner{}, ForgeURL: "http://forge"}); err != nil {
		t.Fatalf("the compiled manifest does not configure the spawn service: %v", err)
	}
	concrete := strings.NewReplacer("{{OWNER}}", "acme", "{{REPO_NAME}}", "widgets", "{{ISSUE_NUMBER}}", "42", "*", "7")
	forgeRules := 0
	for _, name := range m.AgentNames() {
		t.Run(name, func(t *testing.T) {
			p, err := openshell.Unmarshal(b.Policies[name])
			if err != nil {
				t.Fatal(err)
			}
			tier := forge.TierFromManifest(m.Agents[name].Tier)
			for key, np := range p.NetworkPolicies {
				for _, ep := range np.Endpoints {
					if ep.Host != "host.docker.internal" {
						continue
					}
					if ep.Access != "" {
						t.Errorf("%s: access preset %q on the host services; want explicit rules", key, ep.Access)
					}
					for _, r := range ep.Rules {
						switch ep.Port {
						case 8081:
							forgeRules++
							rt, _, _, err := forge.Match(r.Allow.Method, concrete.Replace(r.Allow.Path))
							if err != nil {
								t.Errorf("%s: rule %s %s is not on the forge proxy surface: %v", key, r.Allow.Method, r.Allow.Path, err)
								continue
							}
							if rt.Access == forge.Write && tier != forge.TierWrite {
								t.Errorf("%s: %s-tier agent allowed to %s %s", key, tier, r.Allow.Method, r.Allow.Path)
							}
							if rt.Access == forge.Write && !strings.Contains(r.Allow.Path, "{{ISSUE_NUMBER}}") {
								t.Errorf("%s: write rule %s not pinned to {{ISSUE_NUMBER}}", key, r.Allow.Path)
							}
						case 8082:
							if r.Allow.Method != "POST" || r.Allow.Path != Path {
								t.Errorf("%s: spawn rule %s %s, want POST %s", key, r.Allow.Method, r.Allow.Path, Path)
							}
							if len(m.Agents[name].Spawns) == 0 {
								t.Errorf("%s: agent without Agent(...) list can reach the spawn service", key)
							}
						default:
							t.Errorf("%s: unexpected host service port %d", key, ep.Port)
						}
					}
				}
			}
		})
	}
	if forgeRules == 0 {
		t.Fatal("no policy reaches the forge proxy: the example is not the scoped-tools triage system")
	}
}
