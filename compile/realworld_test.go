package compile

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// TestRealWorld compiles public agent and skill files the runtimes load
// (../shared/fixtures/from-project/agentdef/testdata/realworld, sources in
// its README), each in isolation: they
// compile, with exactly the expected warnings ("file:line:column field").
// With Strict they fail.
func TestRealWorld(t *testing.T) {
	tests := []struct {
		dir      string
		tier     policycue.Tier // of the agent, when the project has one
		warnings []string
	}{
		{"wshobson-teensy-expert", policycue.TierReadOnly, []string{
			"agents/teensy-expert.md:7:1 triggers",
		}},
		// Bare Bash: the compiler's own advice, not a leniency warning.
		{"wshobson-conductor-validator", policycue.TierFull, []string{
			"agents/conductor-validator.md:29:5 tools",
		}},
		{"agentgraph-pdf", "", []string{
			"skills/pdf/SKILL.md:2:1 id",
			"skills/pdf/SKILL.md:3:7 name",
			"skills/pdf/SKILL.md:5:1 version",
		}},
		{"rcore-security", "", []string{
			"skills/security/SKILL.md:2:7 name",
			"skills/security/SKILL.md:4:1 version",
		}},
		// OpenCode (corpus causes #2, #3, #4, #8, #9). The frontmatter name
		// (OpenCopywriter) names the agent, as in OpenCode;
		// unknown permission and tools keys (MCP tools, mcp_*) grant
		// nothing; a model provider without a catalog baseline
		// (github-copilot, opencode Zen) grants no model API; a file without
		// frontmatter is a prompt-only agent.
		{"oc-darrenhinde-copywriter", policycue.TierReadOnly, []string{
			".opencode/agent/copywriter.md:2:1 permission",
			".opencode/agent/copywriter.md:2:1 id",
			".opencode/agent/copywriter.md:5:1 category",
			".opencode/agent/copywriter.md:6:1 type",
			".opencode/agent/copywriter.md:7:1 version",
			".opencode/agent/copywriter.md:8:1 author",
			".opencode/agent/copywriter.md:13:1 tags",
			// The compiler's: no tools listed, only the runtime baseline.
			".opencode/agent/copywriter.md:2:1 tools",
		}},
		{"oc-devalexanderdaza-debug", policycue.TierFull, []string{
			".opencode/agent/debug.md:7:1 permission",
			".opencode/agent/debug.md:9:3 permission.write",
			".opencode/agent/debug.md:14:3 permission.memory",
			".opencode/agent/debug.md:16:3 permission.chrome_devtools",
			".opencode/agent/debug.md:19:3 permission.patch",
			".opencode/agent/debug.md:5:8 model",
			".opencode/agent/debug.md:7:1 tools",
			".opencode/agent/debug.md:11:3 tools",
		}},
		{"oc-lorenzorasmussen-build", policycue.TierFull, []string{
			".opencode/agent/build.md:6:1 tools",
			".opencode/agent/build.md:15:3 tools.mcp_*",
			".opencode/agent/build.md:16:1 permission",
			".opencode/agent/build.md:4:8 model",
			".opencode/agent/build.md:16:1 tools",
			".opencode/agent/build.md:18:3 tools",
		}},
		{"oc-openqode-debug", policycue.TierReadOnly, []string{
			".opencode/agent/debug.md:1:1 permission",
			".opencode/agent/debug.md:1:1 description",
			".opencode/agent/debug.md:1:1 tools",
		}},
		// Claude Code's quote-retry loads an unquoted ': ' in a description.
		{"fm-voltagent-gdpr-ccpa-compliance", policycue.TierNetwork, []string{
			"agents/gdpr-ccpa-compliance.md:3:143 description",
			"agents/gdpr-ccpa-compliance.md:4:26 tools",
		}},
		// A closing line of 56 dashes (Claude Code's FRONTMATTER_REGEX).
		{"fm-vijaythecoder-frontend-developer", policycue.TierFull, []string{
			"agents/frontend-developer.md:5:30 tools",
			"agents/frontend-developer.md:5:49 tools",
		}},
		// A display name (anthropics/claude-code's own plugin-dev skill):
		// named after its directory, as Claude Code names it.
		{"cc-plugin-dev-plugin-settings", "", []string{
			"skills/plugin-settings/SKILL.md:2:7 name",
			"skills/plugin-settings/SKILL.md:4:1 version",
		}},
		// List-valued metadata, which Claude Code ignores.
		{"fm-kdense-rowan", "", []string{
			"skills/rowan/SKILL.md:8:21 metadata.trigger-keywords",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			dir := realWorldDir(t, tc.dir)
			if tc.tier == "" {
				proj, err := agentdef.Load(os.DirFS(dir))
				if err != nil {
					t.Fatal(err)
				}
				checkWarnings(t, proj.Warnings, tc.warnings)
				return
			}
			out, err := CompileDir(context.Background(), dir, ProjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkWarnings(t, out.Warnings, tc.warnings)
			for _, c := range out.Agents {
				if c.Tier != tc.tier {
					t.Errorf("%s: tier %s, want %s", c.Agent.Name, c.Tier, tc.tier)
				}
			}
			if len(tc.warnings) > 0 {
				if _, err := CompileDir(context.Background(), dir, ProjectOptions{Strict: true}); err == nil {
					t.Errorf("Strict: compiles despite %d warnings", len(tc.warnings))
				}
			}
		})
	}
}

// checkWarnings compares the warnings' "position field" with want.
func checkWarnings(t *testing.T, ds agentdef.Diagnostics, want []string) {
	t.Helper()
	var got []string
	for _, d := range ds {
		if d.Severity != agentdef.SeverityWarning {
			t.Errorf("not a warning: %s", d)
		}
		got = append(got, d.Pos.String()+" "+d.Field)
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%v\nwant:\n%v\nall:\n%v", got, want, ds)
	}
}

// realWorldDir is the one-file project name of the public agents and skills
// the tests read in ../shared/fixtures (internal/fixture).
func realWorldDir(t testing.TB, name string) string {
	t.Helper()
	return fixture.Path(t, "from-project/agentdef/testdata/realworld/"+name)
}
