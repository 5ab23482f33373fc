package compile

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile/check"
)

// TestEmitProfiles: in the profiles emit mode the network policies every
// agent of testdata/fullsend-agents shares become generated provider
// profiles, the written policies keep the rest, and the composed policies
// (which the project's policy tests pass on, or the compile would fail)
// hold each moved grant unchanged under its layer key. Without --set the
// grants that hold placeholders stay compiled.
func TestEmitProfiles(t *testing.T) {
	dir := exampleDir(t, "fullsend-agents")
	plain, err := CompileDir(context.Background(), dir, ProjectOptions{Set: []string{"OWNER=acme", "REPO_NAME=widgets", "ISSUE_NUMBER=1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		set  []string
		want []string
	}{
		{"with --set", []string{"OWNER=acme", "REPO_NAME=widgets", "ISSUE_NUMBER=1"},
			[]string{"fullsend-shared-api-anthropic-com-443", "fullsend-shared-api-github-com-443-graphql", "fullsend-shared-api-github-com-443"}},
		// The REST grant is scoped to {{OWNER}}/{{REPO_NAME}}: it stays.
		{"placeholders open", nil, []string{"fullsend-shared-api-anthropic-com-443", "fullsend-shared-api-github-com-443-graphql"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := CompileDir(context.Background(), dir, ProjectOptions{Set: tc.set, EmitProfiles: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range out.Manifest.Profiles {
				got = append(got, strings.TrimSuffix(strings.TrimPrefix(p.Path, "profiles/"), ".yaml"))
				if diags := check.File(p.Path, out.Files[p.Path], out.OpenShellVersion); openshell.HasErrors(diags) {
					t.Errorf("%s does not validate: %v", p.Path, diags)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("generated profiles %v, want %v", got, tc.want)
			}
			if tc.set == nil {
				return
			}
			for _, name := range out.AgentNames() {
				c, before := out.Agents[name], plain.Agents[name].Policy
				if len(c.Providers) != len(tc.want) {
					t.Errorf("%s attaches %d providers, want %d", name, len(c.Providers), len(tc.want))
				}
				for _, l := range c.Providers {
					orig := strings.ReplaceAll(strings.TrimPrefix(l.Profile, EmitProfilesPrefix), "-", "_")
					if _, ok := c.Policy.NetworkPolicies[orig]; ok {
						t.Errorf("%s: %s is still in the written policy", name, orig)
					}
					if d := layerDifference(before.NetworkPolicies[orig], l.prof); d != "" {
						t.Errorf("%s: layer %s differs from the compiled %s at %s", name, l.Key, orig, d)
					}
				}
				if len(c.Effective().NetworkPolicies) != len(before.NetworkPolicies) {
					t.Errorf("%s: composed policy has %d network policies, the compiled one %d", name, len(c.Effective().NetworkPolicies), len(before.NetworkPolicies))
				}
			}
		})
	}
}
