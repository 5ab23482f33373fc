package compile

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// TestBackendFlags: codex's network tier is --full-auto with network access
// on (openai/codex), pi's is its bash tool without edit or write (pi has no
// web tool; badlogic/pi-mono packages/coding-agent README).
func TestBackendFlags(t *testing.T) {
	cat, err := policycue.LoadCatalog(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	codex := cat.Backends["codex"].Flags[policycue.TierNetwork]
	if !slices.Equal(codex, []string{"--full-auto", "-c", "sandbox_workspace_write.network_access=true"}) {
		t.Errorf("codex network: %q", codex)
	}
	pi := cat.Backends["pi"].Flags
	tools := func(tier policycue.Tier) string { return strings.Join(pi[tier], " ") }
	if got := tools(policycue.TierReadOnly); strings.Contains(got, "bash") || strings.Contains(got, "edit") {
		t.Errorf("pi read-only: %s", got)
	}
	if got := tools(policycue.TierNetwork); !strings.Contains(got, "bash") || strings.Contains(got, "edit") || strings.Contains(got, "write") {
		t.Errorf("pi network: %s", got)
	}
	if got := tools(policycue.TierFull); !strings.Contains(got, "edit") || !strings.Contains(got, "write") {
		t.Errorf("pi full: %s", got)
	}
}

// TestGeminiAllowedToolsDeclaredOnly: Gemini CLI's network tier
// pre-approves web_fetch only for an agent that declares WebFetch; an
// agent that does not gets no --allowed-tools at all (issue 30 §3).
func TestGeminiAllowedToolsDeclaredOnly(t *testing.T) {
	tests := []struct {
		tools string
		want  []string
	}{
		{"Read, Bash(gh pr list:*)", []string{"--approval-mode", "plan"}},
		{"Read, WebFetch, Bash(gh pr list:*)", []string{"--approval-mode", "plan", "--allowed-tools", "web_fetch"}},
		{"Read, WebFetch(domain:example.com)", []string{"--approval-mode", "plan", "--allowed-tools", "web_fetch"}},
	}
	for _, tt := range tests {
		t.Run(tt.tools, func(t *testing.T) {
			dir := profileProject(t, tt.tools, "[]", nil)
			out, err := CompileDir(context.Background(), dir, ProjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Manifest.Agents["a"].RuntimeFlags["gemini"]; !slices.Equal(got, tt.want) {
				t.Errorf("gemini flags %q, want %q", got, tt.want)
			}
		})
	}
}
