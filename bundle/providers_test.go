package bundle

import (
	"errors"
	"strings"
	"testing"
)

// TestManifestProviders: a manifest's providers decode when each project
// profile they name is pinned in profiles and profiles pins nothing else.
func TestManifestProviders(t *testing.T) {
	const sum = "0000000000000000000000000000000000000000000000000000000000000000"
	agent := func(providers string) string {
		return `{"schema":"` + ManifestSchema + `","openshell_version":"v0.0.111","agents":{"a":{"policy":"a.yaml","policy_sha256":"` + sum +
			`","source":"agents/a.md","sources":[],"runtime":"claude","tier":"network","runtime_flags":{},"providers":` + providers + `}}`
	}
	ro := `{"name":"fullsend-github-ro","profile":"fullsend-github-ro","file":"profiles/fullsend-github-ro.yaml","layer":"_provider_fullsend_github_ro"}`
	gh := `{"name":"github","profile":"github","builtin":true,"layer":"_provider_github"}`
	pinned := `,"profiles":{"profiles/fullsend-github-ro.yaml":"` + sum + `"}}`
	tests := []struct{ name, doc, err string }{
		{"project and built-in", agent("["+ro+","+gh+"]") + pinned, ""},
		{"built-in only", agent("["+gh+"]") + "}", ""},
		{"project profile not pinned", agent("["+ro+"]") + "}", "is not pinned"},
		{"pinned but unused", agent("["+gh+"]") + pinned, "is named by no agent"},
		{"built-in with a file", agent(`[{"name":"g","profile":"github","builtin":true,"file":"p.yaml","layer":"_provider_g"}]`) + `,"profiles":{"p.yaml":"` + sum + `"}}`, "exactly one"},
		{"layer without the reserved prefix", agent(`[{"name":"github","profile":"github","builtin":true,"layer":"github"}]`) + "}", "_provider_ layer"},
		{"file leaving the project", agent(`[{"name":"x","profile":"x","file":"../x.yaml","layer":"_provider_x"}]`) + `,"profiles":{"../x.yaml":"` + sum + `"}}`, "is not pinned"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := DecodeManifest([]byte(tc.doc))
			if tc.err == "" {
				if err != nil || len(m.Agents["a"].Providers) == 0 {
					t.Fatalf("DecodeManifest: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("DecodeManifest: %v, want ErrManifest with %q", err, tc.err)
			}
		})
	}
}
