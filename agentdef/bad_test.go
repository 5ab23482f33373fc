package agentdef

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

// badCase is one malformed project and the first error it must produce.
type badCase struct {
	pos, field, msg, hint string
	// count is the exact number of errors expected (default 1).
	count int
}

// badCases maps each directory under testdata/bad to its expected error.
var badCases = map[string]badCase{
	"access-and-rules":         {"agents/a.md:9:7", "sandbox.endpoints[0].rules", "access and rules are exclusive", "not both", 1},
	"bad-host":                 {"agents/a.md:7:13", "sandbox.endpoints[0].host", `host "https://api.github.com/repos" is not a host name`, "bare host", 1},
	"bad-method":               {"agents/a.md:8:15", "sandbox.endpoints[0].rules[0].method", `invalid method "get"`, "upper-case: GET", 1},
	"bad-name":                 {"agents/a.md:2:7", "name", `invalid agent name "Triage Bot"`, "lowercase", 1},
	"bad-permission-mode":      {"agents/a.md:5:17", "permissionMode", `invalid value "yolo"`, "bypassPermissions", 1},
	"bad-port":                 {"agents/a.md:8:13", "sandbox.endpoints[0].port", "from 1 to 65535, got 70000", "", 1},
	"bad-skill-name":           {"skills/issue-labels/SKILL.md:2:7", "name", `invalid skill name "issue/labels"`, "lowercase", 1},
	"bad-tier":                 {"agents/a.md:6:9", "sandbox.tier", `invalid value "readonly"`, `did you mean "read-only"?`, 1},
	"bad-yaml":                 {"agents/a.md:5:1", "", "invalid YAML: did not find expected key", "indentation", 1},
	"bash-path-command":        {"agents/a.md:6:10", "tools[1]", `command "/usr/bin/gh" is a path`, "name the program", 1},
	"cyclic-agents":            {"agents/c.md:4:8", "tools", "cyclic Agent() spawn list: a -> b -> c -> a", "remove one Agent()", 1},
	"dotdot-path":              {"agents/a.md:7:27", "sandbox.filesystem.read_only[1]", `"/sandbox/../etc/shadow" contains a ".." step`, "without", 1},
	"duplicate-agent":          {"agents/a.md:2:7", "name", `agent "a" is also defined in .claude/agents/a.md`, "unique", 1},
	"duplicate-key":            {"agents/a.md:5:1", "description", `duplicate key "description" (first at line 3)`, "remove one", 1},
	"empty-frontmatter":        {"agents/a.md:2:1", "", "frontmatter is empty", "name and description", 1},
	"empty-tools":              {"agents/a.md:4:8", "tools", "tools is empty", "list the tools", 1},
	"explicit-tag":             {"agents/a.md:3:14", "", "explicit YAML tag !!binary is not allowed", "remove the tag", 1},
	"list-frontmatter":         {"agents/a.md:2:1", "", "must be a YAML mapping", "", 1},
	"lowercase-skill-file":     {"skills/labels/skill.md:1:1", "", `skill file named "skill.md"`, "SKILL.md", 1},
	"missing-description":      {"agents/a.md:2:1", "description", "missing required field description", "", 1},
	"missing-frontmatter":      {"agents/notes.md:1:1", "", "missing YAML frontmatter", "start with _", 1},
	"missing-name":             {"agents/a.md:2:1", "name", "missing required field name", "", 1},
	"opencode-bad-action":      {".opencode/agent/rev.md:6:14", `permission.bash["git *"]`, `invalid value "maybe"`, "allow, ask, deny", 1},
	"opencode-wildcard-allow":  {".opencode/agent/rev.md:6:3", `permission.web*`, `wildcard key "web*" allows the permissions webfetch, websearch`, "name each permission", 1},
	"placeholder-wrong-field":  {"agents/a.md:10:21", "sandbox.endpoints[0].allowed_ips[0]", "{{OWNER}} may not appear", "{{HOST_IP}}", 1},
	"policy-path-escape":       {"skills/s/SKILL.md:4:9", "policy", `policy file "../../../etc/policy.yaml" leaves the project`, "inside the project", 1},
	"relative-rule-path":       {"agents/a.md:8:15", "sandbox.endpoints[0].rules[0].path", `path "repos/**" is not absolute`, "start with /", 1},
	"self-spawn":               {"agents/a.md:4:8", "tools", "cyclic Agent() spawn list: a -> a", "", 1},
	"tab-indent":               {"agents/a.md:7:1", "", "invalid YAML: a tab in the indentation: YAML indents with spaces only", "replace the tab with spaces", 1},
	"tab-indent-twice":         {"agents/a.md:8:2", "", "a tab in the indentation", "replace the tab with spaces", 2},
	"tools-resolve-to-nothing": {"agents/a.md:4:8", "tools", "tools resolve to nothing", "disallowedTools", 1},
	"unbalanced-parens":        {"agents/a.md:4:14", "tools", "'(' is never closed", "balanced", 1},
	"unknown-key":              {"agents/a.md:4:1", "tols", `unknown field "tols"`, `did you mean "tools"?`, 1},
	"unknown-placeholder":      {"agents/a.md:9:11", "sandbox.endpoints[0].rules[0].path", "unknown placeholder {{REPO}}", "", 1},
	"unquoted-colon":           {"agents/a.md:3:28", "description", "unquoted ': ' inside a plain value", `quote the value: description: "Use this agent: when an issue is opened"`, 1},
	"unterminated":             {"agents/a.md:1:1", "", "unterminated frontmatter", "---", 1},
	"wildcard-tld":             {"agents/a.md:7:13", "sandbox.endpoints[0].host", "covers a whole top-level domain", "", 1},
	"wrong-type":               {"agents/a.md:5:11", "maxTurns", `want an integer, got a string "many"`, "", 1},
	"yaml-bomb":                {"agents/a.md:4:5", "", "YAML anchor &a is not allowed", "aliases", 1},
}

// TestBadInputs loads every project under testdata/bad and checks the
// error's position, field, message and hint. Every directory must have a case.
func TestBadInputs(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "bad", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 25 {
		t.Fatalf("only %d bad inputs", len(dirs))
	}
	seen := map[string]bool{}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			want, ok := badCases[name]
			if !ok {
				t.Fatalf("no expectation for testdata/bad/%s", name)
			}
			_, err := Load(os.DirFS(dir))
			checkBad(t, err, want)
		})
	}
	for name := range badCases {
		if !seen[name] {
			t.Errorf("case %s has no directory", name)
		}
	}
}

func checkBad(t *testing.T, err error, want badCase) {
	t.Helper()
	var ds Diagnostics
	if !errors.As(err, &ds) {
		t.Fatalf("want Diagnostics, got %T: %v", err, err)
	}
	if want.count == 0 {
		want.count = 1
	}
	if len(ds) != want.count {
		t.Errorf("%d errors, want %d:\n%v", len(ds), want.count, ds)
	}
	d := ds[0]
	if d.Severity != SeverityError || d.Pos.String() != want.pos || d.Field != want.field ||
		!strings.Contains(d.Message, want.msg) || !strings.Contains(d.Hint, want.hint) {
		t.Errorf("got  %s\nwant %s: error: %s: ...%s... (hint: ...%s...)", d, want.pos, want.field, want.msg, want.hint)
	}
}

// TestBadGenerated covers inputs too large or too odd to commit.
func TestBadGenerated(t *testing.T) {
	deep := "---\nname: a\ndescription: deep\ntools: Read\nx: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n---\n"
	tests := []struct {
		name, file, content string
		want                badCase
	}{
		{"10MB frontmatter", "agents/a.md", "---\nname: a\ndescription: " + strings.Repeat("x", 10<<20) + "\n---\n",
			badCase{"agents/a.md:1:1", "", "larger than 1048576 bytes", "small Markdown files", 1}},
		{"300KB frontmatter", "agents/a.md", "---\nname: a\ndescription: " + strings.Repeat("x", 300<<10) + "\n---\n",
			badCase{"agents/a.md:2:1", "", "frontmatter is larger than 262144 bytes", "Markdown body", 1}},
		{"deep nesting", "agents/a.md", deep,
			badCase{"agents/a.md:5:", "", "YAML nesting deeper than 32 levels", "", 1}},
		{"CRLF and BOM keep positions", "agents/a.md", "\ufeff---\r\nname: a\r\ndescription: d\r\ntools: 9eed\r\n---\r\n",
			badCase{"agents/a.md:4:8", "tools[0]", `malformed tool name "9eed"`, "", 1}},
		{"merge key", "agents/a.md", "---\nname: a\ndescription: d\ntools: Read\n<<: {model: opus}\n---\n",
			badCase{"agents/a.md:5:1", "", "YAML merge key << is not allowed", "aliases", 1}},
		{"non-string key", "agents/a.md", "---\nname: a\ndescription: d\ntools: Read\n[x]: y\n---\n",
			badCase{"agents/a.md:5:1", "", "mapping keys must be plain strings", "", 1}},
		{"skill bad allowed-tools", "skills/s/SKILL.md", "---\nname: s\ndescription: d\nallowed-tools: Bash(git:*) 9eed\n---\n",
			badCase{"skills/s/SKILL.md:4:28", "allowed-tools[1]", `malformed tool name "9eed"`, "", 1}},
		{"opencode everything denied", ".opencode/agent/r.md", "---\ndescription: d\npermission: deny\n---\n",
			badCase{".opencode/agent/r.md:3:1", "permission", "resolves to no allowed tool", "", 1}},
		{"opencode invalid name and file name", ".opencode/agent/R b.md", "---\nname: Rev Bot\ndescription: d\npermission: {\"*\": deny, read: allow}\n---\n",
			badCase{".opencode/agent/R b.md:2:7", "name", `invalid agent name "Rev Bot", and the file's name "R b" is not valid either`, "letters, digits", 1}},
		{"symlinked agent", "agents/a.md", "",
			badCase{"agents/a.md:1:1", "", "symbolic link to ../../etc/passwd leaves the project", "copy", 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{tc.file: {Data: []byte(tc.content)}}
			if tc.content == "" {
				fsys = fstest.MapFS{tc.file: {Data: []byte("../../etc/passwd"), Mode: os.ModeSymlink}}
			}
			_, err := Load(fsys)
			want := tc.want
			var ds Diagnostics
			if errors.As(err, &ds) && strings.HasSuffix(want.pos, ":") && strings.HasPrefix(ds[0].Pos.String(), want.pos) {
				want.pos = ds[0].Pos.String()
			}
			checkBad(t, err, want)
		})
	}
}

// TestAllErrorsReported checks that Load does not stop at the first error:
// every bad file of a combined project is reported, sorted by position.
func TestAllErrorsReported(t *testing.T) {
	fsys := fstest.MapFS{}
	var names []string
	for name := range badCases {
		names = append(names, name)
	}
	sort.Strings(names)
	want := 0
	for _, name := range []string{"bad-name", "bad-port", "unknown-key", "wrong-type"} {
		data, err := os.ReadFile(filepath.Join("testdata", "bad", name, "agents", "a.md"))
		if err != nil {
			t.Fatal(err)
		}
		fsys["agents/"+name+".md"] = &fstest.MapFile{Data: []byte(strings.Replace(string(data), "name: a\n", "name: "+name+"\n", 1))}
		want++
	}
	_, err := Load(fsys)
	var ds Diagnostics
	if !errors.As(err, &ds) || len(ds) != want {
		t.Fatalf("want %d errors, got %v", want, err)
	}
	for i := 1; i < len(ds); i++ {
		if ds[i-1].Pos.File > ds[i].Pos.File {
			t.Errorf("diagnostics not sorted: %v", ds)
		}
	}
}

func TestFlowListColon(t *testing.T) {
	_, err := Load(fstest.MapFS{"agents/a.md": {Data: []byte("---\nname: a\ndescription: d\ntools: [Read, Bash(gh api: view)]\n---\n")}})
	checkBad(t, err, badCase{"agents/a.md:4:15", "tools[1]", "an unquoted ': ' inside a [...] list", `quote the element`, 1})
}

func TestSecondYAMLDocument(t *testing.T) {
	_, err := Load(fstest.MapFS{"agents/a.md": {Data: []byte("---\nname: a\ndescription: d\ntools: Read\n...\ntools: Bash\n---\n")}})
	checkBad(t, err, badCase{"agents/a.md:5:1", "", "more than one YAML document", "'...'", 1})
}

// TestFieldTypes checks the typed readers through real fields.
func TestFieldTypes(t *testing.T) {
	tests := []struct {
		file, fm, pos, field, msg string
	}{
		{"agents/a.md", "name: a\ndescription: 42\ntools: Read", "3:14", "description", `want a string, got a number "42"`},
		{"agents/a.md", "name: a\ndescription: \"  \"\ntools: Read", "3:14", "description", "must not be empty"},
		{"agents/a.md", "name: a\ndescription: d\ntools: Read\nbackground: maybe", "5:13", "background", `want true or false, got a string "maybe"`},
		{"agents/a.md", "name: a\ndescription: d\ntools: Read\ncolor: ~", "5:8", "color", "want a string, got a null"},
		{"agents/a.md", "name: a\ndescription: d\ntools: 7", "4:8", "tools", "want a comma-separated string or a list of tool rules, got a number"},
		{"agents/a.md", "name: a\ndescription: d\ntools: [Read, 7]", "4:15", "tools[1]", `want a string, got a number "7"`},
		{"agents/a.md", "name: a\ndescription: d\ntools: Read\nhooks: [x]", "5:8", "hooks", "want a mapping, got a list"},
		{"agents/a.md", "name: a\ndescription: d\ntools: Read\nskills: {a: b}", "5:9", "skills", "want a list of strings, got a mapping"},
		{".opencode/agent/r.md", "description: d\npermission: {\"*\": deny, read: allow}\ntemperature: hot", "4:14", "temperature", `want a number, got a string "hot"`},
		{".opencode/agent/r.md", "description: d\npermission: {\"*\": deny, read: allow}\ntop_p: 1.5", "4:8", "top_p", "want a number from 0 to 1, got 1.5"},
		{".opencode/agent/r.md", "description: d\npermission: {\"*\": deny, webfetch: {x: allow}}", "3:35", "permission.webfetch", "webfetch takes one action"},
		{".opencode/agent/r.md", "description: d\npermission: [read]", "3:13", "permission", "want a mapping, got a list"},
		{"skills/s/SKILL.md", "name: s\ndescription: d\nmetadata: {a: 1}", "4:15", "metadata.a", `want a string, got a number "1"`},
		{"skills/s/SKILL.md", "name: s\ndescription: d\nuser-invocable: 1", "4:17", "user-invocable", "want true or false"},
	}
	for _, tc := range tests {
		t.Run(tc.field, func(t *testing.T) {
			_, err := Load(fstest.MapFS{tc.file: {Data: []byte("---\n" + tc.fm + "\n---\n")}})
			checkBad(t, err, badCase{tc.file + ":" + tc.pos, tc.field, tc.msg, "", 1})
		})
	}
}

// TestDiagnosticsCap bounds the output of a file with many problems.
func TestDiagnosticsCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\nname: a\ndescription: d\ntools: Read\nsandbox:\n")
	for i := 0; i < 300; i++ {
		b.WriteString("  unknown" + strings.Repeat("x", i%5) + jsonInt(i) + ": 1\n")
	}
	b.WriteString("---\n")
	_, err := Load(fstest.MapFS{"agents/a.md": {Data: []byte(b.String())}})
	var ds Diagnostics
	if !errors.As(err, &ds) || len(ds) != maxDiagnosticsPerFile+1 || !strings.Contains(ds[len(ds)-1].Message, "too many problems") {
		t.Fatalf("got %d diagnostics", len(ds))
	}
}

// TestWarningsCap bounds the warnings of a file with many unknown keys,
// which still loads.
func TestWarningsCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\nname: a\ndescription: d\ntools: Read\n")
	for i := 0; i < 300; i++ {
		b.WriteString("extra" + strings.Repeat("x", i%5) + jsonInt(i) + ": 1\n")
	}
	b.WriteString("---\n")
	proj, err := Load(fstest.MapFS{"agents/a.md": {Data: []byte(b.String())}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(proj.Warnings); n != maxDiagnosticsPerFile+1 || !strings.Contains(proj.Warnings[n-1].Message, "too many warnings") {
		t.Fatalf("got %d warnings", n)
	}
}
