package stage

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestOpenCodePermissionMirrorsAllowlist: the reviewer of testdata/opencode
// (the permission shape of sst/opencode's agent docs: "*": deny, bash as a
// pattern map) compiles to the network tier, whose permission map says
// bash: deny; the runner carries the agent's own command patterns into it,
// as --allowedTools carries Bash(...) rules for Claude Code.
func TestOpenCodePermissionMirrorsAllowlist(t *testing.T) {
	def, err := os.ReadFile("../../testdata/opencode/.opencode/agent/reviewer.md")
	if err != nil {
		t.Fatal(err)
	}
	tierMap := `{"edit":"deny","bash":"deny","webfetch":"allow"}`
	got, err := OpenCodePermission(tierMap, def)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"edit":"deny","bash":{"*":"deny","git diff *":"allow","git log *":"allow","gh pr view *":"allow","gh pr diff *":"allow"},"webfetch":"allow"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for name, tc := range map[string]struct{ tierMap, def string }{
		"bash allowed by the tier": {`{"bash":"allow"}`, string(def)},
		"no bash patterns":         {tierMap, "---\ndescription: d\npermission:\n  bash: deny\n---\nb\n"},
		"not an object":            {`deny`, string(def)},
	} {
		got, err := OpenCodePermission(tc.tierMap, []byte(tc.def))
		if err != nil || got != tc.tierMap {
			t.Errorf("%s: got %q, %v; want the tier's map unchanged", name, got, err)
		}
	}
	if _, err := OpenCodePermission(tierMap, []byte("no frontmatter")); err == nil || !strings.Contains(err.Error(), "frontmatter") {
		t.Errorf("no frontmatter: %v", err)
	}
}

// FuzzOpenCodePermission: any definition and tier map yield either the
// tier map unchanged or valid JSON, never a panic.
func FuzzOpenCodePermission(f *testing.F) {
	f.Add(`{"edit":"deny","bash":"deny"}`, "---\npermission:\n  bash:\n    \"*\": deny\n    \"gh *\": allow\n---\nb\n")
	f.Add(`{"bash":"deny"}`, "---\npermission: [1, 2]\n---\n")
	f.Add(`deny`, "---\n&a [*a]\n---\n")
	f.Fuzz(func(t *testing.T, tierMap, def string) {
		got, err := OpenCodePermission(tierMap, []byte(def))
		if err != nil || got == tierMap {
			return
		}
		if !json.Valid([]byte(got)) {
			t.Fatalf("invalid JSON %q from %q, %q", got, tierMap, def)
		}
	})
}
