package agentdef

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzFrontmatter loads a project whose files hold fuzzed content, in every
// layout, and checks that Load never panics and that every error it reports
// is positioned.
func FuzzFrontmatter(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "bad", "*", "*", "*.md"))
	more, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "*", "*.md"))
	skills, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "skills", "*", "SKILL.md"))
	for _, p := range append(append(seeds, more...), skills...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(string(data))
		}
	}
	f.Add("---\ndescription: d\npermission:\n  \"*\": deny\n  bash: {\"git *\": allow, \"git push *\": ask}\n---\n")
	f.Add("---\nname: a\ndescription: x\ntools: Bash(gh,curl,jq), Skill, Agent(a)\nskills: a, b\n---\n")
	f.Add("---\nname: a\ndescription: x\ntools: Agent(b)\nsandbox:\n  spawn-widening:\n    - {agent: b, hosts: [\"*.x.io\"], paths: [/data], process: true}\n---\n")
	// Claude Code's quote-retry (frontmatter_retry.go): rescued, refused
	// (a list turned into a string, a duplicate key), and escapes.
	f.Add("---\nname: a\ndescription: Use it: always, see #1\ntools:   Read, Bash(npm *)\n---\n")
	f.Add("---\nname: a\ndescription: a: b\ntools: [\"Read\", \"Bash(*)\"]\n---\n")
	f.Add("---\nname: a\ndescription: a: \"b\" \\ c\ntools: Read\ndescription: d\n---\n")
	f.Add("---\nname: s\ndescription: gates: HTML\nmetadata:\n  k: [a]\n--------\n")
	f.Fuzz(func(t *testing.T, content string) {
		data := []byte(content)
		fsys := fstest.MapFS{
			"agents/a.md":               {Data: data},
			".opencode/agent/oc.md":     {Data: data},
			"skills/a/SKILL.md":         {Data: data},
			".claude/agents/b/c.md":     {Data: []byte(strings.Replace(content, "name: a", "name: c", 1))},
			".agents/skills/b/SKILL.md": {Data: []byte(strings.Replace(content, "name: a", "name: b", 1))},
		}
		proj, err := Load(fsys)
		if err != nil {
			var ds Diagnostics
			if !errors.As(err, &ds) || len(ds) == 0 {
				t.Fatalf("error is not a non-empty Diagnostics: %T %v", err, err)
			}
			for _, d := range ds {
				if d.Pos.File == "" || d.Pos.Line < 1 || d.Message == "" || d.Severity != SeverityError {
					t.Fatalf("unpositioned or empty diagnostic: %#v", d)
				}
			}
			return
		}
		for _, a := range proj.Agents {
			if a.Name == "" || a.Description == "" || (!a.ToolsOmitted && len(a.Tools) == 0) {
				t.Fatalf("accepted an incomplete agent: %+v", a)
			}
			for _, r := range a.Tools {
				if r.Tool == "" || r.Pos.File == "" {
					t.Fatalf("tool rule without tool or position: %+v", r)
				}
			}
		}
		for _, w := range proj.Warnings {
			if w.Pos.File == "" || w.Severity != SeverityWarning {
				t.Fatalf("bad warning: %#v", w)
			}
		}
	})
}

// FuzzToolRule checks that the rule parser and the list splitter never
// panic, that offsets stay in bounds, and that accepted rules are consistent.
func FuzzToolRule(f *testing.F) {
	for _, s := range []string{
		"Bash", "Bash(*)", "Bash(gh api:*)", "Bash(gh,curl,jq), Skill", "Bash(npx *)",
		"WebFetch(domain:*.example.com)", "Read(//abs/**)", "Agent(a, b)", "Task(a)",
		"Skill(x)", "mcp__s__t", "Bash(gh", "Bash((x))", "Read Grep,Glob", "Bash(a:*:*)",
	} {
		f.Add(s)
	}
	at := Pos{File: "agents/a.md", Line: 2, Column: 8}
	f.Fuzz(func(t *testing.T, s string) {
		items, err := SplitToolList(s)
		if err == nil {
			for _, it := range items {
				if it.Offset < 0 || it.Offset+len(it.Text) > len(s) || s[it.Offset:it.Offset+len(it.Text)] != it.Text || it.Text == "" {
					t.Fatalf("bad item %+v of %q", it, s)
				}
			}
		}
		r, err := ParseToolRule(s, at)
		if err != nil {
			var re *RuleError
			if !errors.As(err, &re) || re.Pos.Line != at.Line || re.Pos.Column < at.Column {
				t.Fatalf("bad error %T %v", err, err)
			}
			return
		}
		if r.Raw != s || r.Tool == "" {
			t.Fatalf("rule %+v from %q", r, s)
		}
		if r.Tool == "Bash" {
			for _, c := range r.Commands {
				if c.Command == "" || strings.ContainsAny(c.Command, "/*?= ") {
					t.Fatalf("bad command %+v from %q", c, s)
				}
			}
		}
	})
}
