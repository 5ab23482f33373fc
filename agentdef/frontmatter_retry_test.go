package agentdef

import (
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestQuoteProblematicValues(t *testing.T) {
	tests := []struct {
		in, out string
		keys    []string
	}{
		{"description: a: b", `description: "a: b"`, []string{"description"}},
		{"description:\ta: b", `description: "a: b"`, []string{"description"}},
		{"description:   a: b  ", `description: "a: b  "`, []string{"description"}},
		{`description: say "hi": C:\x`, `description: "say \"hi\": C:\\x"`, []string{"description"}},
		{"tools: [Read, Grep]", `tools: "[Read, Grep]"`, []string{"tools"}},
		{"tools: Bash(npm *), Read", `tools: "Bash(npm *), Read"`, []string{"tools"}},
		{"paths: src/**/*.{ts,tsx}", `paths: "src/**/*.{ts,tsx}"`, []string{"paths"}},
		{"see: https://x.example.com at 12:34", "see: https://x.example.com at 12:34", nil}, // no ': ', no special character
		{`description: "a: b"`, `description: "a: b"`, nil},                                 // already quoted
		{`description: 'a: b'`, `description: 'a: b'`, nil},
		{`description: "a": b`, `description: "\"a\": b"`, []string{"description"}}, // quoted at the start only
		{"  nested: a: b", "  nested: a: b", nil},                                   // indented
		{"- item: a: b", "- item: a: b", nil},                                       // list item
		{"allowed_tools2: a: b", "allowed_tools2: a: b", nil},                       // digits are not in [a-zA-Z_-]
		{"description:a: b", "description:a: b", nil},                               // no blank after the key's colon
		{"description:    ", "description:    ", nil},
		{"description: a\u2028: b", "description: a\u2028: b", nil},                // `.` matches no line terminator
		{"description:\u00a0a: b", `description: "a: b"`, []string{"description"}}, // JavaScript's \s
		{"name: x\ndescription: a # b\ntools: Read", "name: x\ndescription: \"a # b\"\ntools: Read", []string{"description"}},
	}
	for _, tc := range tests {
		got, changed := quoteProblematicValues(tc.in)
		var keys []string
		for _, r := range changed {
			keys = append(keys, r.key)
			if line := strings.Split(tc.in, "\n")[r.line]; line[r.col:] != r.value {
				t.Errorf("%q: value %q is not at offset %d of %q", tc.in, r.value, r.col, line)
			}
		}
		if got != tc.out || !slices.Equal(keys, tc.keys) {
			t.Errorf("quoteProblematicValues(%q) = %q %v, want %q %v", tc.in, got, keys, tc.out, tc.keys)
		}
	}
}

// TestClaudeRetry loads one-file projects whose frontmatter yaml.v3 rejects
// and checks which Claude Code's retry rescues (warnings) and which stay
// errors, with every diagnostic as "severity position field".
func TestClaudeRetry(t *testing.T) {
	tests := []struct {
		name, file, fm string
		want           []string
		check          func(t *testing.T, p *Project)
	}{
		{"colon in description", "agents/a.md", "name: a\ndescription: Use it: always\ntools: Read\n",
			[]string{"warning agents/a.md:3:20 description"},
			func(t *testing.T, p *Project) {
				if got := p.Agents[0].Description; got != "Use it: always" {
					t.Errorf("description %q", got)
				}
			}},
		{"later positions on a rewritten line stay in the original file", "agents/a.md",
			"name: a\ndescription:    Use it: always\ntools:   Read, Bash(npm *), WebFetch\n",
			[]string{"warning agents/a.md:3:23 description"},
			func(t *testing.T, p *Project) {
				// The tools line was quoted too (it holds a *), to no effect.
				at := map[string]string{}
				for _, r := range p.Agents[0].Tools {
					at[r.Tool] = r.Pos.String()
				}
				if at["Bash"] != "agents/a.md:4:16" || at["WebFetch"] != "agents/a.md:4:29" {
					t.Errorf("tool positions %v, want Bash at 4:16 and WebFetch at 4:29", at)
				}
			}},
		{"hash kept in the quoted value", "agents/a.md", "name: a\ndescription: Fix: issue #42\ntools: Read\n",
			[]string{"warning agents/a.md:3:17 description"},
			func(t *testing.T, p *Project) {
				if got := p.Agents[0].Description; got != "Fix: issue #42" {
					t.Errorf("description %q", got)
				}
			}},
		{"unknown field quoted", "agents/a.md", "name: a\ndescription: a: b\ntools: Read\ntriggers: [x, y]\n",
			[]string{"warning agents/a.md:3:15 description", "warning agents/a.md:5:1 triggers"}, nil},
		{"skill", "skills/s/SKILL.md", "name: s\ndescription: Quality gates: HTML, CSS\nallowed-tools: Read, Bash(git *)\n",
			[]string{"warning skills/s/SKILL.md:3:27 description"}, nil},
		{"tools list would become a string", "agents/a.md", "name: a\ndescription: a: b\ntools: [Read, Grep]\n",
			[]string{"error agents/a.md:3:15 description"}, nil},
		{"skill dependencies list would become a string", "skills/s/SKILL.md", "name: s\ndescription: a: b\ndependencies: []\n",
			[]string{"error skills/s/SKILL.md:3:15 description"}, nil},
		{"duplicate key after the retry", "agents/a.md", "name: a\ndescription: a: b\ntools: Read\ndescription: c\n",
			[]string{"error agents/a.md:3:15 description"}, nil},
		{"continuation line", "agents/a.md", "name: a\ndescription: a: b\n  more\ntools: Read\n",
			[]string{"error agents/a.md:3:15 description"}, nil},
		{"nothing to quote", "agents/a.md", "name: a\ndescription: a\n b: c\ntools: Read\n",
			[]string{"error agents/a.md:4:1 "}, nil},
		{"OpenCode-shaped agents/ file: its permission map would become a string", "agents/a.md", "description: a: b\nmode: subagent\npermission: {\"*\": deny}\n",
			[]string{"error agents/a.md:2:15 description"}, nil},
		{"OpenCode file: no retry", ".opencode/agent/a.md", "description: a: b\nmode: subagent\n",
			[]string{"error .opencode/agent/a.md:2:15 description"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{tc.file: {Data: []byte("---\n" + tc.fm + "---\nbody\n")}}
			if !strings.HasPrefix(tc.file, "agents/") {
				fsys["agents/z.md"] = &fstest.MapFile{Data: []byte("---\nname: z\ndescription: d\ntools: Read\n---\n")}
			}
			proj, ds, _ := LoadPartial(fsys)
			var got []string
			for _, d := range ds {
				got = append(got, string(d.Severity)+" "+d.Pos.String()+" "+d.Field)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got\n%s\nwant\n%s\n(all: %v)", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), ds)
			}
			if tc.check != nil {
				tc.check(t, proj)
			}
		})
	}
}

func TestClaudeRetryCRLF(t *testing.T) {
	// Claude Code's line regexp never matches a line ending in \r.
	_, err := Load(fstest.MapFS{"agents/a.md": {Data: []byte("---\r\nname: a\r\ndescription: a: b\r\ntools: Read\r\n---\r\n")}})
	if err == nil || !strings.Contains(err.Error(), "unquoted ': '") {
		t.Fatalf("want the unquoted ': ' error, got %v", err)
	}
}

// TestClaudeRetryBlocked: a public file Claude Code loads only by quoting
// its tools list into one string stays an error, whose hint says why.
func TestClaudeRetryBlocked(t *testing.T) {
	_, err := Load(os.DirFS(realWorldDir(t, "fm-1215labs-debugger")))
	ds, _ := err.(Diagnostics)
	if len(ds) != 1 || ds[0].Pos.String() != "agents/debugger.md:6:240" || ds[0].Field != "description" ||
		!strings.Contains(ds[0].Message, "unquoted ': '") || !strings.Contains(ds[0].Hint, "quoting tools into one string") {
		t.Fatalf("want one unquoted ': ' error on description naming tools, got %v", err)
	}
}

func TestSkillWithoutName(t *testing.T) {
	proj, ds, _ := LoadPartial(fstest.MapFS{
		"skills/my-skill/SKILL.md": {Data: []byte("---\ndescription: d\n---\n")},
		"skills/Bad Dir/SKILL.md":  {Data: []byte("---\ndescription: d\n---\n")},
		"skills/x\ty/SKILL.md":     {Data: []byte("---\ndescription: d\n---\n")},
		"agents/z.md":              {Data: []byte("---\nname: z\ndescription: d\ntools: Read\n---\n")},
	})
	var got []string
	for _, d := range ds {
		got = append(got, string(d.Severity)+" "+d.Pos.String()+" "+d.Field)
	}
	// A tab is a control character: the directory is refused at discovery
	// (TestUnprintablePathsRefused), with its name quoted.
	want := []string{`error "skills/x\ty":1:1 `, "warning skills/Bad Dir/SKILL.md:2:1 name", "warning skills/my-skill/SKILL.md:2:1 name"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v (%v)", got, want, ds)
	}
	if s := proj.Skills["my-skill"]; s == nil || s.Name != "my-skill" {
		t.Errorf("skills %+v", proj.Skills)
	}
}

func TestSkillMetadataValues(t *testing.T) {
	_, ds, _ := LoadPartial(fstest.MapFS{
		"skills/s/SKILL.md": {Data: []byte("---\nname: s\ndescription: d\nmetadata:\n  author: me\n  keywords: [a, b]\n  openclaw: {emoji: x}\n  version: 1\n---\n")},
		"agents/z.md":       {Data: []byte("---\nname: z\ndescription: d\ntools: Read\n---\n")},
	})
	var got []string
	for _, d := range ds {
		got = append(got, string(d.Severity)+" "+d.Pos.String()+" "+d.Field)
	}
	want := []string{"warning skills/s/SKILL.md:6:13 metadata.keywords", "warning skills/s/SKILL.md:7:13 metadata.openclaw", "error skills/s/SKILL.md:8:12 metadata.version"}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v (%v)", got, want, ds)
	}
}
