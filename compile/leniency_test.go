package compile

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// TestUnknownKeys: an unknown top-level key the runtimes ignore or pass
// through is a warning naming the key at its line; a key close to a known
// one, or another dialect's field, stays an error with a hint.
func TestUnknownKeys(t *testing.T) {
	const skill = "---\nname: s\ndescription: d\n---\n"
	tests := []struct {
		name, file, fm string
		pos, field     string // the one diagnostic's position and field
		msg, hint      string
		err            bool
	}{
		{"claude category", "agents/a.md", "name: a\ndescription: d\ntools: Read\ncategory: quality-security\n",
			"agents/a.md:5:1", "category", `unknown field "category" is ignored`, "known fields", false},
		{"claude author list", "agents/a.md", "name: a\ndescription: d\ntools: Read\nauthor: [me]\n",
			"agents/a.md:5:1", "author", `unknown field "author" is ignored`, "", false},
		{"opencode extra key", ".opencode/agent/r.md", "description: d\npermission: {\"*\": deny, read: allow}\nversion: 2\n",
			".opencode/agent/r.md:4:1", "version", `unknown field "version" is ignored`, "", false},
		{"skill tags", "skills/s/SKILL.md", "name: s\ndescription: d\ntags: [a]\n",
			"skills/s/SKILL.md:4:1", "tags", `unknown field "tags" is ignored`, "under metadata", false},
		{"tools in a skill", "skills/s/SKILL.md", "name: s\ndescription: d\ntools: Read\n",
			"skills/s/SKILL.md:4:1", "tools", `unknown field "tools" is ignored`, "allowed-tools", false},
		{"tool for tools", "agents/a.md", "name: a\ndescription: d\ntool: Read\n",
			"agents/a.md:4:1", "tool", `unknown field "tool"`, `did you mean "tools"?`, true},
		{"disallowed-tools in an agent", "agents/a.md", "name: a\ndescription: d\ntools: Read\ndisallowed-tools: Bash\n",
			"agents/a.md:5:1", "disallowed-tools", `unknown field "disallowed-tools"`, `did you mean "disallowedTools"?`, true},
		{"allowed_tools in an agent", "agents/a.md", "name: a\ndescription: d\ntools: Read\nallowed_tools: Bash\n",
			"agents/a.md:5:1", "allowed_tools", `unknown field "allowed_tools"`, "lists its tools under tools:", true},
		{"allowed_tools in a skill", "skills/s/SKILL.md", "name: s\ndescription: d\nallowed_tools: Read\n",
			"skills/s/SKILL.md:4:1", "allowed_tools", `unknown field "allowed_tools"`, `did you mean "allowed-tools"?`, true},
		{"permissions for permission", ".opencode/agent/r.md", "description: d\npermissions: {\"*\": deny}\n",
			".opencode/agent/r.md:3:1", "permissions", `unknown field "permissions"`, `did you mean "permission"?`, true},
		{"opencode field in a claude agent", "agents/a.md", "name: a\ndescription: d\ntools: Read\ntemperature: 1\n",
			"agents/a.md:5:1", "temperature", `unknown field "temperature"`, "OpenCode field", true},
		{"invalid name in an opencode agent", ".opencode/agent/r.md", "name: Rev Bot\ndescription: d\npermission: allow\n",
			".opencode/agent/r.md:2:7", "name", `OpenCode names this agent "Rev Bot", not a valid fullsend agent name; fullsend names it "r"`, "name: r", false},
		{"unknown sandbox key", "agents/a.md", "name: a\ndescription: d\ntools: Read\nsandbox: {tiers: full}\n",
			"agents/a.md:5:11", "sandbox.tiers", `unknown field "tiers"`, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{tc.file: {Data: []byte("---\n" + tc.fm + "---\nbody\n")}}
			if !strings.HasPrefix(tc.file, "skills/") {
				fsys["skills/s/SKILL.md"] = &fstest.MapFile{Data: []byte(skill)}
			}
			proj, err := agentdef.Load(fsys)
			var ds agentdef.Diagnostics
			switch {
			case tc.err && !errors.As(err, &ds):
				t.Fatalf("want an error, got %v", err)
			case !tc.err && err != nil:
				t.Fatalf("want a warning, got %v", err)
			case !tc.err:
				for _, d := range proj.Warnings {
					if d.Field == tc.field {
						ds = append(ds, d)
					}
				}
			}
			if len(ds) != 1 {
				t.Fatalf("want one diagnostic on %s, got %v", tc.field, ds)
			}
			d := ds[0]
			if d.Pos.String() != tc.pos || d.Field != tc.field || !strings.Contains(d.Message, tc.msg) || !strings.Contains(d.Hint, tc.hint) {
				t.Errorf("got %s", d)
			}
		})
	}
}

// TestStrict: Options.Strict makes every warning an error.
func TestStrict(t *testing.T) {
	fsys := fstest.MapFS{"agents/a.md": {Data: []byte("---\nname: a\ndescription: d\ntools: Read\ncategory: x\n---\nbody\n")}}
	proj, err := agentdef.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Compile(context.Background(), proj, fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Warnings) == 0 {
		t.Fatal("no warning without Strict")
	}
	_, err = Compile(context.Background(), proj, fsys, Options{Strict: true})
	var ds agentdef.Diagnostics
	if !errors.Is(err, ErrCompile) || !errors.As(err, &ds) {
		t.Fatalf("Strict: want a compile error, got %v", err)
	}
	found := false
	for _, d := range ds {
		found = found || d.Field == "category" && d.Severity == agentdef.SeverityError && strings.Contains(d.Message, "strict")
	}
	if !found {
		t.Errorf("Strict: no error on category: %v", ds)
	}
}

// TestParserToolsInCatalog: every tool name the parser accepts is in the
// built-in catalog (Task is Agent's old name), so no accepted rule fails
// later with "not in the catalog".
func TestParserToolsInCatalog(t *testing.T) {
	cat, err := policycue.LoadCatalog(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range agentdef.KnownTools() {
		if name == "Task" {
			continue
		}
		if _, ok := cat.Tools[name]; !ok {
			t.Errorf("tool %s is accepted by the parser but not in catalog/tools.cue", name)
		}
	}
}

// TestLocalTools: Claude Code's local-only tools compile at the read-only
// tier with no egress.
func TestLocalTools(t *testing.T) {
	const tools = "BashOutput, KillShell, AskUserQuestion, SlashCommand, SendMessage, TeamCreate, TeamDelete, Read"
	fsys := fstest.MapFS{"agents/a.md": {Data: []byte("---\nname: a\ndescription: d\ntools: " + tools + "\n---\nbody\n")}}
	proj, err := agentdef.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Compile(context.Background(), proj, fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := out.Agents["a"]; c.Tier != policycue.TierReadOnly {
		t.Errorf("tier = %s, want read-only", c.Tier)
	}
}

// TestToleratedSpecViolations: what the runtimes load although a
// specification forbids it is a warning at its position; the file loads.
func TestToleratedSpecViolations(t *testing.T) {
	long := strings.Repeat("x", 1025)
	tests := []struct {
		name, file, fm  string
		pos, field, msg string
	}{
		{"unknown tool", "agents/a.md", "name: a\ndescription: d\ntools: Read, Reed\n",
			"agents/a.md:4:14", "tools[1]", `unknown tool "Reed" grants nothing`},
		{"unknown tool only", "agents/a.md", "name: a\ndescription: d\ntools: [Frobnicate]\n",
			"agents/a.md:4:9", "tools[0]", `unknown tool "Frobnicate" grants nothing`},
		{"unknown disallowed tool", "agents/a.md", "name: a\ndescription: d\ntools: Read\ndisallowedTools: Frob\n",
			"agents/a.md:5:18", "disallowedTools[0]", `unknown tool "Frob"`},
		{"unknown allowed-tool in a skill", "skills/s/SKILL.md", "name: s\ndescription: d\nallowed-tools: Read Frob\n",
			"skills/s/SKILL.md:4:21", "allowed-tools[1]", `unknown tool "Frob"`},
		{"non-kebab skill name", "skills/pdf/SKILL.md", "name: PDF Processing\ndescription: d\n",
			"skills/pdf/SKILL.md:2:7", "name", `skill name "PDF Processing" is not an Agent Skills name`},
		{"skill name of 65 characters", "skills/s/SKILL.md", "name: " + strings.Repeat("s", 65) + "\ndescription: d\n",
			"skills/s/SKILL.md:2:7", "name", "is not an Agent Skills name"},
		{"skill description over 1024", "skills/s/SKILL.md", "name: s\ndescription: " + long + "\n",
			"skills/s/SKILL.md:3:14", "description", "description is 1025 characters; the Agent Skills specification allows 1024"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			proj, err := agentdef.Load(fstest.MapFS{tc.file: {Data: []byte("---\n" + tc.fm + "---\nbody\n")}})
			if err != nil {
				t.Fatal(err)
			}
			var got agentdef.Diagnostics
			for _, d := range proj.Warnings {
				if strings.HasPrefix(d.Field, strings.SplitN(tc.field, "[", 2)[0]) && strings.Contains(d.Message, tc.msg) {
					got = append(got, d)
				}
			}
			if len(got) != 1 || got[0].Pos.String() != tc.pos || got[0].Field != tc.field {
				t.Errorf("want one warning at %s on %s containing %q, got %v (all: %v)", tc.pos, tc.field, tc.msg, got, proj.Warnings)
			}
		})
	}
}

// TestNoTools: tools: [] is an agent with no tools: it compiles to the
// runtime's baseline at the read-only tier; a blank tools string is still
// an error.
func TestNoTools(t *testing.T) {
	fsys := fstest.MapFS{"agents/a.md": {Data: []byte("---\nname: a\ndescription: d\ntools: []\n---\nbody\n")}}
	proj, err := agentdef.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if a := proj.Agents[0]; a.ToolsOmitted || len(a.Tools) != 0 {
		t.Fatalf("agent = %+v", a)
	}
	out, err := Compile(context.Background(), proj, fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := out.Agents["a"]; c.Tier != policycue.TierReadOnly {
		t.Errorf("tier = %s, want read-only", c.Tier)
	}
	for _, fm := range []string{"tools: \"\"\n", "tools: [\"\", \" \"]\n"} {
		if _, err := agentdef.Load(fstest.MapFS{"agents/a.md": {Data: []byte("---\nname: a\ndescription: d\n" + fm + "---\n")}}); err == nil || !strings.Contains(err.Error(), "tools is empty") {
			t.Errorf("%q: want tools is empty, got %v", fm, err)
		}
	}
}

// TestForeignToolHint: another runtime's tool name is a warning (it grants
// nothing) whose hint names the Claude Code tool to write.
func TestForeignToolHint(t *testing.T) {
	if h := hintOf(func() *agentdef.RuleError {
		var re *agentdef.RuleError
		_, err := agentdef.ParseToolRule("run_shell_command", agentdef.Pos{File: "a.md", Line: 1, Column: 1})
		errors.As(err, &re)
		return re
	}()); !strings.Contains(h, "run_shell_command is Gemini CLI's name") {
		t.Errorf("hint %q does not name Gemini CLI", h)
	}
	for name, want := range map[string]string{"run_shell_command": "Bash", "read_file": "Read", "webfetch": "WebFetch", "apply_patch": "Edit", "Grep_Search": "Grep"} {
		_, err := agentdef.ParseToolRule(name, agentdef.Pos{File: "a.md", Line: 3, Column: 8})
		var re *agentdef.RuleError
		if !errors.As(err, &re) || !re.UnknownTool || !strings.Contains(re.Hint, `did you mean "`+want+`"`) {
			t.Errorf("%s: got %v (hint %q), want an unknown-tool error suggesting %s", name, err, hintOf(re), want)
		}
	}
}

func hintOf(re *agentdef.RuleError) string {
	if re == nil {
		return ""
	}
	return re.Hint
}

// TestClaudeToolsReference: every tool of Claude Code's tools reference
// (code.claude.com/docs/en/tools-reference) parses, and the catalog says
// what it grants.
func TestClaudeToolsReference(t *testing.T) {
	cat, err := policycue.LoadCatalog(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Agent": "orchestration", "Artifact": "network", "AskUserQuestion": "orchestration", "Bash": "exec",
		"CronCreate": "orchestration", "CronDelete": "orchestration", "CronList": "orchestration",
		"Edit": "fs-write", "EnterPlanMode": "orchestration", "EnterWorktree": "fs-write",
		"ExitPlanMode": "orchestration", "ExitWorktree": "fs-write", "Glob": "fs-read", "Grep": "fs-read",
		"ListMcpResourcesTool": "mcp", "LSP": "fs-read", "Monitor": "exec", "NotebookEdit": "fs-write",
		"PowerShell": "exec", "Read": "fs-read", "ReadMcpResourceTool": "mcp", "SendMessage": "orchestration",
		"Skill": "orchestration", "TaskCreate": "orchestration", "TaskGet": "orchestration",
		"TaskList": "orchestration", "TaskOutput": "orchestration", "TaskStop": "orchestration",
		"TaskUpdate": "orchestration", "TeamCreate": "orchestration", "TeamDelete": "orchestration",
		"TodoWrite": "orchestration", "ToolSearch": "orchestration", "WebFetch": "network",
		"WebSearch": "vendor-network", "Write": "fs-write",
	}
	for name, class := range want {
		if _, err := agentdef.ParseToolRule(name, agentdef.Pos{File: "a.md", Line: 1, Column: 1}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if got := cat.Tools[name].Class; got != class {
			t.Errorf("catalog %s: class %q, want %q", name, got, class)
		}
	}
}
