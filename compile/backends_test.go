package compile

import (
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
