package compile

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

// TestDanglingReferences: a name an agent refers to that the project does
// not hold is a warning saying what the agent gets, and never reaches the
// spawn list (the spawn service refuses a manifest that spawns an agent it
// does not have); a runtime's built-in subagent is no diagnostic at all.
// The shapes follow the corpus: fullsend-ai/agents' prioritize.md preloads
// customer-research, which the repository does not hold;
// shahboura/agents-opencode's codebase.md allows task "general" and
// "explore", OpenCode's built-ins.
func TestDanglingReferences(t *testing.T) {
	const worker = "---\nname: worker\ndescription: d\ntools: Read\n---\n"
	tests := []struct {
		name, file, fm string
		warn           string // "file:line:col field message", or "" for none
		spawns         string
	}{
		{"missing skill", "agents/lead.md", "name: lead\ndescription: d\ntools: Read\nskills: [customer-research]\n",
			`agents/lead.md:5:10 skills[0] skill "customer-research" does not exist: the agent gets none of its tools or endpoints`, ""},
		{"missing subagent", "agents/lead.md", "name: lead\ndescription: d\ntools: Read, Agent(worker, ghost)\n",
			`agents/lead.md:4:14 tools Agent(worker, ghost) names agent "ghost", which does not exist: no sandbox may be spawned for it`, "worker"},
		{"missing skill tool", "agents/lead.md", "name: lead\ndescription: d\ntools: Read, Skill(nowhere)\n",
			`agents/lead.md:4:14 tools Skill(nowhere) names skill "nowhere", which does not exist: it grants nothing`, ""},
		{"claude built-in", "agents/lead.md", "name: lead\ndescription: d\ntools: Read, Agent(Explore, general-purpose, worker)\n",
			"", "worker"},
		{"opencode built-ins", ".opencode/agent/lead.md", "description: d\npermission:\n  \"*\": deny\n  read: allow\n  task: {\"*\": deny, general: allow, explore: allow, worker: allow}\n" +
			// worker runs Claude Code: its runtime's model channel and
			// files are its own, beyond this OpenCode lead's.
			"sandbox:\n  spawn-widening:\n    - {agent: worker, hosts: [api.anthropic.com], paths: [/sandbox/.claude, /sandbox/.claude.json]}\n",
			"", "worker"},
		{"another runtime's built-in", "agents/lead.md", "name: lead\ndescription: d\ntools: Read, Agent(general)\n",
			`agents/lead.md:4:14 tools Agent(general) names agent "general", which does not exist: no sandbox may be spawned for it`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeMapFS(t, fstest.MapFS{
				tc.file:            {Data: []byte("---\n" + tc.fm + "---\nbody\n")},
				"agents/worker.md": {Data: []byte(worker)},
			})
			out, err := CompileDir(context.Background(), dir, ProjectOptions{})
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			var got []string
			for _, w := range out.Warnings {
				if w.Pos.File == tc.file && (strings.Contains(w.Message, "does not exist") || strings.Contains(w.Message, "Agent(")) {
					got = append(got, w.Pos.String()+" "+w.Field+" "+w.Message)
				}
			}
			if want := tc.warn; (want == "" && len(got) > 0) || (want != "" && (len(got) != 1 || got[0] != want)) {
				t.Errorf("warnings = %q, want %q", got, want)
			}
			lead := out.Agents["lead"]
			if lead == nil {
				t.Fatalf("lead not compiled: %v", out.AgentNames())
			}
			if s := strings.Join(lead.Spawns, ","); s != tc.spawns {
				t.Errorf("spawns = %q, want %q", s, tc.spawns)
			}
		})
	}
}

// TestAgentNameBeyondClaudeSyntax: VoltAgent/awesome-claude-code-subagents'
// dotnet-framework-4.8-expert.md names itself with a dot, which Claude Code
// loads: it compiles, with a warning, under that name, and another agent
// may spawn it; a name with a blank stays an error (it would be a file name
// and a command argument).
func TestAgentNameBeyondClaudeSyntax(t *testing.T) {
	const name = "dotnet-framework-4.8-expert"
	dir := writeMapFS(t, fstest.MapFS{
		"agents/" + name + ".md": {Data: []byte("---\nname: " + name + "\ndescription: d\ntools: Read, Grep, Glob\n---\nb\n")},
		"agents/lead.md":         {Data: []byte("---\nname: lead\ndescription: d\ntools: Read, Agent(" + name + ")\n---\nb\n")},
	})
	out, err := CompileDir(context.Background(), dir, ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Agents[name] == nil || strings.Join(out.Agents["lead"].Spawns, ",") != name {
		t.Fatalf("agents %v, lead spawns %v", out.AgentNames(), out.Agents["lead"].Spawns)
	}
	if w := warningsText(out.Warnings); !strings.Contains(w, `agent name "`+name+`" is not Claude Code's documented syntax`) {
		t.Errorf("warnings = %s", w)
	}
	if _, err := agentdef.Load(fstest.MapFS{"agents/a.md": {Data: []byte("---\nname: Python DevOps/CI-CD Expert\ndescription: d\ntools: Read\n---\n")}}); err == nil ||
		!strings.Contains(err.Error(), `invalid agent name "Python DevOps/CI-CD Expert"`) {
		t.Errorf("a name with a blank and a slash: %v", err)
	}
}

// warningsText renders warnings one a line as file:line:col field: message.
func warningsText(ds agentdef.Diagnostics) string {
	var out []string
	for _, w := range ds {
		out = append(out, w.Pos.String()+" "+w.Field+": "+w.Message)
	}
	return strings.Join(out, "\n")
}
