package agentdef

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestLoadExamples parses the example agent systems and compares the
// normalized project with golden JSON (go test ./compile -run TestLoadExamples -update).
func TestLoadExamples(t *testing.T) {
	for _, name := range []string{"triage", "production", "opencode"} {
		t.Run(name, func(t *testing.T) {
			root, err := os.OpenRoot(filepath.Join("..", "testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			proj, err := Load(root.FS())
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			got, err := json.MarshalIndent(proj, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", "load-"+name+".json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("project differs from %s (run with -update after checking the change):\n%s", golden, firstDiff(string(want), string(got)))
			}
		})
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + itoa(i+1) + ":\n- " + al[i] + "\n+ " + bl[i]
		}
	}
	return "lengths differ: " + itoa(len(al)) + " vs " + itoa(len(bl)) + " lines"
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + jsonInt(i)) }

func jsonInt(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestLoadTriageShape checks the facts the golden file encodes, so a bad
// -update cannot silently bless a regression.
func TestLoadTriageShape(t *testing.T) {
	root, err := os.OpenRoot(filepath.Join("..", "testdata", "triage"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	proj, err := Load(root.FS())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range proj.Agents {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, ","); got != "completeness-assessor,duplicate-detector,reproducibility-verifier,triage" {
		t.Fatalf("agents = %s", got)
	}
	tri := proj.Agents[3]
	if len(tri.Tools) != 2 || tri.Tools[0].Commands[0].Command != "curl" || tri.Tools[1].Tool != "Agent" || len(tri.Tools[1].Agents) != 3 {
		t.Errorf("triage tools = %+v", tri.Tools)
	}
	if tri.Sandbox == nil || tri.Sandbox.Tier != "full" || len(tri.Sandbox.Endpoints) != 2 || tri.Sandbox.Endpoints[0].Rules[1].Method != "POST" {
		t.Errorf("triage sandbox = %+v", tri.Sandbox)
	}
	if p := tri.Sandbox.Endpoints[0].Rules[1].Pos; p.Line != 21 || p.Column != 11 {
		t.Errorf("rule position = %v, want line 21 column 11", p)
	}
	if len(proj.Skills) != 4 || len(proj.Files) != 8 {
		t.Errorf("skills = %d, files = %d", len(proj.Skills), len(proj.Files))
	}
	rv := proj.Skills["reproducibility-verifier"]
	if len(rv.AllowedTools) != 3 || rv.AllowedTools[2].Tool != "Glob" || rv.AllowedTools[2].Pos.Column != 26 {
		t.Errorf("space-separated allowed-tools = %+v", rv.AllowedTools)
	}
	if len(proj.Warnings) != 0 {
		t.Errorf("warnings: %v", proj.Warnings)
	}
}

func TestLoadOpenCodePermission(t *testing.T) {
	root, err := os.OpenRoot(filepath.Join("..", "testdata", "opencode"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	proj, err := Load(root.FS())
	if err != nil {
		t.Fatal(err)
	}
	a := proj.Agents[0]
	var got []string
	for _, r := range a.Tools {
		got = append(got, r.Raw)
	}
	want := "Read,Grep,Glob,LS,Bash(git diff *),Bash(git log *),Bash(gh pr view *),Bash(gh pr diff *)"
	if strings.Join(got, ",") != want || a.ToolsOmitted || a.Format != FormatOpenCode || a.Name != "reviewer" {
		t.Errorf("tools = %s (omitted %v)\nwant    %s", strings.Join(got, ","), a.ToolsOmitted, want)
	}
	if len(proj.Warnings) != 1 || !strings.Contains(proj.Warnings[0].Message, "ask is treated as deny") {
		t.Errorf("warnings = %v", proj.Warnings)
	}
}

func TestLoadEmptyProject(t *testing.T) {
	proj, err := Load(fstest.MapFS{})
	if err != nil || len(proj.Agents) != 0 {
		t.Fatalf("Load(empty) = %v, %v", proj, err)
	}
}

func TestLoadReturnsDiagnostics(t *testing.T) {
	_, err := Load(fstest.MapFS{"agents/a.md": {Data: []byte("---\nname: a\n---\n")}})
	var ds Diagnostics
	if !errors.As(err, &ds) || len(ds) == 0 {
		t.Fatalf("want Diagnostics, got %T %v", err, err)
	}
}

func TestNoCascadingReferenceErrors(t *testing.T) {
	_, err := Load(fstest.MapFS{
		"agents/a.md": {Data: []byte("---\nname: a\ndescription: d\ntools: Agent(b)\n---\n")},
		"agents/b.md": {Data: []byte("---\nname: b\ndescription: d: broken\ntools: [Read]\n---\n")},
	})
	var ds Diagnostics
	if !errors.As(err, &ds) || len(ds) != 1 || ds[0].Pos.File != "agents/b.md" {
		t.Fatalf("want only the error in b.md, got %v", err)
	}
}

// BenchmarkLoad measures discovery and parsing of the triage system.
func BenchmarkLoad(b *testing.B) {
	fsys := fstest.MapFS{}
	base := filepath.Join("..", "testdata", "triage")
	err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(base, p)
		fsys[filepath.ToSlash(rel)] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(fsys); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadDir loads the project in $FULLSEND_BENCH_DIR from disk; it
// is the "ours" side of bench/load.sh and is skipped without the variable.
func BenchmarkLoadDir(b *testing.B) {
	dir := os.Getenv("FULLSEND_BENCH_DIR")
	if dir == "" {
		b.Skip("FULLSEND_BENCH_DIR not set (see bench/load.sh)")
	}
	fsys := os.DirFS(dir)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(fsys); err != nil {
			b.Fatal(err)
		}
	}
}
