package policycue

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The cross-check against the Go frontmatter parser lives in package
// agentdef (agentdef/input_schema_test.go), which can read its key lists.
// These tests cover the schema package and the cue CLI on its own.

func TestInputSchemaDefinitions(t *testing.T) {
	v, err := NewInputValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range InputKinds() {
		if _, err := v.Definition(k); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	if _, err := v.Definition("Policy"); !errors.Is(err, ErrUnknownInputKind) {
		t.Errorf("Definition(Policy) = %v, want ErrUnknownInputKind", err)
	}
	if err := v.Validate("Nope", "x.yaml", []byte("a: 1\n")); !errors.Is(err, ErrUnknownInputKind) {
		t.Errorf("Validate(Nope) = %v, want ErrUnknownInputKind", err)
	}
}

func TestValidateInput(t *testing.T) {
	tests := []struct {
		name string
		kind InputKind
		yaml string
		want string // substring of the error; "" = valid
	}{
		{"claude minimal", InputClaudeAgent, "name: a\ndescription: d\n", ""},
		{"claude full", InputClaudeAgent, "name: a\ndescription: d\ntools: [Read, 'Bash(gh *)']\ndisallowedTools: WebFetch\nmodel: sonnet[1m]\npermissionMode: dontAsk\nskills: x, y\nmemory: project\nmaxTurns: 3\nbackground: false\neffort: high\nisolation: worktree\ncolor: blue\ninitialPrompt: ''\nhooks: {}\nmcpServers: [github]\nsandbox: policies/a.yaml\n", ""},
		{"claude missing description", InputClaudeAgent, "name: a\n", "description: field is required"},
		{"claude opencode key", InputClaudeAgent, "name: a\ndescription: d\nmode: subagent\n", "mode: this is an OpenCode field"},
		{"claude extra metadata key", InputClaudeAgent, "name: a\ndescription: d\ncategory: quality\n", ""},
		{"claude bad permission mode", InputClaudeAgent, "name: a\ndescription: d\npermissionMode: yolo\n", "permissionMode"},
		{"claude blank description", InputClaudeAgent, "name: a\ndescription: \"  \"\n", "description"},
		{"claude number as description", InputClaudeAgent, "name: a\ndescription: 42\n", "description"},
		{"claude duplicate skills string", InputClaudeAgent, "name: a\ndescription: d\nskills: x, x\n", "UniqueItems"},
		{"opencode", InputOpenCodeAgent, "description: d\nmode: subagent\nmodel: anthropic/claude-sonnet-4-5\npermission:\n  \"*\": deny\n  bash: {\"gh *\": allow}\n  webfetch: ask\n  github_*: deny\ntools: {write: false, github_x: false}\n", ""},
		// OpenCode takes a frontmatter name over the file's (anomalyco/opencode
		// packages/opencode/src/config/agent.ts); the Go parser checks its syntax.
		{"opencode name", InputOpenCodeAgent, "name: r\ndescription: d\n", ""},
		{"opencode name a number", InputOpenCodeAgent, "name: 7\ndescription: d\n", "name"},
		{"opencode no description", InputOpenCodeAgent, "mode: subagent\n", ""},
		{"opencode model without provider", InputOpenCodeAgent, "description: d\nmodel: sonnet\n", "model"},
		// Any permission key is accepted (packages/core/src/v1/config/permission.ts);
		// an unknown one grants nothing, but its value must still be a rule.
		{"opencode unknown permission allowed", InputOpenCodeAgent, "description: d\npermission: {github_x: allow}\n", ""},
		{"opencode unknown permission bad action", InputOpenCodeAgent, "description: d\npermission: {github_x: yes}\n", "github_x"},
		{"opencode pattern map on single-action permission", InputOpenCodeAgent, "description: d\npermission: {webfetch: {\"*\": allow}}\n", "webfetch"},
		{"opencode pattern too long", InputOpenCodeAgent, "description: d\npermission: {bash: {\"" + strings.Repeat("x", 201) + "\": allow}}\n", "_tooLong"},
		{"skill", InputSkill, "name: s\ndescription: d\nmetadata: {a: b}\nallowed-tools: Read\ndependencies: [other, ../x/SKILL.md, \"https://e.com/s#sha256=" + strings.Repeat("a", 64) + "\"]\n", ""},
		{"skill bad name", InputSkill, "name: s/x\ndescription: d\n", "name"},
		{"skill non-kebab name", InputSkill, "name: S--x\ndescription: d\n", ""},
		{"skill description over 1024", InputSkill, "name: s\ndescription: " + strings.Repeat("x", 1025) + "\n", ""},
		{"skill metadata number", InputSkill, "name: s\ndescription: d\nmetadata: {a: 1}\n", "metadata.a"},
		{"skill unpinned URL", InputSkill, "name: s\ndescription: d\ndependencies: [\"https://e.com/s\"]\n", "dependencies.0"},
		{"sandbox path", InputSandbox, "policies/a.yaml\n", ""},
		{"sandbox absolute path", InputSandbox, "/etc/policy.yaml\n", "sandbox"},
		{"sandbox block", InputSandbox, "tier: network\nendpoints: [{host: api.github.com, rules: [\"GET /repos/{{OWNER}}/**\"]}]\n", ""},
		{"sandbox access and rules", InputSandbox, "endpoints: [{host: a.example.com, access: full, rules: [\"GET /\"]}]\n", "access and rules are exclusive"},
		{"sandbox unknown placeholder", InputSandbox, "endpoints: [{host: a.example.com, rules: [\"GET /{{BRANCH}}\"]}]\n", "rules.0"},
		{"invalid yaml", InputSkill, "name: [\n", "invalid YAML"},
		// CUE's YAML decoder panics on this (found by FuzzValidateInput).
		{"lone carriage returns", InputSkill, "\r\r0", "invalid YAML"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateInput(tc.kind, "fm.yaml", []byte(tc.yaml))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error containing %q, got none", tc.want)
			}
			if !errors.Is(err, ErrInputSchema) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want ErrInputSchema containing %q", err, tc.want)
			}
		})
	}
}

// TestValidateInputConcurrent: one validator serves concurrent callers
// (run with -race).
func TestValidateInputConcurrent(t *testing.T) {
	v, err := NewInputValidator()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			doc, want := "name: a\ndescription: d\n", true
			if i%2 == 1 {
				doc, want = "name: a\ndescription: d\nmode: all\n", false
			}
			if err := v.Validate(InputClaudeAgent, "c.yaml", []byte(doc)); (err == nil) != want {
				errs <- fmt.Errorf("goroutine %d: ok=%v, want %v: %v", i, err == nil, want, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestInputCUEVetCLI checks the schema standalone with the cue CLI, as the
// package doc shows it: the source files, and the one file `fullsend policy
// schema input` prints (InputSchemaCUE).
func TestInputCUEVetCLI(t *testing.T) {
	cue := cueCLI(t)
	files, err := filepath.Glob(filepath.Join("schema", "input", "*.cue"))
	if err != nil || len(files) == 0 {
		t.Fatalf("schema files: %v %v", files, err)
	}
	merged, err := InputSchemaCUE()
	printed := writeSchema(t, "input.cue", merged, err)
	tests := []struct {
		def, yaml string
		ok        bool
	}{
		{"#ClaudeAgent", "name: a\ndescription: d\ntools: Read, Grep\nsandbox: {tier: read-only}\n", true},
		{"#ClaudeAgent", "name: a\ndescription: d\ntools: Read\npermission: allow\n", false},
		{"#ClaudeAgent", "name: a\ndescription: d\ntools: Read\nfoo: 1\n", true},
		{"#OpenCodeAgent", "description: d\npermission: {\"*\": deny, read: allow}\n", true},
		{"#OpenCodeAgent", "description: d\nmode: boss\n", false},
		{"#Skill", "name: s\ndescription: d\ncompatibility: linux\n", true},
		{"#Skill", "name: s\ndescription: d\ncompatibility: " + strings.Repeat("x", 501) + "\n", false},
		{"#OpenCodeAgent", "description: d\npermission: {webfetch: {\"*\": allow}}\n", false},
		{"#OpenCodeAgent", "description: d\npermission: {bash: {\"gh *\": allow}}\ntools: {write: false, github_x: false}\n", true},
		// Any tools key is accepted (anomalyco/opencode packages/core/src/v1/config/agent.ts).
		{"#OpenCodeAgent", "description: d\ntools: {github_x: true}\n", true},
		{"#OpenCodeAgent", "description: d\ntools: {github_x: yes}\n", false},
	}
	dir := t.TempDir()
	for i, tc := range tests {
		t.Run(tc.def+"/"+string(rune('a'+i)), func(t *testing.T) {
			f := filepath.Join(dir, "fm"+string(rune('a'+i))+".yaml")
			if err := os.WriteFile(f, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, schema := range [][]string{files, {printed}} {
				args := append(append([]string{"vet", "-c"}, schema...), f, "-d", tc.def)
				out, err := exec.Command(cue, args...).CombinedOutput()
				if (err == nil) != tc.ok {
					t.Errorf("cue vet %v: ok=%v, want %v:\n%s", schema, err == nil, tc.ok, out)
				}
			}
			// The Go API agrees with the CLI.
			goErr := ValidateInput(InputKind(strings.TrimPrefix(tc.def, "#")), f, []byte(tc.yaml))
			if (goErr == nil) != tc.ok {
				t.Errorf("ValidateInput ok=%v, want %v: %v", goErr == nil, tc.ok, goErr)
			}
		})
	}
}

// FuzzValidateInput: arbitrary bytes never panic and any failure wraps
// ErrInputSchema.
func FuzzValidateInput(f *testing.F) {
	f.Add("name: a\ndescription: d\n")
	f.Add("description: d\npermission: {bash: {\"*\": allow}}\n")
	f.Add("name: s\ndescription: d\nsandbox: {endpoints: [{host: a.b.c}]}\n")
	f.Add("- a\n- b\n")
	f.Add("&a [*a]\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, k := range InputKinds() {
			if err := ValidateInput(k, "fuzz.yaml", []byte(s)); err != nil && !errors.Is(err, ErrInputSchema) {
				t.Fatalf("%s: error does not wrap ErrInputSchema: %v", k, err)
			}
		}
	})
}

func BenchmarkValidateInput(b *testing.B) {
	doc := []byte("name: triage\ndescription: Triage issues\ntools: Read, Grep, Bash(gh issue view *)\nmodel: sonnet\nsandbox:\n  tier: network\n  endpoints:\n    - host: api.github.com\n      rules: [\"GET /repos/{{OWNER}}/{{REPO_NAME}}/issues/**\"]\n")
	if err := ValidateInput(InputClaudeAgent, "b.yaml", doc); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := ValidateInput(InputClaudeAgent, "b.yaml", doc); err != nil {
			b.Fatal(err)
		}
	}
}
