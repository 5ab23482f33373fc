package compile

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

// TestEachBinaryGetsItsOwnRules: an endpoint pinned to curl with one GET
// rule no longer gets the rules gh implies on the same host (they were
// unioned into one network policy, so curl could read repository
// contents: issue 30, section 2); binaries with the same rules share a
// policy; and binaries that cannot be told apart in OpenShell (different
// allowed_ips on one host:port) are an error at the endpoint's line.
func TestEachBinaryGetsItsOwnRules(t *testing.T) {
	const curlEndpoint = "sandbox:\n  endpoints:\n    - host: api.github.com\n      binaries: [/usr/bin/curl]\n      rules:\n        - GET /repos/{{OWNER}}/{{REPO_NAME}}/releases\n"
	for _, tc := range []struct {
		name, tools, sandbox string
		keys                 []string // the api.github.com REST policies
		allow, deny          []string
		err                  string
	}{
		{name: "curl pinned beside gh", tools: "Bash(gh pr list:*), Bash(curl:*)", sandbox: curlEndpoint,
			keys: []string{"api_github_com_443_curl", "api_github_com_443_gh"},
			allow: []string{
				"GET https://api.github.com/repos/acme/widgets/releases from /usr/bin/curl",
				"GET https://api.github.com/repos/acme/widgets/contents/x from /usr/bin/gh",
			},
			deny: []string{
				"GET https://api.github.com/repos/acme/widgets/contents/secrets.txt from /usr/bin/curl",
			}},
		{name: "same rules share one policy", tools: "Bash(gh)",
			sandbox: "sandbox:\n  endpoints:\n    - host: api.github.com\n      rules:\n        - GET /repos/{{OWNER}}/{{REPO_NAME}}/releases\n",
			keys:    []string{"api_github_com_443"},
			allow:   []string{"GET https://api.github.com/repos/acme/widgets/releases from /usr/local/bin/gh"},
			deny:    []string{"GET https://api.github.com/repos/acme/widgets/releases from /usr/bin/curl"}},
		{name: "settings OpenShell needs shared", tools: "Bash(gh pr list:*), Bash(curl:*)",
			sandbox: curlEndpoint + "      allowed_ips: [140.82.112.0/20]\n",
			err:     "agents/notes.md:7:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeProject(t, map[string]string{
				"agents/notes.md": "---\nname: notes\ndescription: d\ntools: " + tc.tools + "\n" + tc.sandbox + "---\nb\n",
			})
			out, err := CompileDir(context.Background(), dir, ProjectOptions{})
			if tc.err != "" {
				var ds agentdef.Diagnostics
				if !errors.As(err, &ds) || !slices.ContainsFunc(ds, func(d agentdef.Diagnostic) bool {
					return strings.HasPrefix(d.Pos.String(), tc.err) && strings.Contains(d.Message, "allowed_ips")
				}) {
					t.Fatalf("want an allowed_ips error at %s, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := out.Agents["notes"]
			var keys []string
			for _, k := range c.Policy.PolicyKeys() {
				if strings.HasPrefix(k, "api_github_com_443") && c.Policy.NetworkPolicies[k].Endpoints[0].Protocol == "rest" {
					keys = append(keys, k)
				}
			}
			if !slices.Equal(keys, tc.keys) {
				t.Errorf("policies %v, want %v", keys, tc.keys)
			}
			for _, req := range tc.allow {
				if d := decideOn(t, c, req); !d.Allowed {
					t.Errorf("%s: denied (%s)", req, d.Reason)
				}
			}
			for _, req := range tc.deny {
				if d := decideOn(t, c, req); d.Allowed {
					t.Errorf("%s: allowed (%s)", req, d.Reason)
				}
			}
		})
	}
}
