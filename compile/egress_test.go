package compile

import (
	"context"
	"strings"
	"testing"
)

// TestEgressWarnings: a network client or an MCP tool that the policy gives
// no way out gets a warning at its rule naming what to declare; declared
// ones get none. Files: testdata/egress (see its README for the shapes).
func TestEgressWarnings(t *testing.T) {
	out, err := CompileDir(context.Background(), "testdata/egress", ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, d := range out.Warnings {
		if d.Field == "tools" && (strings.Contains(d.Message, "reaches nothing") || strings.Contains(d.Message, "MCP server")) {
			got[d.Pos.File] = append(got[d.Pos.File], d.Message+" | "+d.Hint)
		}
	}
	for _, tc := range []struct {
		file string
		want []string // substrings of one warning each; nil: no warning
	}{
		{"agents/curl-only.md", []string{"Bash(curl *) allows curl, but no host is declared | declare each host curl needs in sandbox.endpoints"}},
		{"agents/wget-declared.md", nil},
		{"agents/mcp-undeclared.md", []string{`uses MCP server "github", which the agent does not declare | add github to mcpServers`}},
		// An inline remote server compiles to its own MCP endpoint (mcp.go).
		{"agents/mcp-inline.md", nil},
		{"agents/mcp-declared.md", nil},
	} {
		ws := got[tc.file]
		if len(ws) != len(tc.want) {
			t.Errorf("%s: %d warnings, want %d: %q", tc.file, len(ws), len(tc.want), ws)
			continue
		}
		for i, w := range tc.want {
			for _, part := range strings.Split(w, " | ") {
				if !strings.Contains(ws[i], part) {
					t.Errorf("%s: warning %q, want it to contain %q", tc.file, ws[i], part)
				}
			}
		}
	}
	// jq is no network client: no warning for it.
	for _, w := range got["agents/curl-only.md"] {
		if strings.Contains(w, "allows jq") {
			t.Errorf("warning for jq: %s", w)
		}
	}
}
