package compile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

// injectedPolicy is what a directory name could smuggle into a policy
// header when a line break other than \n reached it raw: a complete policy
// of its own, after which the compiled document is swallowed into a quoted
// string.
const injectedPolicy = "version: 1\nnetwork_policies: {all: {name: all, endpoints: [{host: \"*.example.com\", port: 443}], binaries: [{path: \"/**\"}]}}\nx: '"

// TestUnprintablePathsRefused: a directory or file under agents/ whose name
// holds a control, format or line-separator character is refused at
// discovery with a positioned error naming it quoted; nothing is compiled
// from it and nothing is written.
func TestUnprintablePathsRefused(t *testing.T) {
	for _, sep := range []string{"\r", "\n", "\u0085", "\u2028", "\u2029", "\u200b", "\u202e", "\x1b", "\t", "\xff"} {
		t.Run(strconv.QuoteToASCII(sep), func(t *testing.T) {
			dir := t.TempDir()
			agentDir := filepath.Join(dir, "agents", "team"+sep+strings.ReplaceAll(injectedPolicy, "/", "_"))
			if err := os.MkdirAll(agentDir, 0o755); err != nil {
				t.Skipf("this filesystem refuses the name: %v", err)
			}
			writeFile(t, filepath.Join(agentDir, "a.md"), "---\nname: a\ndescription: d\ntools: Read\n---\n")
			writeFile(t, filepath.Join(dir, "agents", "ok.md"), "---\nname: ok\ndescription: d\ntools: Read\n---\n")
			_, err := CompileDir(context.Background(), dir, ProjectOptions{})
			var ds agentdef.Diagnostics
			var f *Failure
			if errors.As(err, &f) {
				ds = f.Diagnostics
			}
			var found bool
			for _, d := range ds {
				if d.Severity == agentdef.SeverityError && strings.Contains(d.Message, "not printable text") {
					found = true
					if !printablePath(d.Pos.File) || !strings.HasPrefix(d.Pos.File, `"agents/team`) || d.Pos.Line != 1 {
						t.Errorf("position %q:%d is not the quoted path", d.Pos.File, d.Pos.Line)
					}
				}
			}
			if !found {
				// A name that is not UTF-8 cannot even be opened below the
				// os.Root: the walk for policy tests fails, naming it quoted.
				if err == nil || f != nil || !strings.Contains(err.Error(), `"agents/team`) ||
					!printablePath(strings.ReplaceAll(err.Error(), "\n", " ")) {
					t.Fatalf("want a not-printable-text error or a quoted walk error, got %v", err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "policies")); !os.IsNotExist(err) {
				t.Errorf("policies/ was written: %v", err)
			}
		})
	}
}

// TestWrittenPolicyIsChecked: emit refuses output whose policy file does
// not decode to the policy that was checked, whatever produced the bytes.
// The header injection is simulated by rewriting the marshalled document
// as an unescaped header would have produced it.
func TestWrittenPolicyIsChecked(t *testing.T) {
	out, _ := compileExample(t, "triage")
	name := out.AgentNames()[0]
	file := name + ".yaml"
	good := out.Files[file]
	if err := out.checkWritten(nil); err == nil || !strings.Contains(err.Error(), "provenance.json") {
		t.Fatalf("a nil provenance must differ from the written one: %v", err)
	}
	cases := map[string][]byte{
		"header with U+2028": append([]byte("# Generated from agents/x\u2028"+injectedPolicy+"\n"), good...),
		"header with CR":     append([]byte("# Generated from agents/x\r"+injectedPolicy+"\n"), good...),
		"not YAML":           []byte("version: [\n"),
		"an extra binary":    []byte(strings.Replace(string(good), "binaries:\n", "binaries:\n      - path: /bin/sh\n", 1)),
	}
	for label, data := range cases {
		t.Run(label, func(t *testing.T) {
			err := checkPolicyFile(file, data, out.Agents[name].Policy)
			if !errors.Is(err, ErrWrittenDiffers) {
				t.Fatalf("err = %v, want ErrWrittenDiffers", err)
			}
		})
	}
	if err := checkPolicyFile(file, good, out.Agents[name].Policy); err != nil {
		t.Fatalf("the compiled file itself: %v", err)
	}
}

// TestCheckReportsWhatCommittedFilesDecodeTo: --check says whether a stale
// committed policy is the same policy or another one, and where.
func TestCheckReportsWhatCommittedFilesDecodeTo(t *testing.T) {
	out, _ := compileExample(t, "triage")
	dir := t.TempDir()
	if err := Write(dir, out); err != nil {
		t.Fatal(err)
	}
	names := out.AgentNames()
	a, b := names[0]+".yaml", names[1]+".yaml"
	good := out.Files[a]
	writeFile(t, filepath.Join(dir, a), "# Generated from agents/x\u2028"+injectedPolicy+"\n"+string(good))
	writeFile(t, filepath.Join(dir, b), "# an edited comment\n"+string(out.Files[b]))
	diffs, err := Diff(dir, out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range diffs {
		got[d.File] = d.Decoded
	}
	if !strings.HasPrefix(got[a], "differs at ") && !strings.HasPrefix(got[a], "does not decode") {
		t.Errorf("%s: decoded note %q, want a difference", a, got[a])
	}
	if got[b] != "same policy" {
		t.Errorf("%s: decoded note %q, want same policy", b, got[b])
	}
}

func writeFile(t *testing.T, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// printablePath reports whether s is valid UTF-8 of graphic characters only:
// how a path is written in a message once the loader has quoted it.
func printablePath(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !strconv.IsGraphic(r) {
			return false
		}
	}
	return true
}
