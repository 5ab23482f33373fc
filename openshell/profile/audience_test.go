package profile

import (
	"fmt"
	"strings"
	"testing"
)

// TestMatchesToolsCall: the method matchers that select tools/call, with
// the Rust glob crate's reading (glob 0.3.3): a glob it refuses selects
// nothing. The former regexp reading took "tools/c**" and "tools/call/**"
// for matches.
func TestMatchesToolsCall(t *testing.T) {
	for _, tc := range []struct {
		method string
		want   bool
	}{
		{"tools/call", true},
		{"*", true},
		{"tools/*", true},
		{"t??ls/c[a-z]ll", true},
		{"**/call", true},
		{"tools/**", true},
		{"tools/c**", false}, // ** not a whole component: refused
		{"tools/call/**", false},
		{"tools/list", false},
		{"t[!o]ols/call", false},
		{"tools/[", false},
	} {
		if got := matchesToolsCall(tc.method); got != tc.want {
			t.Errorf("matchesToolsCall(%q) = %v, want %v", tc.method, got, tc.want)
		}
	}
}

// TestAudienceOverrideSelectors: two overrides of one credential on one
// endpoint port with equal specificity are ambiguous when their host and
// path selectors overlap (profiles.rs:2331-2398 @ v0.0.111), read with
// glob.ProfileHost and glob.EndpointPath.
func TestAudienceOverrideSelectors(t *testing.T) {
	for _, tc := range []struct {
		name         string
		hostA, hostB string
		pathA, pathB string
		endpointHost string
		want         bool
	}{
		{"same path", "", "", "/v1/x", "/v1/x", "api.example.com", true},
		{"disjoint paths", "", "", "/v1/x", "/v1/y", "api.example.com", false},
		{"nested subtrees differ in specificity", "", "", "/v1/**", "/v1/admin/**", "api.example.com", false},
		// "/v1**" is no glob to the crate, so it selects only itself: no
		// overlap with "/v1", though both score the same.
		{"refused glob", "", "", "/v1**", "/v1", "api.example.com", false},
		{"specificity differs (two stars against one)", "**.example.com", "*.example.com", "/a", "/a", "**.example.com", false},
		{"hosts that overlap", "*.a.example.com", "x.*.example.com", "/a", "/a", "**.example.com", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Contains(renderAll(checkOverrides(t, tc.endpointHost, [2]string{tc.hostA, tc.pathA}, [2]string{tc.hostB, tc.pathB})), "ambiguous token_grant audience_overrides")
			if got != tc.want {
				t.Errorf("ambiguous = %v, want %v", got, tc.want)
			}
		})
	}
}

// checkOverrides checks a profile whose one credential has two audience
// overrides (host, path) on one endpoint.
func checkOverrides(t *testing.T, endpointHost string, a, b [2]string) []string {
	t.Helper()
	override := func(o [2]string, aud string) string {
		s := "        - audience: " + aud + "\n"
		if o[0] != "" {
			s += fmt.Sprintf("          host: %q\n", o[0])
		}
		if o[1] != "" {
			s += fmt.Sprintf("          path: %q\n", o[1])
		}
		return s
	}
	doc := `id: overrides
display_name: Overrides
credentials:
  - name: access_token
    auth_style: bearer
    header_name: Authorization
    token_grant:
      token_endpoint: https://auth.example.com/token
      audience: api://default
      audience_overrides:
` + override(a, "api://a") + override(b, "api://b") + `endpoints:
  - host: "` + endpointHost + `"
    port: 443
    protocol: rest
    access: full
`
	p, diags := Decode("overrides.yaml", []byte(doc), "v0.0.111")
	if p == nil {
		t.Fatalf("decode: %v", diags)
	}
	var out []string
	for _, d := range append(diags, CheckSet([]*Profile{p}, "v0.0.111")...) {
		out = append(out, d.Message)
	}
	return out
}

func renderAll(msgs []string) string { return strings.Join(msgs, "\n") }
