package agentdef

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// These tests cross-check the CUE input schemas (policycue/schema/input)
// against this package's frontmatter parser, which stays the authority for
// positions, hints and what a schema cannot see: the examples validate
// against both, and invalid frontmatter is rejected by both, for the same
// field. The key lists and enums need no comparison: they are generated
// from the schemas (zz_generated_input.go, kept current by
// internal/schemagen's tests).

// inputSchema is the compiled input package; tests share it read-only
// (a cue.Context is not safe for concurrent use, and these tests do not
// run in parallel).
var inputSchema = sync.OnceValues(func() (cue.Value, error) {
	return policycue.InputSchema(cuecontext.New())
})

// inputKind is the schema definition the Go parser would use for a file,
// decided as Load decides it.
func inputKind(c candidate, doc *document) policycue.InputKind {
	switch {
	case c.kind == kindSkill:
		return policycue.InputSkill
	case agentFormat(c.format, doc) == FormatOpenCode:
		return policycue.InputOpenCodeAgent
	}
	return policycue.InputClaudeAgent
}

// cueCheck validates the frontmatter of one Markdown file with the CUE
// schema, choosing the definition as Load would.
func cueCheck(t *testing.T, c candidate, data []byte) error {
	t.Helper()
	fm, _, err := splitFrontmatter(data)
	if err != nil {
		return err
	}
	// A document the Go parser refuses (an alias, a tag) has no root; its
	// kind then follows the file's location alone.
	doc := parseDocument(newDecoder(c.path), data)
	return policycue.ValidateInput(inputKind(c, doc), c.path, []byte(fm))
}

// TestInputSchemaAcceptsExamples: every definition the examples and the
// compile fixtures hold loads in Go and validates against its CUE
// definition.
func TestInputSchemaAcceptsExamples(t *testing.T) {
	seen := checkInputSchema(t, []string{"../testdata/triage", "../testdata/production", "../testdata/opencode", "../image/testdata/project",
		// Tools of every kind with mcpServers in both shapes (egress warnings).
		"../compile/testdata/egress"})
	for _, k := range []policycue.InputKind{policycue.InputClaudeAgent, policycue.InputOpenCodeAgent, policycue.InputSkill} {
		if seen[k] == 0 {
			t.Errorf("no example exercises %s", k.Definition())
		}
	}
}

// TestInputSchemaAcceptsRealWorld: public files with keys and names the
// runtimes tolerate (warnings in Go) load in Go and validate against their
// CUE definitions.
func TestInputSchemaAcceptsRealWorld(t *testing.T) {
	var dirs []string
	for _, name := range []string{"wshobson-teensy-expert", "wshobson-conductor-validator", "agentgraph-pdf", "rcore-security",
		"oc-darrenhinde-copywriter", "oc-devalexanderdaza-debug", "oc-lorenzorasmussen-build"} {
		dirs = append(dirs, realWorldDir(t, name))
	}
	seen := checkInputSchema(t, dirs)
	for _, k := range []policycue.InputKind{policycue.InputClaudeAgent, policycue.InputOpenCodeAgent, policycue.InputSkill} {
		if seen[k] == 0 {
			t.Errorf("no public file exercises %s", k.Definition())
		}
	}
}

// realWorldDir is the one-file project name of the public agents and skills
// in ../shared/fixtures (from-project/agentdef/testdata/realworld, sources
// in its README).
func realWorldDir(t testing.TB, name string) string {
	t.Helper()
	return fixture.Path(t, "from-project/agentdef/testdata/realworld/"+name)
}

// checkInputSchema loads each project of dirs with the Go parser and
// validates each definition against its CUE definition; it returns how
// many definitions of each kind it checked.
func checkInputSchema(t *testing.T, dirs []string) map[policycue.InputKind]int {
	t.Helper()
	seen := map[policycue.InputKind]int{}
	for _, dir := range dirs {
		fsys := os.DirFS(dir)
		if _, err := Load(fsys); err != nil {
			t.Fatalf("%s: Go parser rejects the example: %v", dir, err)
		}
		cands, _, _ := discover(fsys)
		if len(cands) == 0 {
			t.Fatalf("%s: no definitions found", dir)
		}
		for _, c := range cands {
			t.Run(path.Join(path.Base(dir), c.path), func(t *testing.T) {
				data, err := fs.ReadFile(fsys, c.path)
				if err != nil {
					t.Fatal(err)
				}
				if err := cueCheck(t, c, data); err != nil {
					t.Errorf("CUE rejects what Go accepts: %v", err)
				}
				seen[inputKind(c, parseDocument(newDecoder(c.path), data))]++
			})
		}
	}
	return seen
}

// goCheck loads one file with the Go parser, next to a skill named s that
// agents may preload, and returns the error diagnostics.
func goCheck(file, frontmatter string) Diagnostics {
	fsys := fstest.MapFS{file: {Data: []byte("---\n" + frontmatter + "---\nbody\n")}}
	if file != skillFile {
		fsys[skillFile] = &fstest.MapFile{Data: []byte("---\n" + skillBase + "---\n")}
	}
	_, err := Load(fsys)
	var ds Diagnostics
	if err != nil && !errors.As(err, &ds) {
		return Diagnostics{{Message: err.Error()}}
	}
	return ds
}

// goFieldRE splits Go's field paths (sandbox.endpoints[0].host,
// permission.bash["gh *"]) into labels.
var goFieldRE = regexp.MustCompile(`([^.\[\]]+)|\[(\d+)\]|\["([^"]*)"\]`)

// cuePath renders a Go field path as CUE prints it in errors.
func cuePath(goField string) string {
	var sels []cue.Selector
	for _, m := range goFieldRE.FindAllStringSubmatch(goField, -1) {
		switch {
		case m[1] != "":
			sels = append(sels, cue.Str(m[1]))
		case m[2] != "":
			i, _ := strconv.Atoi(m[2])
			sels = append(sels, cue.Index(i))
		default:
			sels = append(sels, cue.Str(m[3]))
		}
	}
	// CUE's error messages print list indexes as labels: endpoints.0.
	return cueIndexRE.ReplaceAllString(cue.MakePath(sels...).String(), ".$1")
}

var cueIndexRE = regexp.MustCompile(`\[(\d+)\]`)

const (
	claudeFile   = "agents/a.md"
	openCodeFile = ".opencode/agent/r.md"
	skillFile    = "skills/s/SKILL.md"
	claudeBase   = "name: a\ndescription: d\ntools: Read\n"
	openCodeBase = "description: d\n"
	skillBase    = "name: s\ndescription: d\n"
)

// candidateFor is the discovery result for one of the files above.
func candidateFor(file string) candidate {
	switch file {
	case claudeFile:
		return candidate{path: file, kind: kindAgent, format: formatAuto}
	case openCodeFile:
		return candidate{path: file, kind: kindAgent, format: FormatOpenCode}
	}
	return candidate{path: file, kind: kindSkill}
}

// manyRules is an OpenCode permission of n+1 rules.
func manyRules(n int) string {
	var b strings.Builder
	b.WriteString(openCodeBase + "permission:\n  \"*\": deny\n  bash:\n")
	for i := range n {
		b.WriteString("    \"cmd" + strconv.Itoa(i) + " *\": allow\n")
	}
	return b.String()
}

// TestInputSchemaRejectsLikeGo: each snippet is rejected by the Go parser
// with an error on field, and by the CUE schema with an error on the same
// path (cue, when CUE reports it on an enclosing path).
func TestInputSchemaRejectsLikeGo(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	hash := strings.Repeat("a", 64)
	tests := []struct {
		name, file, fm string
		field          string // the Go diagnostic's field
		cue            string // the CUE error's path; "" = cuePath(field)
	}{
		// Claude Code agents.
		{"wrong enum permissionMode", claudeFile, claudeBase + "permissionMode: yolo\n", "permissionMode", ""},
		{"mcpServers item a list", claudeFile, claudeBase + "mcpServers: [[github]]\n", "mcpServers[0]", "mcpServers"},
		{"mcpServers item a number", claudeFile, claudeBase + "mcpServers: [7]\n", "mcpServers[0]", "mcpServers"},
		{"mcpServers blank name", claudeFile, claudeBase + "mcpServers: [\" \"]\n", "mcpServers[0]", "mcpServers"},
		{"mcpServers inline not a mapping", claudeFile, claudeBase + "mcpServers: [{github: https://x}]\n", "mcpServers[0].github", "mcpServers"},
		{"mcpServers map value a string", claudeFile, claudeBase + "mcpServers: {github: https://x}\n", "mcpServers.github", "mcpServers"},
		{"mcpServers a string", claudeFile, claudeBase + "mcpServers: github\n", "mcpServers", ""},
		{"opencode key in claude agent", claudeFile, claudeBase + "temperature: 1\n", "temperature", ""},
		{"bad name leading hyphen", claudeFile, "name: -a\ndescription: d\ntools: Read\n", "name", ""},
		{"bad name with a blank", claudeFile, "name: Python DevOps\ndescription: d\ntools: Read\n", "name", ""},
		{"bad name with a slash", claudeFile, "name: a/b\ndescription: d\ntools: Read\n", "name", ""},
		{"name too long", claudeFile, "name: a" + strings.Repeat("b", 64) + "\ndescription: d\ntools: Read\n", "name", ""},
		{"name is a number", claudeFile, "name: 7\ndescription: d\ntools: Read\n", "name", ""},
		{"missing name", claudeFile, "description: d\ntools: Read\n", "name", ""},
		{"missing description", claudeFile, "name: a\ntools: Read\n", "description", ""},
		{"blank description", claudeFile, "name: a\ndescription: \"  \"\ntools: Read\n", "description", ""},
		{"null description", claudeFile, "name: a\ndescription:\ntools: Read\n", "description", ""},
		{"maxTurns string", claudeFile, claudeBase + "maxTurns: \"3\"\n", "maxTurns", ""},
		{"maxTurns zero", claudeFile, claudeBase + "maxTurns: 0\n", "maxTurns", ""},
		{"maxTurns float", claudeFile, claudeBase + "maxTurns: 2.5\n", "maxTurns", ""},
		{"background string", claudeFile, claudeBase + "background: \"true\"\n", "background", ""},
		{"bad model", claudeFile, claudeBase + "model: \"-x\"\n", "model", ""},
		{"model with blank", claudeFile, claudeBase + "model: claude sonnet\n", "model", ""},
		{"bad effort", claudeFile, claudeBase + "effort: extreme\n", "effort", ""},
		{"bad isolation", claudeFile, claudeBase + "isolation: container\n", "isolation", ""},
		{"bad memory", claudeFile, claudeBase + "memory: global\n", "memory", ""},
		{"bad skill name in string", claudeFile, claudeBase + "skills: Bad_Name\n", "skills", ""},
		{"skill listed twice", claudeFile, claudeBase + "skills: [x, x]\n", "skills[1]", "skills"},
		{"skill listed twice in string", claudeFile, claudeBase + "skills: x, x\n", "skills", "_skillsUnique"},
		{"tools of blank elements", claudeFile, "name: a\ndescription: d\ntools: [\"\", \" \"]\n", "tools", ""},
		{"empty tools string", claudeFile, "name: a\ndescription: d\ntools: \"\"\n", "tools", ""},
		{"tools number", claudeFile, "name: a\ndescription: d\ntools: 42\n", "tools", ""},
		{"tools mapping", claudeFile, "name: a\ndescription: d\ntools: {Read: true}\n", "tools", ""},
		{"disallowedTools number", claudeFile, claudeBase + "disallowedTools: 1\n", "disallowedTools", ""},
		{"hooks list", claudeFile, claudeBase + "hooks: []\n", "hooks", ""},
		{"mcpServers string", claudeFile, claudeBase + "mcpServers: github\n", "mcpServers", ""},
		{"blank color", claudeFile, claudeBase + "color: \"\"\n", "color", ""},
		{"initialPrompt list", claudeFile, claudeBase + "initialPrompt: [a]\n", "initialPrompt", ""},

		// The sandbox block, shared by agents and skills.
		{"sandbox absolute path", claudeFile, claudeBase + "sandbox: /etc/p.yaml\n", "sandbox", ""},
		{"sandbox path with placeholder", claudeFile, claudeBase + "sandbox: \"p/{{OWNER}}.yaml\"\n", "sandbox", ""},
		{"sandbox URL", claudeFile, claudeBase + "sandbox: https://x.example.com/p.yaml\n", "sandbox", ""},
		{"sandbox blank path", claudeFile, claudeBase + "sandbox: \" \"\n", "sandbox", ""},
		{"sandbox number", claudeFile, claudeBase + "sandbox: 3\n", "sandbox", ""},
		{"sandbox list", claudeFile, claudeBase + "sandbox: [a]\n", "sandbox", ""},
		{"bad tier", claudeFile, claudeBase + "sandbox: {tier: max}\n", "sandbox.tier", ""},
		{"unknown sandbox key", claudeFile, claudeBase + "sandbox: {tiers: full}\n", "sandbox.tiers", ""},
		{"bad provider", claudeFile, claudeBase + "sandbox: {provider: x_y}\n", "sandbox.provider", ""},
		{"bad profile", claudeFile, claudeBase + "sandbox: {profiles: [Forge]}\n", "sandbox.profiles[0]", ""},
		{"profiles string", claudeFile, claudeBase + "sandbox: {profiles: forge}\n", "sandbox.profiles", ""},
		{"bad provider profile id", claudeFile, claudeBase + "sandbox: {providers: [GitHub]}\n", "sandbox.providers[0]", ""},
		{"provider profile path", claudeFile, claudeBase + "sandbox: {providers: [profiles/github-ro.yaml]}\n", "sandbox.providers[0]", ""},
		{"providers string", claudeFile, claudeBase + "sandbox: {providers: github}\n", "sandbox.providers", ""},
		{"provider mapping without profile", claudeFile, claudeBase + "sandbox: {providers: [{name: gh}]}\n", "sandbox.providers[0].profile", ""},
		{"provider unknown key", claudeFile, claudeBase + "sandbox: {providers: [{profile: github, credential: [X]}]}\n", "sandbox.providers[0].credential", ""},
		{"provider bad credential", claudeFile, claudeBase + "sandbox: {providers: [{profile: github, credentials: [GH-TOKEN]}]}\n", "sandbox.providers[0].credentials[0]", ""},
		{"provider bad name", claudeFile, claudeBase + "sandbox: {providers: [{profile: github, name: GH}]}\n", "sandbox.providers[0].name", ""},
		{"endpoints mapping", claudeFile, claudeBase + "sandbox: {endpoints: {host: a.example.com}}\n", "sandbox.endpoints", ""},
		{"endpoint missing host", claudeFile, claudeBase + "sandbox: {endpoints: [{port: 443}]}\n", "sandbox.endpoints[0].host", ""},
		{"unknown endpoint key", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, hosts: x}]}\n", "sandbox.endpoints[0].hosts", ""},
		{"upper-case host", claudeFile, claudeBase + "sandbox: {endpoints: [{host: API.example.com}]}\n", "sandbox.endpoints[0].host", ""},
		{"host with port", claudeFile, claudeBase + "sandbox: {endpoints: [{host: \"a.example.com:443\"}]}\n", "sandbox.endpoints[0].host", ""},
		{"host with trailing dot", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com.}]}\n", "sandbox.endpoints[0].host", ""},
		{"wildcard over a TLD", claudeFile, claudeBase + "sandbox: {endpoints: [{host: \"*.com\"}]}\n", "sandbox.endpoints[0].host", ""},
		{"wildcard-only host", claudeFile, claudeBase + "sandbox: {endpoints: [{host: \"*\"}]}\n", "sandbox.endpoints[0].host", ""},
		{"host placeholder with text", claudeFile, claudeBase + "sandbox: {endpoints: [{host: \"api.{{FORGE_HOST}}\"}]}\n", "sandbox.endpoints[0].host", ""},
		{"path placeholder in host", claudeFile, claudeBase + "sandbox: {endpoints: [{host: \"{{OWNER}}\"}]}\n", "sandbox.endpoints[0].host", ""},
		{"port out of range", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, port: 70000}]}\n", "sandbox.endpoints[0].port", ""},
		{"port string", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, port: \"443\"}]}\n", "sandbox.endpoints[0].port", ""},
		{"bad protocol", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, protocol: http}]}\n", "sandbox.endpoints[0].protocol", ""},
		{"bad access", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, access: write}]}\n", "sandbox.endpoints[0].access", ""},
		{"access and rules", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, access: full, rules: [\"GET /\"]}]}\n", "sandbox.endpoints[0].rules", ""},
		{"empty rules", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, rules: []}]}\n", "sandbox.endpoints[0].rules", ""},
		{"lower-case method", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, rules: [\"get /x\"]}]}\n", "sandbox.endpoints[0].rules[0].method", "sandbox.endpoints.0.rules.0"},
		{"relative rule path", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, rules: [\"GET x/y\"]}]}\n", "sandbox.endpoints[0].rules[0].path", "sandbox.endpoints.0.rules.0"},
		{"query in rule string", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, rules: [\"GET /x?q=1\"]}]}\n", "sandbox.endpoints[0].rules[0]", ""},
		{"dot-dot in rule path", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, rules: [\"GET /a/../b\"]}]}\n", "sandbox.endpoints[0].rules[0].path", "sandbox.endpoints.0.rules.0"},
		{"unknown placeholder in rule", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, rules: [\"GET /{{BRANCH}}\"]}]}\n", "sandbox.endpoints[0].rules[0].path", "sandbox.endpoints.0.rules.0"},
		{"host placeholder in rule path", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, rules: [\"GET /{{HOST_IP}}\"]}]}\n", "sandbox.endpoints[0].rules[0].path", "sandbox.endpoints.0.rules.0"},
		{"rule without path", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, rules: [{method: GET}]}]}\n", "sandbox.endpoints[0].rules[0]", "sandbox.endpoints.0.rules.0.path"},
		{"unknown rule key", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, rules: [{method: GET, path: /, body: x}]}]}\n", "sandbox.endpoints[0].rules[0].body", ""},
		{"query value number", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, rules: [{method: GET, path: /, query: {q: 1}}]}]}\n", "sandbox.endpoints[0].rules[0].query.q", "sandbox.endpoints.0.rules.0.query"},
		{"rule number", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, rules: [1]}]}\n", "sandbox.endpoints[0].rules[0]", ""},
		{"bad allowed_ips", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, allowed_ips: [example]}]}\n", "sandbox.endpoints[0].allowed_ips[0]", ""},
		{"wrong placeholder in allowed_ips", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, allowed_ips: [\"{{FORGE_HOST}}\"]}]}\n", "sandbox.endpoints[0].allowed_ips[0]", ""},
		{"placeholder in binary", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, binaries: [\"/usr/bin/{{OWNER}}\"]}]}\n", "sandbox.endpoints[0].binaries[0]", ""},
		{"relative binary", claudeFile, claudeBase + "sandbox: {endpoints: [{host: a.example.com, binaries: [gh]}]}\n", "sandbox.endpoints[0].binaries[0]", ""},
		{"writable root", claudeFile, claudeBase + "sandbox: {filesystem: {read_write: [/]}}\n", "sandbox.filesystem.read_write", "sandbox.filesystem.read_write.0"},
		{"relative read_only path", claudeFile, claudeBase + "sandbox: {filesystem: {read_only: [etc]}}\n", "sandbox.filesystem.read_only[0]", ""},
		{"unknown filesystem key", claudeFile, claudeBase + "sandbox: {filesystem: {write: [/tmp]}}\n", "sandbox.filesystem.write", ""},
		{"dot step in output", claudeFile, claudeBase + "sandbox: {outputs: [/a/./b]}\n", "sandbox.outputs[0]", ""},
		{"control character in output", claudeFile, claudeBase + "sandbox: {outputs: [\"/a\\tb\"]}\n", "sandbox.outputs[0]", ""},

		// OpenCode agents.
		{"opencode name a number", openCodeFile, openCodeBase + "name: 7\n", "name", ""},
		{"opencode description a number", openCodeFile, "description: 7\n", "description", ""},
		{"opencode bad mode", openCodeFile, openCodeBase + "mode: boss\n", "mode", ""},
		{"opencode model without provider", openCodeFile, openCodeBase + "model: sonnet\n", "model", ""},
		{"opencode model with empty id", openCodeFile, openCodeBase + "model: anthropic/\n", "model", ""},
		{"temperature too high", openCodeFile, openCodeBase + "temperature: 3\n", "temperature", ""},
		{"top_p string", openCodeFile, openCodeBase + "top_p: \"0.5\"\n", "top_p", ""},
		{"steps float", openCodeFile, openCodeBase + "steps: 1.5\n", "steps", ""},
		{"maxSteps zero", openCodeFile, openCodeBase + "maxSteps: 0\n", "maxSteps", ""},
		{"bad permission action", openCodeFile, openCodeBase + "permission: maybe\n", "permission", ""},
		{"bad action in map", openCodeFile, openCodeBase + "permission: {\"*\": deny, read: yes}\n", "permission.read", ""},
		{"unknown permission bad action", openCodeFile, openCodeBase + "permission: {\"*\": deny, read: allow, github_x: yes}\n", "permission.github_x", ""},
		{"pattern map on a single-action permission", openCodeFile, openCodeBase + "permission: {\"*\": deny, webfetch: {\"*\": allow}}\n", "permission.webfetch", ""},
		{"blank pattern", openCodeFile, openCodeBase + "permission: {\"*\": deny, bash: {\" \": allow}}\n", "permission.bash[\" \"]", "permission.bash"},
		{"pattern too long", openCodeFile, openCodeBase + "permission: {\"*\": deny, bash: {\"" + long(201) + "\": allow}}\n", "permission.bash", ""},
		{"bad action for pattern", openCodeFile, openCodeBase + "permission: {\"*\": deny, bash: {\"gh *\": always}}\n", "permission.bash[\"gh *\"]", ""},
		{"too many permission rules", openCodeFile, manyRules(maxPermissionRules), "permission", "permission._rules"},
		{"permission list", openCodeFile, openCodeBase + "permission: [read]\n", "permission", ""},
		{"tool switch not a boolean", openCodeFile, openCodeBase + "permission: {\"*\": deny, read: allow}\ntools: {read: \"yes\"}\n", "tools.read", ""},
		{"hidden number", openCodeFile, openCodeBase + "hidden: 1\n", "hidden", ""},
		{"options list", openCodeFile, openCodeBase + "options: []\n", "options", ""},
		{"blank variant", openCodeFile, openCodeBase + "variant: \"\"\n", "variant", ""},
		{"opencode bad sandbox", openCodeFile, openCodeBase + "sandbox: {tier: all}\n", "sandbox.tier", ""},

		// Skills.
		{"skill empty name", skillFile, "name: \"\"\ndescription: d\n", "name", ""},
		{"skill name with a slash", skillFile, "name: a/b\ndescription: d\n", "name", ""},
		{"skill name with a control character", skillFile, "name: \"a\\tb\"\ndescription: d\n", "name", ""},
		{"skill missing description", skillFile, "name: s\n", "description", ""},
		{"compatibility too long", skillFile, skillBase + "compatibility: " + long(501) + "\n", "compatibility", ""},
		{"metadata number value", skillFile, skillBase + "metadata: {a: 1}\n", "metadata.a", ""},
		{"metadata list", skillFile, skillBase + "metadata: [a]\n", "metadata", ""},
		{"blank license", skillFile, skillBase + "license: \"\"\n", "license", ""},
		{"boolean as string", skillFile, skillBase + "disable-model-invocation: \"true\"\n", "disable-model-invocation", ""},
		{"user-invocable number", skillFile, skillBase + "user-invocable: 1\n", "user-invocable", ""},
		{"paths number", skillFile, skillBase + "paths: 3\n", "paths", ""},
		{"bad skill effort", skillFile, skillBase + "effort: big\n", "effort", ""},
		{"allowed-tools mapping", skillFile, skillBase + "allowed-tools: {a: b}\n", "allowed-tools", ""},
		{"blank when_to_use", skillFile, skillBase + "when_to_use: \" \"\n", "when_to_use", ""},
		{"unpinned dependency URL", skillFile, skillBase + "dependencies: [\"https://x.example.com/s\"]\n", "dependencies[0]", ""},
		{"dependency URL with credentials", skillFile, skillBase + "dependencies: [\"https://u:p@x.example.com/s#sha256=" + hash + "\"]\n", "dependencies[0]", ""},
		{"http dependency", skillFile, skillBase + "dependencies: [\"http://x.example.com/s#sha256=" + hash + "\"]\n", "dependencies[0]", ""},
		{"absolute dependency", skillFile, skillBase + "dependencies: [/skills/x]\n", "dependencies[0]", ""},
		{"bad dependency name", skillFile, skillBase + "dependencies: [Other]\n", "dependencies[0]", ""},
		{"dependencies string", skillFile, skillBase + "dependencies: other\n", "dependencies", ""},
		{"absolute policy", skillFile, skillBase + "policy: /p.yaml\n", "policy", ""},
		{"policy with backslash", skillFile, skillBase + "policy: 'p\\x.yaml'\n", "policy", ""},
		{"skill bad sandbox endpoint", skillFile, skillBase + "sandbox: {endpoints: [{host: a.example.com, port: 0}]}\n", "sandbox.endpoints[0].port", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := goCheck(tc.file, tc.fm)
			var fields []string
			found := false
			for _, d := range ds {
				fields = append(fields, d.Field)
				found = found || d.Field == tc.field
			}
			if !found {
				t.Errorf("Go: want an error on %q, got %v: %v", tc.field, fields, ds)
			}
			want := tc.cue
			if want == "" {
				want = cuePath(tc.field)
			}
			err := cueCheck(t, candidateFor(tc.file), []byte("---\n"+tc.fm+"---\n"))
			if err == nil {
				t.Fatalf("CUE accepts what Go rejects")
			}
			if !strings.Contains(err.Error(), "\n"+want+":") && !strings.Contains(err.Error(), " "+want+":") {
				t.Errorf("CUE: want an error on %s, got:\n%v", want, err)
			}
		})
	}
}

// TestInputSchemaAcceptsLikeGo: valid frontmatter, exercising every field
// and the less common forms, is accepted by both.
func TestInputSchemaAcceptsLikeGo(t *testing.T) {
	hash := strings.Repeat("0f", 32)
	tests := []struct{ name, file, fm string }{
		{"claude every field", claudeFile, "name: a\ndescription: d\ntools: [\"Read, Grep\", \"Bash(gh issue view *)\"]\ndisallowedTools: WebFetch\n" +
			"model: claude-sonnet-4-6@default\npermissionMode: dontAsk\nskills: s\nmcpServers: {github: {command: gh}}\nhooks: {Stop: []}\n" +
			"memory: local\nmaxTurns: 40\nbackground: true\neffort: xhigh\nisolation: worktree\ncolor: cyan\ninitialPrompt: start\nsandbox: policies/a.yaml\n"},
		{"claude model alias with context size", claudeFile, claudeBase + "model: sonnet[1m]\n"},
		{"claude provider model id", claudeFile, claudeBase + "model: bedrock/anthropic.claude-sonnet-4\n"},
		{"claude tools with a blank element", claudeFile, "name: a\ndescription: d\ntools: [\"\", Read]\n"},
		{"claude skills list", claudeFile, claudeBase + "skills: [s]\n"},
		{"claude tools omitted", claudeFile, "name: a\ndescription: d\n"},
		{"claude empty initialPrompt", claudeFile, claudeBase + "initialPrompt: \"\"\n"},
		{"sandbox providers", claudeFile, claudeBase + "sandbox:\n  providers: [github, fullsend-github-ro]\n"},
		{"sandbox providers mapping", claudeFile, claudeBase + "sandbox:\n  providers:\n    - {profile: fullsend-github-ro, name: github-ro, credentials: [GH_TOKEN]}\n    - {profile: pypi}\n"},
		{"sandbox block", claudeFile, claudeBase + "sandbox:\n  tier: network\n  provider: github\n  profiles: [forge-read]\n" +
			"  endpoints:\n" +
			"    - host: api.github.com\n      rules:\n        - GET /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ ISSUE_NUMBER }}/**\n        - {method: GET, path: /search/issues, query: {q: \"repo:{{OWNER}}/*\"}}\n" +
			"      binaries: [/usr/bin/gh]\n" +
			"    - host: \"{{HOST_IP}}\"\n      port: 8080\n      protocol: websocket\n      access: read-write\n      allowed_ips: [\"{{HOST_IP}}\", 10.0.0.0/8, \"fd00::1\"]\n" +
			"    - host: \"**.svc.example.com\"\n      protocol: tcp\n" +
			"    - host: 192.0.2.7\n" +
			"    - host: \"{{FORGE_HOST}}\"\n      access: read-only\n" +
			"  filesystem: {read_only: [/etc/ssl], read_write: [\"/sandbox/{{REPO_NAME}}\"]}\n  outputs: [/sandbox/out]\n"},
		{"sandbox fragment climbing to the root", claudeFile, claudeBase + "sandbox: ../policies/a.yaml\n"},
		{"opencode every field", openCodeFile, "description: d\nmode: all\nmodel: anthropic/claude-sonnet-4-5\nprompt: \"{file:./p.md}\"\ntemperature: 0.2\ntop_p: 1\nsteps: 30\nmaxSteps: 30\n" +
			"tools: {write: false, github_create_issue: false, read: true}\n" +
			"permission:\n  \"*\": deny\n  read: allow\n  bash: {\"*\": deny, \"gh issue view *\": allow, \"rm *\": ask}\n  webfetch: deny\n  github_*: deny\n  external_directory: {\"/tmp/*\": allow}\n" +
			"disable: false\nhidden: true\ncolor: \"#ff0000\"\nvariant: high\noptions: {reasoningEffort: high}\nsandbox: {tier: read-only}\n"},
		{"opencode single action", openCodeFile, openCodeBase + "permission: allow\n"},
		{"opencode with the most permission rules", openCodeFile, manyRules(maxPermissionRules - 1)},
		{"opencode integer temperature", openCodeFile, openCodeBase + "temperature: 1\n"},
		{"skill every field", skillFile, "name: s\ndescription: d\nlicense: Apache-2.0\ncompatibility: \"\"\nmetadata: {author: me, version: \"1.0\"}\n" +
			"allowed-tools: Read Grep\nwhen_to_use: always\nargument-hint: \"[issue]\"\ndisable-model-invocation: true\nuser-invocable: false\n" +
			"disallowed-tools: [WebFetch]\nmodel: opus\neffort: low\ncontext: fork\nagent: Explore\nhooks: {}\npaths: \"**/*.go\"\nshell: bash\n" +
			"dependencies: [other, ../other/SKILL.md, \"https://skills.example.com/x/SKILL.md#sha256=" + hash + "\"]\npolicy: policy.yaml\nsandbox: {tier: full}\n"},
		{"skill paths list", skillFile, skillBase + "paths: [\"*.go\", \"*.md\"]\n"},
		{"skill name of 64 characters", "skills/" + strings.Repeat("s", 64) + "/SKILL.md", "name: " + strings.Repeat("s", 64) + "\ndescription: d\n"},
		{"skill description of 1024 characters", skillFile, "name: s\ndescription: " + strings.Repeat("é", 1024) + "\n"},
		{"skill compatibility of 500 characters", skillFile, skillBase + "compatibility: " + strings.Repeat("x", 500) + "\n"},
		// Skill-spec violations the runtimes tolerate: warnings in Go.
		{"skill upper-case name", skillFile, "name: S\ndescription: d\n"},
		{"skill name with blanks", skillFile, "name: PDF Processing\ndescription: d\n"},
		{"skill double hyphen", skillFile, "name: a--b\ndescription: d\n"},
		{"skill trailing hyphen", skillFile, "name: s-\ndescription: d\n"},
		{"skill name too long", skillFile, "name: " + strings.Repeat("s", 65) + "\ndescription: d\n"},
		{"skill description too long", skillFile, "name: s\ndescription: " + strings.Repeat("x", 1025) + "\n"},
		{"skill description too long in runes", skillFile, "name: s\ndescription: " + strings.Repeat("é", 1025) + "\n"},
		{"skill without a name (the directory names it)", skillFile, "description: d\n"},
		{"skill metadata list and mapping values", skillFile, skillBase + "metadata: {keywords: [a, b], openclaw: {emoji: x}, author: me}\n"},
		{"claude no tools", claudeFile, "name: a\ndescription: d\ntools: []\n"},
		{"claude name beyond the documented syntax", claudeFile, "name: dotnet-framework-4.8-Expert_x\ndescription: d\ntools: Read\n"},
		{"claude unknown tool", claudeFile, "name: a\ndescription: d\ntools: Frobnicate, Read\n"},
		{"claude only unknown tools", claudeFile, "name: a\ndescription: d\ntools: [SendMessages]\n"},
		{"claude extra metadata keys", claudeFile, claudeBase + "category: quality\nauthor: me\nversion: 1.0\ntags: [a, b]\nid: x\ntype: agent\n"},
		{"opencode extra key", openCodeFile, openCodeBase + "category: x\n"},
		// OpenCode takes a frontmatter name over the file's, makes description
		// optional and accepts any permission or tools key (anomalyco/opencode
		// packages/opencode/src/config/agent.ts, packages/core/src/v1/config/).
		{"opencode name", openCodeFile, "name: r\n" + openCodeBase},
		{"opencode name not a fullsend name", openCodeFile, "name: OpenReviewer\n" + openCodeBase},
		{"opencode missing description", openCodeFile, "mode: subagent\n"},
		{"opencode hidden_from_cycle", openCodeFile, openCodeBase + "hidden_from_cycle: true\n"},
		{"opencode unknown permission allowed", openCodeFile, openCodeBase + "permission: {\"*\": deny, read: allow, github_x: allow, memory: {\"*\": allow}}\n"},
		{"opencode unknown tool switched on", openCodeFile, openCodeBase + "permission: {\"*\": deny, read: allow}\ntools: {github_x: true, \"mcp_*\": true}\n"},
		{"skill unknown key", skillFile, skillBase + "owner: me\nversion: 1.0\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if ds := goCheck(tc.file, tc.fm); len(ds) > 0 {
				t.Fatalf("Go rejects the snippet (fix the test): %v", ds)
			}
			c := candidateFor(tc.file)
			if strings.HasPrefix(tc.file, "skills/") {
				c = candidate{path: tc.file, kind: kindSkill}
			}
			if err := cueCheck(t, c, []byte("---\n"+tc.fm+"---\n")); err != nil {
				t.Errorf("CUE rejects what Go accepts: %v", err)
			}
		})
	}
}

// TestInputSchemaGoOnly pins the boundary: these snippets are rejected by
// the Go parser and loader only, because the check needs the tool-rule
// grammar, other files, the file's location, or evaluation order. If the
// schema starts rejecting one, move it to TestInputSchemaRejectsLikeGo.
func TestInputSchemaGoOnly(t *testing.T) {
	tests := []struct{ name, file, fm, why string }{
		{"unbalanced parentheses", claudeFile, "name: a\ndescription: d\ntools: Bash(gh *\n", "tool-rule grammar"},
		{"misspelt key", claudeFile, claudeBase + "colour: red\n", "edit distance to the known keys"},
		{"misspelt tools", claudeFile, "name: a\ndescription: d\ntool: Read\n", "edit distance to the known keys"},
		{"misspelt skill key", skillFile, skillBase + "allowed_tools: Read\n", "edit distance to the known keys"},
		{"misspelt permission", openCodeFile, openCodeBase + "permissions: {\"*\": deny}\n", "edit distance to the known keys"},
		{"tools cancelled by disallowedTools", claudeFile, "name: a\ndescription: d\ntools: Read\ndisallowedTools: Read\n", "evaluation"},
		{"fragment leaving the project", claudeFile, claudeBase + "sandbox: ../../p.yaml\n", "file location"},
		{"dependency leaving the project", skillFile, skillBase + "dependencies: [../../../x/SKILL.md]\n", "file location"},
		{"permission allows nothing", openCodeFile, openCodeBase + "permission: {\"*\": deny}\n", "evaluation"},
		{"wildcard key allowing known permissions", openCodeFile, openCodeBase + "permission: {\"*\": deny, read: allow, \"web*\": allow}\n", "wildcard matching against the known permissions"},
		{"opencode name and file name invalid", ".opencode/agent/R b.md", "name: Rev Bot\n" + openCodeBase + "permission: allow\n", "file location"},
		{"provider named twice", claudeFile, claudeBase + "sandbox: {providers: [github, github]}\n", "uniqueness (the CUE list type does not say unique)"},
		{"YAML anchor and alias", claudeFile, "name: a\ndescription: &d d\ncolor: *d\ntools: Read\n", "YAML safety (the CUE decoder expands aliases)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if ds := goCheck(tc.file, tc.fm); len(ds) == 0 {
				t.Errorf("Go accepts the snippet; want a rejection (%s)", tc.why)
			}
			if err := cueCheck(t, candidateFor(tc.file), []byte("---\n"+tc.fm+"---\n")); err != nil {
				t.Errorf("CUE now rejects it (%s); move the case to TestInputSchemaRejectsLikeGo: %v", tc.why, err)
			}
		})
	}
}

// cueCLI finds the cue CLI (.ci/install.d/60-cue.sh installs it).
func cueCLI(t *testing.T) string {
	t.Helper()
	return testtool.Find(t, "cue", ".ci/install.d/60-cue.sh")
}

// TestInputSchemaCUEVetExamples runs the documented `cue vet` command on
// the frontmatter of every example definition: the schema works standalone.
func TestInputSchemaCUEVetExamples(t *testing.T) {
	cueBin := cueCLI(t)
	schema, err := filepath.Glob(filepath.Join("..", "policycue", "schema", "input", "*.cue"))
	if err != nil || len(schema) == 0 {
		t.Fatalf("schema files: %v %v", schema, err)
	}
	tmp := t.TempDir()
	byKind := map[policycue.InputKind][]string{}
	for _, dir := range []string{"../testdata/triage", "../testdata/production", "../testdata/opencode", "../image/testdata/project"} {
		fsys := os.DirFS(dir)
		cands, _, _ := discover(fsys)
		for _, c := range cands {
			data, err := fs.ReadFile(fsys, c.path)
			if err != nil {
				t.Fatal(err)
			}
			fm, _, err := splitFrontmatter(data)
			if err != nil {
				t.Fatalf("%s/%s: %v", dir, c.path, err)
			}
			kind := inputKind(c, parseDocument(newDecoder(c.path), data))
			out := filepath.Join(tmp, strconv.Itoa(len(byKind[kind]))+"-"+strings.NewReplacer("/", "_", ".", "_").Replace(path.Join(path.Base(dir), c.path))+".yaml")
			if err := os.WriteFile(out, []byte(fm), 0o600); err != nil {
				t.Fatal(err)
			}
			byKind[kind] = append(byKind[kind], out)
		}
	}
	// The one file `fullsend policy schema input` prints vets them too.
	merged, err := policycue.InputSchemaCUE()
	if err != nil {
		t.Fatal(err)
	}
	printed := filepath.Join(tmp, "input.cue")
	if err := os.WriteFile(printed, merged, 0o600); err != nil {
		t.Fatal(err)
	}
	for kind, files := range byKind {
		t.Run(string(kind), func(t *testing.T) {
			for _, schema := range [][]string{schema, {printed}} {
				args := append(append(append([]string{"vet", "-c"}, schema...), files...), "-d", kind.Definition())
				if out, err := exec.Command(cueBin, args...).CombinedOutput(); err != nil {
					t.Errorf("cue vet %s (%s) on %d files: %v\n%s", kind.Definition(), filepath.Base(schema[0]), len(files), err, out)
				}
			}
		})
	}
	// The command fails on an invalid document, so the runs above can fail.
	bad := filepath.Join(tmp, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: a\ndescription: d\npermissionMode: yolo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"vet", "-c"}, schema...), bad, "-d", "#ClaudeAgent")
	if out, err := exec.Command(cueBin, args...).CombinedOutput(); err == nil {
		t.Errorf("cue vet accepts an invalid permissionMode:\n%s", out)
	}
}
