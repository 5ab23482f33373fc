package agentdef

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseOpenCodeFile runs the OpenCode agent decoder alone on one file, as
// Load would for a file under .opencode/agent (no reference checks).
func parseOpenCodeFile(file, content string) (*Agent, Diagnostics) {
	d := newDecoder(file)
	doc := parseOpenCodeDocument(d, []byte(content))
	if doc.root == nil {
		return nil, d.diags
	}
	a := parseOpenCodeAgent(d, doc)
	return a, d.diags
}

// diagSummary renders diagnostics as "severity field: message (hint)" lines.
func diagSummary(ds Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

// wantDiag checks that ds holds a diagnostic of the severity on field whose
// message (and hint) contain msg (and hint), and that no error is there
// unless wantErr.
func wantDiag(t *testing.T, ds Diagnostics, sev Severity, field, msg, hint string) {
	t.Helper()
	for _, d := range ds {
		if d.Severity == sev && d.Field == field && strings.Contains(d.Message, msg) && strings.Contains(d.Hint, hint) {
			return
		}
	}
	t.Errorf("want a %s on %s containing %q (hint %q), got:\n%s", sev, field, msg, hint, diagSummary(ds))
}

// noErrors fails when ds holds an error.
func noErrors(t *testing.T, ds Diagnostics) {
	t.Helper()
	for _, d := range ds {
		if d.Severity == SeverityError {
			t.Errorf("unexpected error: %s", d)
		}
	}
}

// TestOpenCodeAgentName: OpenCode keys an agent by its frontmatter name
// when there is one (anomalyco/opencode packages/opencode/src/config/agent.ts:
// {name: <path name>, ...md.data}); fullsend does too when the name is a
// valid agent name, and otherwise keeps the file's name with a warning so
// the policy file name stays safe.
func TestOpenCodeAgentName(t *testing.T) {
	const perm = "description: d\npermission: {\"*\": deny, read: allow}\n"
	tests := []struct {
		name, file, fm string
		want           string   // the agent's name
		sev            Severity // "" = no diagnostic on name
		msg, hint      string
	}{
		{"file name", ".opencode/agent/rev.md", perm, "rev", "", "", ""},
		{"frontmatter name wins", ".opencode/agent/rev.md", "name: reviewer\n" + perm, "reviewer", "", "", ""},
		{"same name as the file", ".opencode/agent/debug.md", "name: debug\n" + perm, "debug", "", "", ""},
		{"invalid name falls back to the file's", ".opencode/agent/copywriter.md", "name: Open Copywriter\n" + perm, "copywriter", SeverityWarning,
			`OpenCode names this agent "Open Copywriter", not a valid fullsend agent name; fullsend names it "copywriter" after its file, and permission.task rules naming "Open Copywriter" grant nothing`,
			"name: copywriter"},
		{"blank name falls back to the file's", ".opencode/agent/rev.md", "name: \"\"\n" + perm, "rev", SeverityWarning, `OpenCode names this agent ""`, ""},
		{"invalid name and file name", ".opencode/agent/R ev.md", "name: Open Rev\n" + perm, "R ev", SeverityError,
			`invalid agent name "Open Rev", and the file's name "R ev" is not valid either`, "letters, digits"},
		{"name beyond Claude's syntax", ".opencode/agent/anti_amnesia_v2.md", perm, "anti_amnesia_v2", "", "", ""},
		{"invalid file name without a name", ".opencode/agent/My Agent.md", perm, "My Agent", SeverityError,
			`invalid agent name "My Agent" (taken from the file's name)`, "set name:"},
		{"valid name rescues an invalid file name", ".opencode/agent/My Agent.md", "name: my-agent\n" + perm, "my-agent", "", "", ""},
		{"name not a string", ".opencode/agent/rev.md", "name: [a]\n" + perm, "rev", SeverityError, "want a string, got a list", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ds := parseOpenCodeFile(tc.file, "---\n"+tc.fm+"---\nbody\n")
			if a == nil {
				t.Fatalf("no agent: %s", diagSummary(ds))
			}
			if a.Name != tc.want {
				t.Errorf("name = %q, want %q", a.Name, tc.want)
			}
			if tc.sev == "" {
				noErrors(t, ds)
				for _, d := range ds {
					if d.Field == "name" {
						t.Errorf("unexpected diagnostic: %s", d)
					}
				}
				return
			}
			wantDiag(t, ds, tc.sev, "name", tc.msg, tc.hint)
			if strings.Contains(diagSummary(ds), "names an agent after its file") {
				t.Errorf("the old, wrong hint is back: %s", diagSummary(ds))
			}
		})
	}
}

// TestOpenCodeNameKeysReferences: other agents reach an OpenCode agent by
// its frontmatter name, which is also its policy's name.
func TestOpenCodeNameKeysReferences(t *testing.T) {
	proj := loadOne(t, map[string]string{
		".opencode/agent/lead.md": "---\ndescription: d\npermission:\n  \"*\": deny\n  task: {\"*\": deny, reviewer: allow}\n---\n",
		".opencode/agent/rev.md":  "---\nname: reviewer\ndescription: d\npermission: {\"*\": deny, read: allow}\n---\n",
	})
	var names []string
	for _, a := range proj.Agents {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, " "); got != "lead reviewer" {
		t.Errorf("agents = %q", got)
	}
	if got := raws(proj.Agents[0].Tools); got != "Agent(reviewer)" {
		t.Errorf("lead tools = %q", got)
	}
}

// TestOpenCodeUnknownKeys: OpenCode accepts any permission or tools key
// (packages/core/src/v1/config/permission.ts, agent.ts); one fullsend does
// not know grants nothing in the sandbox (a warning), a malformed value is
// still an error, and a wildcard key matching known permissions denies
// them, or is an error when it would allow them.
func TestOpenCodeUnknownKeys(t *testing.T) {
	tests := []struct {
		name, fm      string
		tools, denied string // raws; denied "" = not checked
		sev           Severity
		field, msg    string
		hint          string
	}{
		{name: "unknown permission allowed",
			fm:    "permission:\n  \"*\": deny\n  read: allow\n  memory: allow",
			tools: "Read", sev: SeverityWarning, field: "permission.memory",
			msg: `unknown permission "memory" grants nothing in the sandbox: fullsend derives access only from the tools it knows`, hint: "MCP tools are not compiled"},
		{name: "unknown permission with a pattern map",
			fm:    "permission:\n  \"*\": deny\n  read: allow\n  chrome_devtools: {\"*\": allow, \"eval*\": deny}",
			tools: "Read", sev: SeverityWarning, field: "permission.chrome_devtools", msg: `unknown permission "chrome_devtools" grants nothing`},
		{name: "typo gets a suggestion",
			fm:    "permission:\n  \"*\": deny\n  read: allow\n  reed: allow",
			tools: "Read", sev: SeverityWarning, field: "permission.reed", msg: "grants nothing", hint: `did you mean "read"?`},
		{name: "write in permission points at edit",
			fm:    "permission:\n  \"*\": deny\n  read: allow\n  write: allow",
			tools: "Read", sev: SeverityWarning, field: "permission.write", msg: "grants nothing", hint: "asks for the edit permission"},
		{name: "unknown permission with a bad action",
			fm:  "permission:\n  \"*\": deny\n  read: allow\n  memory: always",
			sev: SeverityError, field: "permission.memory", msg: `invalid value "always"`},
		{name: "unknown permission with a list",
			fm:  "permission:\n  \"*\": deny\n  read: allow\n  memory: [allow]",
			sev: SeverityError, field: "permission.memory", msg: "want a mapping"},
		{name: "unknown permission with a bad pattern action",
			fm:  "permission:\n  \"*\": deny\n  read: allow\n  memory: {\"*\": yes}",
			sev: SeverityError, field: `permission.memory["*"]`, msg: `invalid value "yes"`},
		{name: "wildcard key denying known permissions",
			fm:    "permission:\n  \"*\": deny\n  read: allow\n  webfetch: allow\n  websearch: allow\n  \"web*\": deny",
			tools: "Read", denied: "Agent | Bash | Edit | Glob | Grep | LS | LSP | Skill | TodoWrite | WebFetch | WebSearch"},
		{name: "wildcard key allowing known permissions",
			fm:  "permission:\n  \"*\": deny\n  read: allow\n  \"web*\": allow",
			sev: SeverityError, field: "permission.web*", msg: `wildcard key "web*" allows the permissions webfetch, websearch`, hint: "name each permission"},
		{name: "wildcard key matching only permissions without a tool",
			fm:    "permission:\n  \"*\": deny\n  read: allow\n  \"*_*\": allow",
			tools: "Read", sev: SeverityWarning, field: "permission.*_*", msg: `unknown permission "*_*" grants nothing`},
		{name: "mcp wildcard in the tools map",
			fm:    "tools:\n  read: true\n  mcp_*: true\npermission:\n  \"*\": deny\n  read: allow",
			tools: "Read", sev: SeverityWarning, field: "tools.mcp_*", msg: `unknown permission "mcp_*" grants nothing in the sandbox`},
		{name: "unknown tool switched on",
			fm:    "tools:\n  github_create_issue: true\npermission:\n  \"*\": deny\n  read: allow",
			tools: "Read", sev: SeverityWarning, field: "tools.github_create_issue", msg: "grants nothing"},
		{name: "wildcard tool key allowing known tools",
			fm:  "tools:\n  \"web*\": true\npermission:\n  \"*\": deny\n  read: allow",
			sev: SeverityError, field: "tools.web*", msg: "allows the permissions webfetch, websearch"},
		{name: "star in the tools map is the default",
			fm:    "tools:\n  \"*\": false\n  read: true",
			tools: "Read"},
		{name: "tool switch not a boolean",
			fm:  "tools:\n  mcp_*: yes\npermission:\n  \"*\": deny\n  read: allow",
			sev: SeverityError, field: "tools.mcp_*", msg: "want true or false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ds := parseOpenCodeFile(".opencode/agent/a.md", "---\ndescription: d\n"+tc.fm+"\n---\n")
			if tc.sev != SeverityError {
				noErrors(t, ds)
				if got := raws(a.Tools); got != tc.tools {
					t.Errorf("tools = %q, want %q", got, tc.tools)
				}
				if tc.denied != "" {
					if got := raws(a.Disallowed); got != tc.denied {
						t.Errorf("denied = %q, want %q", got, tc.denied)
					}
				}
				if a.ToolsOmitted {
					t.Errorf("tools omitted: %s", diagSummary(ds))
				}
			}
			if tc.sev != "" {
				wantDiag(t, ds, tc.sev, tc.field, tc.msg, tc.hint)
			}
		})
	}
}

// TestOpenCodeDescriptionOptional: OpenCode's schema makes description
// optional (packages/core/src/v1/config/agent.ts), so a missing or blank one
// is a warning; a non-string one fails OpenCode's schema too.
func TestOpenCodeDescriptionOptional(t *testing.T) {
	const perm = "permission: {\"*\": deny, read: allow}\n"
	for _, tc := range []struct {
		name, fm string
		sev      Severity
		msg      string
	}{
		{"missing", perm, SeverityWarning, "no description: OpenCode loads the agent"},
		{"blank", "description: \"  \"\n" + perm, SeverityWarning, "blank description"},
		{"null", "description:\n" + perm, SeverityError, "want a string"},
		{"number", "description: 7\n" + perm, SeverityError, "want a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := parseOpenCodeFile(".opencode/agent/a.md", "---\n"+tc.fm+"---\n")
			if tc.sev == SeverityWarning {
				noErrors(t, ds)
			}
			wantDiag(t, ds, tc.sev, "description", tc.msg, "")
		})
	}
}

// TestOpenCodeNoFrontmatter: OpenCode loads a file with no frontmatter, or
// an empty one, as a prompt-only agent (gray-matter gives empty data:
// packages/opencode/src/config/markdown.ts; config/agent.ts adds the path
// name and the prompt). parseOpenCodeDocument gives such a file an empty
// root, and the agent compiles with warnings and no tools.
func TestOpenCodeNoFrontmatter(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"no frontmatter", "# Debug Agent\n\nYou are a debugging expert.\n"},
		{"no frontmatter, CRLF and BOM", "\ufeff# Debug Agent\r\n\r\nYou are a debugging expert.\r\n"},
		{"empty file", ""},
		{"empty frontmatter", "---\n---\n# Debug Agent\n"},
		{"blank frontmatter", "---\n\n  \n---\n# Debug Agent\n"},
		{"comments only", "---\n# just a comment\n---\n# Debug Agent\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, ds := parseOpenCodeFile(".opencode/agent/debug.md", tc.content)
			if a == nil {
				t.Fatalf("no agent: %s", diagSummary(ds))
			}
			noErrors(t, ds)
			if a.Name != "debug" || a.Description != "" || len(a.Tools) != 0 || !a.ToolsOmitted {
				t.Errorf("agent = %+v", a)
			}
			wantDiag(t, ds, SeverityWarning, "description", "no description", "")
			wantDiag(t, ds, SeverityWarning, "permission", `no "*" permission rule`, "grants nothing")
			for _, d := range ds {
				if d.Pos.Line < 1 || d.Pos.Column < 1 {
					t.Errorf("bad position: %s", d)
				}
			}
		})
	}
	// Anything else is parsed as before: an unterminated frontmatter is
	// still an error, and a non-empty one is read.
	if _, ds := parseOpenCodeFile(".opencode/agent/debug.md", "---\ndescription: d\n"); !strings.Contains(diagSummary(ds), "unterminated frontmatter") {
		t.Errorf("unterminated: %s", diagSummary(ds))
	}
	if a, ds := parseOpenCodeFile(".opencode/agent/debug.md", "---\ndescription: d\npermission: allow\n---\n"); a == nil || a.Description != "d" {
		t.Errorf("regular file: %+v %s", a, diagSummary(ds))
	}
}

// TestOpenCodeBuiltinTaskTargets: permission.task patterns naming OpenCode's
// built-in agents (general and explore, subagents; build and plan, primary:
// packages/opencode/src/agent/agent.ts) decode to Agent(<name>) rules like
// any other, for the loader's reference check to recognize.
func TestOpenCodeBuiltinTaskTargets(t *testing.T) {
	a, ds := parseOpenCodeFile(".opencode/agent/codebase.md",
		"---\ndescription: d\npermission:\n  \"*\": deny\n  read: allow\n  task: {\"*\": deny, general: allow, explore: allow, build: deny}\n---\n")
	noErrors(t, ds)
	if got := raws(a.Tools); got != "Read | Agent(general) | Agent(explore)" {
		t.Errorf("tools = %q", got)
	}
	if got := raws(a.Disallowed); !strings.Contains(got, "Agent(build)") {
		t.Errorf("denied = %q", got)
	}
}

// TestOpenCodeRealWorldNoFrontmatter decodes the public prompt-only agent
// of the realworld fixture oc-openqode-debug (corpus cause #9).
func TestOpenCodeRealWorldNoFrontmatter(t *testing.T) {
	const file = ".opencode/agent/debug.md"
	data, err := os.ReadFile(filepath.Join(realWorldDir(t, "oc-openqode-debug"), file))
	if err != nil {
		t.Fatal(err)
	}
	a, ds := parseOpenCodeFile(file, string(data))
	if a == nil {
		t.Fatalf("no agent: %s", diagSummary(ds))
	}
	noErrors(t, ds)
	if a.Name != "debug" || len(a.Tools) != 0 || !a.ToolsOmitted {
		t.Errorf("agent = %+v", a)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.Pos.String()+" "+d.Field)
	}
	if s := strings.Join(got, ", "); s != file+":1:1 description, "+file+":1:1 permission" {
		t.Errorf("warnings = %s", s)
	}
}
