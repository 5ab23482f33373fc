package runner

import (
	"maps"
	"slices"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// TestRuntimeEnv: the tier's runtime_env as sorted pairs, the manifest's
// map left alone; OpenCode also gets the runner's own settings, and its
// permission map carries the agent's own bash patterns.
func TestRuntimeEnv(t *testing.T) {
	def := []byte("---\ndescription: d\npermission:\n  bash:\n    \"*\": deny\n    \"gh pr view *\": allow\n---\nbody\n")
	for _, tc := range []struct {
		name    string
		runtime string
		env     map[string]string
		want    []string
	}{
		{name: "claude", runtime: RuntimeClaude, env: map[string]string{"B": "2", "A": "1"}, want: []string{"A=1", "B=2"}},
		{name: "claude without runtime_env", runtime: RuntimeClaude, want: []string{}},
		{name: "opencode", runtime: RuntimeOpenCode, env: map[string]string{"OPENCODE_PERMISSION": `{"edit":"deny","bash":"deny"}`},
			want: []string{"OPENCODE_DISABLE_CLAUDE_CODE=1", "OPENCODE_DISABLE_PROJECT_CONFIG=1",
				`OPENCODE_PERMISSION={"edit":"deny","bash":{"*":"deny","gh pr view *":"allow"}}`}},
		{name: "opencode without a permission map", runtime: RuntimeOpenCode,
			want: []string{"OPENCODE_DISABLE_CLAUDE_CODE=1", "OPENCODE_DISABLE_PROJECT_CONFIG=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := maps.Clone(tc.env)
			x := &run{agent: &Agent{Name: "a", Files: map[string][]byte{"agents/a.md": def},
				Entry: bundle.ManifestAgent{Runtime: tc.runtime, RuntimeEnv: map[string]map[string]string{tc.runtime: tc.env}}}}
			if got := x.runtimeEnv(); !slices.Equal(got, tc.want) {
				t.Errorf("runtimeEnv() = %q, want %q", got, tc.want)
			}
			if !maps.Equal(tc.env, before) {
				t.Errorf("the manifest's runtime_env changed: %v, was %v", tc.env, before)
			}
		})
	}
}
