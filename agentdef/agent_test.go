package agentdef

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/forge"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// loadOne loads a project made of the given files and fails on error.
func loadOne(t *testing.T, files map[string]string) *Project {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, content := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(content)}
	}
	proj, err := Load(fsys)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return proj
}

func raws(rules []ToolRule) string {
	var out []string
	for _, r := range rules {
		out = append(out, r.Raw)
	}
	return strings.Join(out, " | ")
}

func warnings(p *Project) string {
	var out []string
	for _, w := range p.Warnings {
		out = append(out, w.Pos.String()+" "+w.Field+": "+w.Message)
	}
	return strings.Join(out, "\n")
}

func TestClaudeAgent(t *testing.T) {
	tests := []struct {
		name, fm       string
		tools, denied  string
		omitted        bool
		warn           string // substring of the warnings, "" = none
		model, permMod string
	}{
		{name: "disallowed removed first",
			fm:    "tools: Bash(gh *), Read, WebFetch(domain:x.io)\ndisallowedTools: WebFetch, Bash(rm *)",
			tools: "Bash(gh *) | Read", denied: "WebFetch | Bash(rm *)"},
		{name: "legacy prefix equals space form",
			fm:    "tools: Bash(gh api:*), Read\ndisallowedTools: Bash(gh api *)",
			tools: "Read", denied: "Bash(gh api *)"},
		{name: "tools omitted",
			fm:      "model: sonnet",
			omitted: true, warn: "", model: "sonnet"},
		{name: "list with several rules per element",
			fm:    "tools:\n  - Read, Grep\n  - Bash(gh,curl,jq)\n  - Task(b)",
			tools: "Read | Grep | Bash(gh,curl,jq) | Task(b)"},
		{name: "memory adds scoped file tools",
			fm:    "tools: Bash(gh *)\nmemory: project",
			tools: "Bash(gh *) | Read(.claude/agent-memory/a/**) | Write(.claude/agent-memory/a/**) | Edit(.claude/agent-memory/a/**)"},
		{name: "bypassPermissions warns",
			fm:    "tools: Read\npermissionMode: bypassPermissions",
			tools: "Read", warn: "bypassPermissions turns off", permMod: "bypassPermissions"},
		// The compile, not the parser, says what mcpServers grant (mcp.go,
		// egressChecks).
		{name: "mcp servers parse",
			fm:    "tools: mcp__github__get_issue\nmcpServers: [github]",
			tools: "mcp__github__get_issue"},
		{name: "hash in description is a comment",
			fm:    "tools: Read\nx-note: 1",
			tools: "Read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			content := "---\nname: a\ndescription: d\n" + tc.fm + "\n---\nbody\n"
			content = strings.Replace(content, "x-note: 1\n", "", 1)
			proj := loadOne(t, map[string]string{"agents/a.md": content, "agents/b.md": "---\nname: b\ndescription: d\ntools: Read\n---\n"})
			a := proj.Agents[0]
			if a.Format != FormatClaude || a.Name != "a" {
				t.Fatalf("agent = %s %s", a.Format, a.Name)
			}
			if got := raws(a.Tools); got != tc.tools {
				t.Errorf("tools = %q, want %q", got, tc.tools)
			}
			if got := raws(a.Disallowed); got != tc.denied {
				t.Errorf("disallowed = %q, want %q", got, tc.denied)
			}
			if a.ToolsOmitted != tc.omitted || a.Model != tc.model || a.PermissionMode != tc.permMod {
				t.Errorf("omitted=%v model=%q permissionMode=%q", a.ToolsOmitted, a.Model, a.PermissionMode)
			}
			w := warnings(proj)
			if (tc.warn == "") != (w == "") || !strings.Contains(w, tc.warn) {
				t.Errorf("warnings = %q, want %q", w, tc.warn)
			}
		})
	}
}

func TestWarningsWithPositions(t *testing.T) {
	proj := loadOne(t, map[string]string{
		"agents/triage.md":           "---\nname: triage\ndescription: Fix issue #42 quickly\ntools: Read # a real comment\n---\n",
		"agents/other-file.md":       "---\nname: renamed\ndescription: d\ntools: Read\n---\n",
		"skills/labels/SKILL.md":     "---\nname: issue-labels\ndescription: d\n---\n",
		"agents/README.md":           "# not an agent",
		"agents/_draft.md":           "not even frontmatter",
		"agents/.hidden/x.md":        "nope",
		"skills/_wip/SKILL.md":       "nope",
		"agents/nested/deeper/n.md":  "---\nname: n\ndescription: d\ntools: Read\n---\n",
		".claude/agents/README.md":   "# docs",
		".opencode/agent/README.md":  "# docs",
		".agents/skills/x/README.md": "# not a SKILL.md",
	})
	want := []string{
		`agents/other-file.md:2:7 name: agent name "renamed" differs from its file name "other-file"`,
		`agents/triage.md:3:24 description: the text after ' #' is a YAML comment and is dropped from the value`,
		`skills/labels/SKILL.md:2:7 name: skill name "issue-labels" differs from its directory "labels"`,
	}
	if got := warnings(proj); got != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if len(proj.Agents) != 3 || proj.Agents[0].Name != "n" || proj.Agents[0].File != "agents/nested/deeper/n.md" {
		t.Errorf("agents = %+v", proj.Agents)
	}
	if proj.Agents[2].Description != "Fix issue" {
		t.Errorf("description = %q", proj.Agents[2].Description)
	}
	if len(proj.Files) != 4 {
		t.Errorf("files = %v (excluded files must not be read)", proj.Files)
	}
}

func TestFormatDetection(t *testing.T) {
	proj := loadOne(t, map[string]string{
		"agents/oc.md":          "---\ndescription: d\nmode: subagent\npermission:\n  \"*\": deny\n  read: allow\n---\n",
		"agents/cc.md":          "---\nname: cc\ndescription: d\ntools: Read\n---\n",
		".claude/agents/x.md":   "---\nname: x\ndescription: d\ntools: Read\n---\n",
		".opencode/agents/y.md": "---\ndescription: d\npermission:\n  \"*\": deny\n  grep: allow\n---\n",
	})
	got := map[string]Format{}
	for _, a := range proj.Agents {
		got[a.Name] = a.Format
	}
	want := map[string]Format{"oc": FormatOpenCode, "cc": FormatClaude, "x": FormatClaude, "y": FormatOpenCode}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: format %q, want %q", k, got[k], v)
		}
	}
	// A Claude Code file with an OpenCode field gets a pointed hint.
	_, err := Load(fstest.MapFS{"agents/z.md": {Data: []byte("---\nname: z\ndescription: d\ntools: Read\nmode: subagent\n---\n")}})
	var ds Diagnostics
	if !errors.As(err, &ds) || !strings.Contains(ds[0].Hint, "OpenCode field") {
		t.Errorf("err = %v", err)
	}
}

func TestOpenCodePermissions(t *testing.T) {
	tests := []struct {
		name, fm      string
		tools, denied string
		omitted       bool
		warn          string
	}{
		{name: "last matching rule wins",
			fm:    "permission:\n  \"*\": deny\n  bash:\n    \"git *\": allow\n    \"git push *\": deny\n    \"gh *\": allow\n    \"gh*\": deny",
			tools: "", denied: "", warn: ""},
		{name: "later deny star removes earlier allows",
			fm:    "permission:\n  read: allow\n  bash:\n    \"git *\": allow\n    \"*\": deny\n  \"*\": deny\n  grep: allow",
			tools: "Grep", denied: "", warn: ""},
		{name: "narrow deny after broad allow is kept for explain",
			fm:    "permission:\n  \"*\": deny\n  bash:\n    \"git *\": allow\n    \"git push *\": deny",
			tools: "Bash(git *)", denied: ""},
		{name: "ask is deny",
			fm:    "permission:\n  \"*\": deny\n  read: allow\n  webfetch: ask",
			tools: "Read", warn: "ask is treated as deny"},
		{name: "tools map folds before permission",
			fm:    "tools:\n  bash: true\n  write: true\npermission:\n  \"*\": deny\n  read: allow\n  edit: allow",
			tools: "Read | Edit", warn: "tools map is deprecated"},
		{name: "no star rule means unlisted tools are open",
			fm:    "permission:\n  edit: deny\n  bash:\n    \"npm test\": allow",
			tools: "Bash(npm test)", omitted: true, warn: `no "*" permission rule`},
		{name: "allow all expands to every tool",
			fm:    "permission: allow",
			tools: "Agent | Bash | Edit | Glob | Grep | LS | LSP | Read | Skill | TodoWrite | WebFetch | WebSearch"},
		{name: "denying an unknown (MCP) tool is a warning",
			fm:    "permission:\n  \"*\": deny\n  read: allow\n  github_*: deny",
			tools: "Read", warn: `unknown permission "github_*" grants nothing in the sandbox`},
		{name: "disabling an unknown tool in the tools map is a warning",
			fm:    "tools:\n  github_*: false\npermission:\n  \"*\": deny\n  read: allow",
			tools: "Read", warn: `unknown permission "github_*" grants nothing in the sandbox`},
		{name: "task and skill patterns",
			fm:    "permission:\n  \"*\": deny\n  task:\n    \"*\": deny\n    b: allow\n  skill:\n    labels: allow",
			tools: "Agent(b) | Skill(labels)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "last matching rule wins" {
				// gh * is allowed then denied: only git * survives, git push * stays denied.
				tc.tools, tc.denied = "Bash(git *)", "Agent | Bash | Edit | Glob | Grep | LS | LSP | Read | Skill | TodoWrite | WebFetch | WebSearch | Bash(git push *) | Bash(gh*)"
			}
			proj := loadOne(t, map[string]string{
				".opencode/agent/a.md":   "---\ndescription: d\n" + tc.fm + "\n---\n",
				".opencode/agent/b.md":   "---\ndescription: d\npermission: {\"*\": deny, read: allow}\n---\n",
				"skills/labels/SKILL.md": "---\nname: labels\ndescription: d\n---\n",
			})
			a := proj.Agents[0]
			if got := raws(a.Tools); got != tc.tools {
				t.Errorf("tools = %q, want %q", got, tc.tools)
			}
			if tc.denied != "" {
				if got := raws(a.Disallowed); got != tc.denied {
					t.Errorf("denied = %q, want %q", got, tc.denied)
				}
			}
			if a.ToolsOmitted != tc.omitted {
				t.Errorf("omitted = %v", a.ToolsOmitted)
			}
			w := warnings(proj)
			if (tc.warn == "") != (w == "") || !strings.Contains(w, tc.warn) {
				t.Errorf("warnings = %q, want %q", w, tc.warn)
			}
		})
	}
}

func TestSplitFrontmatter(t *testing.T) {
	tests := []struct {
		in, fm, body string
		err          error
	}{
		{"---\na: 1\n---\nbody\n", "a: 1\n", "body\n", nil},
		{"\ufeff---\r\na: 1\r\n---\r\nbody\r\n", "a: 1\n", "body\n", nil},
		{"---  \na: 1\n---\t\n", "a: 1\n", "", nil},
		{"---\na: 1\n---", "a: 1\n", "", nil},
		{"---\n---\n", "", "", nil},
		{"---\na: ---\n----\n---\nb\n", "a: ---\n", "---\nb\n", nil}, // Claude Code closes at a line of 3+ dashes
		{"---\na: b\n" + strings.Repeat("-", 56) + "\nbody\n", "a: b\n", "body\n", nil},
		{"---\na: b\n--- \t\nbody\n", "a: b\n", "body\n", nil},
		{"---\na: b\n-- \n", "", "", errUnterminatedFrontmatter},
		{"# title\n---\na: 1\n---\n", "", "", errNoFrontmatter},
		{"", "", "", errNoFrontmatter},
		{"---", "", "", errUnterminatedFrontmatter},
		{"---\na: 1\n", "", "", errUnterminatedFrontmatter},
		{" ---\na: 1\n---\n", "", "", errNoFrontmatter},
	}
	for _, tc := range tests {
		fm, body, err := splitFrontmatter([]byte(tc.in))
		if !errors.Is(err, tc.err) || fm != tc.fm || body != tc.body {
			t.Errorf("splitFrontmatter(%q) = %q, %q, %v; want %q, %q, %v", tc.in, fm, body, err, tc.fm, tc.body, tc.err)
		}
	}
}

func TestSandboxDecl(t *testing.T) {
	proj := loadOne(t, map[string]string{"agents/a.md": `---
name: a
description: d
tools: Bash(curl *)
sandbox:
  tier: network
  provider: vertex
  profiles: [forge-read]
  endpoints:
    - host: "*.googleapis.com"
    - host: 10.0.0.5
      port: 8443
      protocol: websocket
      access: read-write
      allowed_ips: [10.0.0.0/24, "{{HOST_IP}}"]
      binaries: [/usr/bin/curl]
    - host: "{{FORGE_HOST}}"
      rules:
        - GET /api/v4/projects/{{OWNER}}%2F{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}
        - {method: GET, path: /search, query: {q: "repo:{{OWNER}}/*"}}
  filesystem:
    read_only: [/opt/data]
    read_write: [/sandbox/out]
  outputs: [/sandbox/out/report.json]
---
`})
	sb := proj.Agents[0].Sandbox
	if sb.Tier != "network" || sb.Provider != "vertex" || sb.Profiles[0].Name != "forge-read" || sb.Profiles[0].Pos.String() != "agents/a.md:8:14" {
		t.Errorf("sandbox = %+v", sb)
	}
	if len(sb.Endpoints) != 3 {
		t.Fatalf("endpoints = %+v", sb.Endpoints)
	}
	e0, e1, e2 := sb.Endpoints[0], sb.Endpoints[1], sb.Endpoints[2]
	if e0.Port != 443 || e0.Protocol != "rest" || e0.Host != "*.googleapis.com" {
		t.Errorf("defaults not applied: %+v", e0)
	}
	if e1.Port != 8443 || e1.Protocol != "websocket" || e1.Access != "read-write" || len(e1.AllowedIPs) != 2 || e1.Binaries[0].Path != "/usr/bin/curl" {
		t.Errorf("endpoint 1 = %+v", e1)
	}
	if len(e2.Rules) != 2 || e2.Rules[1].Query["q"] != "repo:{{OWNER}}/*" || e2.Rules[0].Pos.String() != "agents/a.md:19:11" {
		t.Errorf("endpoint 2 = %+v", e2)
	}
	if sb.ReadOnly[0].Path != "/opt/data" || sb.ReadWrite[0].Path != "/sandbox/out" || sb.Outputs[0].Pos.String() != "agents/a.md:24:13" {
		t.Errorf("paths = %+v %+v %+v", sb.ReadOnly, sb.ReadWrite, sb.Outputs)
	}

	proj = loadOne(t, map[string]string{"agents/a.md": "---\nname: a\ndescription: d\ntools: Read\nsandbox: policies/a.yaml\n---\n"})
	if sb := proj.Agents[0].Sandbox; sb.PolicyFile != "policies/a.yaml" || sb.PolicyFilePos.String() != "agents/a.md:5:10" {
		t.Errorf("policy file sandbox = %+v", sb)
	}
}

func TestRulePositions(t *testing.T) {
	tests := []struct{ tools, want string }{
		{"tools: Read, Reed", "agents/a.md:4:14"},
		{`tools: "Read, Reed"`, "agents/a.md:4:15"},
		{`tools: 'Read, Reed'`, "agents/a.md:4:15"},
		{"tools: Read,\n  Reed", "agents/a.md:4:8"},    // folded plain scalar: the node
		{"tools: >-\n  Read, Reed", "agents/a.md:4:8"}, // block scalar: the node
		{`tools: "Read,\u0020Reed"`, "agents/a.md:4:8"},
		{"tools:\n  - Read\n  - Grep, Reed", "agents/a.md:6:11"},
	}
	for _, tc := range tests {
		t.Run(tc.tools, func(t *testing.T) {
			// An unknown tool is a warning: it grants nothing.
			proj, err := Load(fstest.MapFS{"agents/a.md": {Data: []byte("---\nname: a\ndescription: d\n" + tc.tools + "\n---\n")}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range proj.Warnings {
				if strings.Contains(d.Message, `"Reed"`) {
					got = append(got, d.Pos.String())
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("got warnings at %v, want one at %s", got, tc.want)
			}
		})
	}
}

func TestOpenCodePermissionLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\ndescription: d\npermission:\n  \"*\": deny\n  bash:\n")
	for i := 0; i < maxPermissionRules+1; i++ {
		b.WriteString("    \"" + strings.Repeat("*a", 90) + "b" + strings.Repeat("x", i%7) + jsonInt(i) + "\": allow\n")
	}
	b.WriteString("---\n")
	_, err := Load(fstest.MapFS{".opencode/agent/r.md": {Data: []byte(b.String())}})
	var ds Diagnostics
	if !errors.As(err, &ds) || !strings.Contains(ds[0].Message, "permission rules; at most 200 allowed") {
		t.Fatalf("err = %v", err)
	}
	long := "---\ndescription: d\npermission:\n  bash:\n    \"" + strings.Repeat("a", maxPermissionLength+1) + "\": allow\n---\n"
	_, err = Load(fstest.MapFS{".opencode/agent/r.md": {Data: []byte(long)}})
	if !errors.As(err, &ds) || !strings.Contains(ds[0].Message, "pattern longer than 200 bytes") || ds[0].Pos.String() != ".opencode/agent/r.md:5:5" {
		t.Fatalf("err = %v", err)
	}
}

func TestWildcardMatch(t *testing.T) {
	tests := []struct {
		p, s string
		want bool
	}{
		{"*", "anything at all", true},
		{"git *", "git push *", true},
		{"git push *", "git *", false},
		{"gh*", "gh *", true},
		{"g?t *", "git x", true},
		{"*.env", "config/.env", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"", "", true},
		{"", "x", false},
	}
	for _, tc := range tests {
		if got := wildcardMatch(tc.p, tc.s); got != tc.want {
			t.Errorf("wildcardMatch(%q, %q) = %v", tc.p, tc.s, got)
		}
	}
}

func TestSkillDependencies(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	good := "---\nname: s\ndescription: d\ndependencies:\n  - labels\n  - ../common/cargo/SKILL.md\n  - https://github.com/fullsend-ai/skills/security/SKILL.md#sha256=" + hash + "\n---\n"
	proj := loadOne(t, map[string]string{"skills/s/SKILL.md": good})
	if deps := proj.Skills["s"].Dependencies; len(deps) != 3 || deps[2].Pos.String() != "skills/s/SKILL.md:7:5" {
		t.Errorf("dependencies = %+v", deps)
	}
	for dep, msg := range map[string]string{
		"https://example.com/x/SKILL.md":               "has no integrity hash",
		"https://example.com/x/SKILL.md#sha256=abc123": "has no integrity hash",
		"http://example.com/x/SKILL.md#sha256=" + hash: "is not an https URL",
		"https://user:pw@example.com/x#sha256=" + hash: "invalid dependency URL",
		"../../../outside/SKILL.md":                    "leaves the project",
		"/abs/SKILL.md":                                "invalid dependency path",
		"Not A Name":                                   "invalid dependency",
	} {
		_, err := Load(fstest.MapFS{"skills/s/SKILL.md": {Data: []byte("---\nname: s\ndescription: d\ndependencies: [\"" + dep + "\"]\n---\n")}})
		var ds Diagnostics
		if !errors.As(err, &ds) || ds[0].Field != "dependencies[0]" || !strings.Contains(ds[0].Message, msg) {
			t.Errorf("%s: got %v, want %q", dep, err, msg)
		}
	}
}

// TestForeignToolsMatchCatalog: the did-you-mean table of other runtimes'
// tool names (foreignTools) and catalog/tools.cue's aliases agree, both ways.
func TestForeignToolsMatchCatalog(t *testing.T) {
	cat, err := policycue.LoadCatalog(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	fromCUE := map[string]map[string]bool{}
	for tool, spec := range cat.Tools {
		for runtime, names := range spec.Aliases {
			for _, n := range names {
				if fromCUE[n] == nil {
					fromCUE[n] = map[string]bool{}
				}
				fromCUE[n][tool] = true
				if _, ok := foreignTools[n]; !ok {
					t.Errorf("tools.cue: %s alias %s of %s is missing from foreignTools", runtime, n, tool)
				}
			}
		}
		if spec.Source == "" {
			t.Errorf("tools.cue: %s cites no source", tool)
		}
	}
	for n, tool := range foreignTools {
		if foreignRuntimes(n) == "another runtime" {
			t.Errorf("foreignRuntimes: %s names no runtime", n)
		}
		if !fromCUE[n][tool] {
			t.Errorf("foreignTools: %s -> %s is not an alias of %s in tools.cue", n, tool, tool)
		}
	}
}

// TestAgentNameSyntaxMatchesForge: every name policy compile accepts is an
// identity the forge proxy and the spawn service accept, and the other way
// round.
func TestAgentNameSyntaxMatchesForge(t *testing.T) {
	for _, name := range []string{"triage", "a", "dotnet-framework-4.8-expert", "Explore", "general_purpose", "a--b",
		"-a", ".a", "..", "_a", "a b", "a/b", "../etc", "a:b", "", strings.Repeat("a", 64), strings.Repeat("a", 65), "é"} {
		if got, want := agentIDRE.MatchString(name), forge.ValidAgentName(name); got != want {
			t.Errorf("%q: policy compile accepts it: %v, forge: %v", name, got, want)
		}
	}
}
