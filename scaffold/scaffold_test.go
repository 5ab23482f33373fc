package scaffold

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/compile/lintcheck"
	"github.com/fullsend-ai/agent-sandbox/lint"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/report"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// render is the golden form of a tree: every file under dir, sorted, as
// "-- PATH (MODE) --" and its content.
func render(t *testing.T, dir string) []byte {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(paths)
	var b bytes.Buffer
	for _, p := range paths {
		info, err := os.Stat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("-- " + p + " (" + info.Mode().Perm().String() + ") --\n")
		b.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	file := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./scaffold -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the scaffold written (run go test ./scaffold -update and review the diff)", file)
	}
}

// TestScaffoldGolden pins the written tree, for both signing choices.
func TestScaffoldGolden(t *testing.T) {
	for _, signing := range []string{SigningKeyless, SigningKey} {
		t.Run(signing, func(t *testing.T) {
			dir := t.TempDir()
			res, err := Write(Options{Dir: dir, Signing: signing, Version: "v1.2.3"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Skipped) != 0 || res.Signing != signing || res.VersionNote != "" {
				t.Errorf("skipped %v, signing %q", res.Skipped, res.Signing)
			}
			golden(t, "tree-"+signing, render(t, dir))
		})
	}
}

// TestScaffoldCompilesLintsAndPasses runs what `fullsend init` leaves behind
// through the library calls of `policy compile`, `policy lint` and `policy
// test`: it compiles without warnings, lints without findings and meets
// every expectation.
func TestScaffoldCompilesLintsAndPasses(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	out, err := compile.CompileDir(t.Context(), dir, compile.ProjectOptions{Lint: lintcheck.Start(lint.Options{})})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	if len(out.Warnings) != 0 {
		t.Errorf("compile warnings: %v", out.Warnings)
	}
	if got := out.AgentNames(); !slices.Equal(got, []string{ExampleAgent}) {
		t.Errorf("agents %v, want [%s]", got, ExampleAgent)
	}
	policiesDir := filepath.Join(dir, "policies")
	if err := compile.Write(policiesDir, out); err != nil {
		t.Fatal(err)
	}

	b, err := bundle.Open(os.DirFS(policiesDir), ".")
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := lint.ProjectInputs(os.DirFS(policiesDir), policiesDir, b)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := lint.New(t.Context(), lint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.Lint(t.Context(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	if n, w := rep.Count(report.SeverityDeny), rep.Count(report.SeverityWarn); n+w != 0 {
		t.Errorf("lint: %d deny, %d warn findings", n, w)
	}

	policies := map[string]*openshell.Policy{}
	for _, name := range b.Manifest.AgentNames() {
		if policies[name], err = openshell.Unmarshal(b.Policies[name]); err != nil {
			t.Fatal(err)
		}
	}
	files, err := decide.FindExpectations(os.DirFS(dir))
	if err != nil || len(files) == 0 {
		t.Fatalf("expectation files %v, %v", files, err)
	}
	er, err := decide.RunExpectations(os.DirFS(dir), files, policies, nil)
	if err != nil {
		t.Fatal(err)
	}
	if er.Failed() != 0 || len(er.Results) < 5 {
		t.Errorf("policy tests: %d of %d failed", er.Failed(), len(er.Results))
	}
}

// TestWriteIsIdempotent checks that a second Write keeps every file, that a
// user's edit survives, and that Force restores it.
func TestWriteIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	first, err := Write(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(dir, "agents", ExampleAgent+".md")
	if err := os.WriteFile(agent, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	second, err := Write(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Written) != 0 || !slices.Equal(second.Skipped, first.Written) {
		t.Errorf("second run wrote %v, skipped %v; want nothing written, %v skipped", second.Written, second.Skipped, first.Written)
	}
	if data, _ := os.ReadFile(agent); string(data) != "mine\n" {
		t.Errorf("the user's agent was replaced without --force: %q", data)
	}
	forced, err := Write(Options{Dir: dir, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(forced.Written, first.Written) || len(forced.Skipped) != 0 {
		t.Errorf("forced run wrote %v, skipped %v", forced.Written, forced.Skipped)
	}
	if data, _ := os.ReadFile(agent); strings.Contains(string(data), "mine") {
		t.Error("--force did not restore the agent")
	}
}

func TestWriteErrors(t *testing.T) {
	if _, err := Write(Options{Dir: t.TempDir(), Signing: "gpg"}); !errors.Is(err, ErrSigning) {
		t.Errorf("unknown signing: %v, want ErrSigning", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(Options{Dir: file}); err == nil {
		t.Error("writing into a regular file succeeded")
	}
	// A link in the directory cannot lead a write outside it.
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "agents")); err != nil {
		t.Skip(err)
	}
	if _, err := Write(Options{Dir: dir, Force: true}); err == nil {
		t.Error("writing through a link to outside the directory succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("wrote outside the directory: %v", entries)
	}
}

func TestFilesHaveNoKeyMaterial(t *testing.T) {
	for _, signing := range []string{SigningKeyless, SigningKey} {
		files, err := Files(signing)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if bytes.Contains(f.Data, []byte("PRIVATE KEY")) {
				t.Errorf("%s (%s) carries key material", f.Path, signing)
			}
		}
	}
}

// TestScaffoldVersionFile: a release build pins itself in .fullsend-version,
// which the pull-request policy-diff templates read from the base branch
// (they accept only vX.Y.Z); any other build writes none and says why.
func TestScaffoldVersionFile(t *testing.T) {
	for _, tc := range []struct {
		version, want string // want "" = no file
	}{
		{"v0.4.1", "v0.4.1\n"},
		{"v10.0.12", "v10.0.12\n"},
		{"devel", ""},
		{"", ""},
		{"v0.0.0-20260101000000-0123456789ab", ""}, // a pseudo-version: the templates refuse it
		{"v1.0.0-rc.1", ""},
		{"v1.0.0\nv9.9.9", ""},
	} {
		t.Run(tc.version, func(t *testing.T) {
			dir := t.TempDir()
			res, err := Write(Options{Dir: dir, Version: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, VersionFile))
			if tc.want == "" {
				if !os.IsNotExist(err) {
					t.Errorf("%s written for %q: %q, %v", VersionFile, tc.version, b, err)
				}
				if !strings.Contains(res.VersionNote, VersionFile+" not written") || slices.Contains(res.Written, VersionFile) {
					t.Errorf("note %q, written %v", res.VersionNote, res.Written)
				}
				return
			}
			if err != nil || string(b) != tc.want {
				t.Errorf("%s = %q, %v; want %q", VersionFile, b, err, tc.want)
			}
			if res.VersionNote != "" || !slices.Contains(res.Written, VersionFile) {
				t.Errorf("note %q, written %v", res.VersionNote, res.Written)
			}
		})
	}
}
