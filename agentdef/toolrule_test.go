package agentdef

import (
	"errors"
	"strings"
	"testing"
)

func TestParseToolRule(t *testing.T) {
	at := Pos{File: "agents/a.md", Line: 3, Column: 8}
	tests := []struct {
		raw   string
		check func(t *testing.T, r ToolRule)
	}{
		{"Bash", func(t *testing.T, r ToolRule) {
			if r.Tool != "Bash" || r.HasSpecifier || !r.AnyCommand() {
				t.Errorf("%+v", r)
			}
		}},
		{"Bash(*)", func(t *testing.T, r ToolRule) {
			if !r.HasSpecifier || !r.AnyCommand() {
				t.Errorf("%+v", r)
			}
		}},
		{"Bash(gh api:*)", func(t *testing.T, r ToolRule) {
			if len(r.Commands) != 1 || r.Commands[0] != (CommandPattern{Command: "gh", Args: "api *"}) {
				t.Errorf("%+v", r.Commands)
			}
		}},
		{"Bash(gh api *)", func(t *testing.T, r ToolRule) {
			if r.Commands[0] != (CommandPattern{Command: "gh", Args: "api *"}) {
				t.Errorf("%+v", r.Commands)
			}
		}},
		{"Bash(gh:*)", func(t *testing.T, r ToolRule) {
			if r.Commands[0] != (CommandPattern{Command: "gh", Args: "*"}) {
				t.Errorf("%+v", r.Commands)
			}
		}},
		{"Bash(gh,curl,jq)", func(t *testing.T, r ToolRule) {
			if len(r.Commands) != 3 || r.Commands[1].Command != "curl" || r.Commands[1].Args != "" || r.AnyCommand() {
				t.Errorf("%+v", r.Commands)
			}
		}},
		{"Bash(npx *)", func(t *testing.T, r ToolRule) {
			if !r.Commands[0].Wrapper || r.Commands[0].Command != "npx" {
				t.Errorf("npx must be recorded as a wrapper: %+v", r.Commands)
			}
		}},
		{"Bash(find . -name go.mod)", func(t *testing.T, r ToolRule) {
			if r.Commands[0].Wrapper {
				t.Errorf("literal find arguments are not a wrapper: %+v", r.Commands)
			}
		}},
		{"Bash(grep *)", func(t *testing.T, r ToolRule) {
			if r.Commands[0].Wrapper || r.Commands[0].String() != "grep *" {
				t.Errorf("%+v", r.Commands)
			}
		}},
		{"WebFetch(domain:example.com)", func(t *testing.T, r ToolRule) {
			if r.Domain != "example.com" {
				t.Errorf("%+v", r)
			}
		}},
		{"WebFetch(domain:*.example.com)", func(t *testing.T, r ToolRule) {
			if r.Domain != "*.example.com" {
				t.Errorf("%+v", r)
			}
		}},
		{"WebFetch", func(t *testing.T, r ToolRule) {
			if r.Domain != "" || r.HasSpecifier {
				t.Errorf("%+v", r)
			}
		}},
		{"Read(//abs/**)", func(t *testing.T, r ToolRule) {
			if r.Path != "//abs/**" {
				t.Errorf("%+v", r)
			}
		}},
		{"Read(~/p)", func(t *testing.T, r ToolRule) { _ = r }},
		{"Read(/p)", func(t *testing.T, r ToolRule) { _ = r }},
		{"Edit(src/**/*.go)", func(t *testing.T, r ToolRule) {
			if r.Tool != "Edit" || r.Path != "src/**/*.go" {
				t.Errorf("%+v", r)
			}
		}},
		{"Agent(a, b)", func(t *testing.T, r ToolRule) {
			if r.Tool != "Agent" || strings.Join(r.Agents, ",") != "a,b" {
				t.Errorf("%+v", r)
			}
		}},
		{"Task(a)", func(t *testing.T, r ToolRule) {
			if r.Tool != "Agent" || r.Raw != "Task(a)" || r.Agents[0] != "a" {
				t.Errorf("Task must normalize to Agent: %+v", r)
			}
		}},
		{"Skill", func(t *testing.T, r ToolRule) {
			if r.Tool != "Skill" || r.SkillName != "" {
				t.Errorf("%+v", r)
			}
		}},
		{"Skill(issue-labels)", func(t *testing.T, r ToolRule) {
			if r.SkillName != "issue-labels" {
				t.Errorf("%+v", r)
			}
		}},
		{"mcp__github__get_issue", func(t *testing.T, r ToolRule) {
			if r.Tool != "mcp" || r.MCPServer != "github" || r.MCPTool != "get_issue" {
				t.Errorf("%+v", r)
			}
		}},
		{"mcp__github", func(t *testing.T, r ToolRule) {
			if r.MCPServer != "github" || r.MCPTool != "" {
				t.Errorf("%+v", r)
			}
		}},
		{"WebSearch", func(t *testing.T, r ToolRule) {
			if r.Tool != "WebSearch" {
				t.Errorf("%+v", r)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			r, err := ParseToolRule(tc.raw, at)
			if err != nil {
				t.Fatalf("ParseToolRule(%q): %v", tc.raw, err)
			}
			if r.Raw != tc.raw || r.Pos != at {
				t.Errorf("Raw/Pos = %q %v", r.Raw, r.Pos)
			}
			tc.check(t, r)
		})
	}
}

func TestParseToolRuleErrors(t *testing.T) {
	at := Pos{File: "agents/a.md", Line: 3, Column: 8}
	tests := []struct {
		raw, msg, hint string
		col            int
	}{
		{"Bash(gh", "unbalanced parentheses", "close", 12},
		{"Bash)", "unbalanced parentheses", "open", 12},
		{"Bash()", "empty specifier", "without parentheses", 13},
		{"Bash(  )", "empty specifier", "", 13},
		{"Bash(/usr/bin/gh)", "is a path", "name the program", 13},
		{"Bash(g*)", "is a glob", "globs are allowed in the arguments", 13},
		{"Bash(FOO=1 gh)", "environment assignment", "", 13},
		{"Bash(gh && curl x)", `shell operator "&&"`, "one rule per command", 16},
		{"Bash(gh:* api)", "':*' in the middle", "", 15},
		{"Bash(gh,,jq)", "empty command", "single commas", 16},
		{"Bash(gh,*)", "'*' inside a command list", "", 16},
		{"Bassh", `unknown tool "Bassh"`, `did you mean "Bash"?`, 8},
		{"bash(gh)", `unknown tool "bash"`, `did you mean "Bash"?`, 8},
		{"Frobnicate", `unknown tool "Frobnicate"`, "known tools: Agent,", 8},
		{"WebFetch(example.com)", "must start with domain:", "", 17},
		{"WebFetch(domain:Example.com)", `invalid domain "Example.com"`, "lowercase: example.com", 24},
		{"WebFetch(domain:*)", `invalid domain "*"`, "", 24},
		{"WebSearch(x)", "takes no specifier", "", 18},
		{"Read(../secrets)", "contains '..'", "without '..'", 13},
		{"Agent(a,,b)", `invalid agent name ""`, "", 0},
		{"Agent(a, a)", `agent "a" listed twice`, "", 0},
		{"Skill(Bad_Name)", "invalid skill name", "", 14},
		{"mcp__", "malformed MCP tool name", "", 8},
		{"mcp__s__t(x)", "unexpected specifier", "", 17},
		{"Bash(gh) extra", "text after the specifier", "", 0},
		{"", "empty tool rule", "", 8},
		{" Read", "leading or trailing blanks", "", 8},
		{"Read(a)(b)", "", "", 0},
		{"9Bash", "malformed tool name", "", 8},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			_, err := ParseToolRule(tc.raw, at)
			if err == nil {
				t.Fatalf("ParseToolRule(%q) succeeded", tc.raw)
			}
			var re *RuleError
			if !errors.As(err, &re) || !errors.Is(err, ErrInvalidToolRule) {
				t.Fatalf("error %T is not a *RuleError wrapping ErrInvalidToolRule", err)
			}
			if !strings.Contains(re.Message, tc.msg) || !strings.Contains(re.Hint, tc.hint) {
				t.Errorf("got %q (hint %q), want message containing %q, hint containing %q", re.Message, re.Hint, tc.msg, tc.hint)
			}
			if tc.col != 0 && re.Pos.Column != tc.col {
				t.Errorf("column = %d, want %d", re.Pos.Column, tc.col)
			}
			if re.Pos.File != at.File || re.Pos.Line != at.Line {
				t.Errorf("pos = %v", re.Pos)
			}
		})
	}
}

func TestSplitToolList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		offs []int
		err  string
	}{
		{"Bash(gh,curl,jq), Skill", []string{"Bash(gh,curl,jq)", "Skill"}, []int{0, 18}, ""},
		{"Bash(git:*) Read", []string{"Bash(git:*)", "Read"}, []int{0, 12}, ""},
		{"Read,Grep,  Glob", []string{"Read", "Grep", "Glob"}, []int{0, 5, 12}, ""},
		{"Bash(gh api *), Agent(a, b)", []string{"Bash(gh api *)", "Agent(a, b)"}, []int{0, 16}, ""},
		{"  Read  ", []string{"Read"}, []int{2}, ""},
		{"", nil, nil, ""},
		{"Read,,Grep", nil, nil, "empty element"},
		{",Read", nil, nil, "empty element"},
		{"Read,", nil, nil, "trailing comma"},
		{"Bash(gh", nil, nil, "never closed"},
		{"Bash)", nil, nil, "')' without '('"},
		{"Bash (gh)", nil, nil, "'(' without a tool name"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			items, err := SplitToolList(tc.in)
			if tc.err != "" {
				var le *ToolListError
				if !errors.As(err, &le) || !errors.Is(err, ErrInvalidToolRule) || !strings.Contains(le.Message, tc.err) || le.Offset < 0 || le.Offset > len(tc.in) {
					t.Fatalf("err = %v, want a *ToolListError %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != len(tc.want) {
				t.Fatalf("items = %+v", items)
			}
			for i, it := range items {
				if it.Text != tc.want[i] || it.Offset != tc.offs[i] {
					t.Errorf("item %d = %+v, want %q at %d", i, it, tc.want[i], tc.offs[i])
				}
			}
		})
	}
}

func BenchmarkParseToolRule(b *testing.B) {
	at := Pos{File: "agents/a.md", Line: 3, Column: 8}
	rules := []string{"Bash(gh,curl,jq)", "Bash(gh api:*)", "WebFetch(domain:*.example.com)", "Agent(a, b, c)", "Read(//abs/**)", "mcp__github__get_issue"}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range rules {
			if _, err := ParseToolRule(r, at); err != nil {
				b.Fatal(err)
			}
		}
	}
}
