package compile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/agentdef"

	"github.com/google/go-cmp/cmp"
)

// TestParallelMatchesSerial compiles projects with every stage serial
// (GOMAXPROCS 1: one worker for loading, compiling, marshalling, checking)
// and then concurrent (more workers than agents' shapes, repeated), and
// requires the same files, manifest, warnings and, for a failing project,
// the same diagnostics in the same order.
func TestParallelMatchesSerial(t *testing.T) {
	at := func(dir string) func(*testing.T) string { return func(*testing.T) string { return dir } }
	dirs := map[string]func(*testing.T) string{
		"generated":       at(writeMapFS(t, genProject(96))),
		"warnings":        at(writeMapFS(t, diagnosticProject(48, false))),
		"errors":          at(writeMapFS(t, diagnosticProject(48, true))),
		"experiment-0005": func(t *testing.T) string { return experimentDir(t) },
	}
	for _, name := range []string{"triage", "production", "fullsend-agents", "opencode"} {
		dirs[name] = func(t *testing.T) string { return exampleDir(t, name) }
	}
	for _, sub := range []string{"egress", "mcp"} {
		dirs[sub] = at(filepath.Join("testdata", sub))
	}
	for _, sub := range []string{"bad/duplicate-agent", "bad/cyclic-agents"} {
		dirs[sub] = at(filepath.Join("..", "agentdef", "testdata", filepath.FromSlash(sub)))
	}
	for name, dirOf := range dirs {
		t.Run(name, func(t *testing.T) {
			dir := dirOf(t)
			opts := ProjectOptions{Set: []string{"OWNER=acme"}}
			prev := runtime.GOMAXPROCS(1)
			want := compileSummaryOf(t, dir, opts)
			switch {
			case name == "warnings" && len(want.Warnings) == 0:
				t.Fatal("the warnings project compiled without warnings")
			case name == "errors" && len(want.Failure) == 0:
				t.Fatal("the errors project did not fail")
			case want.Err != "":
				t.Fatalf("compile: %s", want.Err)
			}
			runtime.GOMAXPROCS(8)
			for range 3 {
				if got := compileSummaryOf(t, dir, opts); !cmp.Equal(want, got) {
					t.Fatalf("concurrent compile differs from serial (-serial +concurrent):\n%s", cmp.Diff(want, got))
				}
			}
			runtime.GOMAXPROCS(prev)
		})
	}
}

// TestWorkersOption compiles with Options.Workers 1 and 16 on the same
// GOMAXPROCS: the output does not depend on it.
func TestWorkersOption(t *testing.T) {
	fsys := diagnosticProject(40, false)
	run := func(workers int) *Output {
		opts, err := ProjectOptions{}.resolve()
		if err != nil {
			t.Fatal(err)
		}
		opts.Workers = workers
		opts.Checks = []Check{validateCheck(workers)}
		proj, diags, _ := agentdef.LoadPartial(fsys)
		proj.Warnings = diags
		out, err := Compile(context.Background(), proj, fsys, opts)
		if err != nil {
			t.Fatal(err)
		}
		out.Stages = nil
		return out
	}
	want := run(1)
	for range 3 {
		got := run(16)
		if !cmp.Equal(want.Files, got.Files) || !cmp.Equal(want.Warnings, got.Warnings) {
			t.Fatalf("Workers 16 differs from Workers 1:\n%s\n%s", cmp.Diff(want.Files, got.Files), cmp.Diff(want.Warnings, got.Warnings))
		}
	}
}

// compiled is what a compile produced, in comparable form.
type compiled struct {
	Files    map[string]string
	Warnings []string
	Failure  []string
	Agents   []string
	Err      string
}

func compileSummaryOf(t *testing.T, dir string, po ProjectOptions) compiled {
	t.Helper()
	out, err := CompileDir(context.Background(), dir, po)
	var s compiled
	if err != nil {
		var f *Failure
		if !errors.As(err, &f) {
			s.Err = err.Error()
			return s
		}
		for _, d := range f.Diagnostics {
			s.Failure = append(s.Failure, fmt.Sprintf("%s %s %s %s", d.Pos, d.Severity, d.Message, d.Hint))
		}
		s.Agents = f.Agents
		return s
	}
	s.Files = map[string]string{}
	for name, data := range out.Files {
		s.Files[name] = string(data)
	}
	for _, d := range out.Warnings {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s %s %s %s", d.Pos, d.Severity, d.Message, d.Hint))
	}
	s.Agents = out.AgentNames()
	return s
}

// diagnosticProject is genProject with warnings mixed in: every fifth agent
// has a twin that omits tools and has an unknown field; with errors, every
// seventh agent also has a twin whose tools list does not parse.
func diagnosticProject(n int, errors bool) fstest.MapFS {
	fsys := genProject(n)
	for i := 0; i < n; i += 5 {
		fsys[fmt.Sprintf("agents/loose-%d.md", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf(
			"---\nname: loose-%d\ndescription: No tools listed.\nunknown_field: x\n---\nBody.\n", i))}
	}
	for i := 0; errors && i < n; i += 7 {
		fsys[fmt.Sprintf("agents/broken-%d.md", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf(
			"---\nname: broken-%d\ndescription: A malformed tool.\ntools: Read, Bash(gh-%d\n---\nBody.\n", i, i))}
	}
	return fsys
}

// writeMapFS writes fsys under a temporary directory and returns it.
func writeMapFS(t testing.TB, fsys fstest.MapFS) string {
	t.Helper()
	dir := t.TempDir()
	for name, f := range fsys {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// genProject builds an in-memory project of n agents in four shapes, each
// with its own skill: the same shapes bench/compile.sh generates.
func genProject(n int) fstest.MapFS {
	fsys := fstest.MapFS{}
	for i := 0; i < n; i++ {
		fsys[fmt.Sprintf("skills/skill-%d/SKILL.md", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf(
			"---\nname: skill-%d\ndescription: Generated skill %d.\nallowed-tools: Read Grep\n---\nBody.\n", i, i))}
		var tools, extra string
		switch i % 4 {
		case 0:
			tools = "Read, Grep, Bash(grep *), Bash(cat *)"
		case 1:
			tools = "Bash(gh,jq), Read"
		case 2:
			tools = fmt.Sprintf("WebFetch(domain:docs-%d.example.com), Read", i)
		case 3:
			tools = "Bash(curl *)"
			extra = fmt.Sprintf("sandbox:\n  tier: full\n  endpoints:\n    - host: api-%d.example.com\n      rules:\n        - GET /v1/items/**\n        - POST /v1/items/{{ISSUE_NUMBER}}/notes\n", i)
		}
		fsys[fmt.Sprintf("agents/agent-%d.md", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf(
			"---\nname: agent-%d\ndescription: Generated agent %d.\ntools: %s\nskills: [skill-%d]\n%s---\nBody.\n", i, i, tools, i, extra))}
	}
	return fsys
}
