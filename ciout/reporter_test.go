package ciout

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/ciout/ciouttest"
)

func TestLineFilter(t *testing.T) {
	var out bytes.Buffer
	f, _ := newLineFilters(&out, &out, func(s string) string { return "<" + s + ">" })
	f.Write([]byte("a\nb"))
	f.Write([]byte("c\n\nd"))
	f.Write(bytes.Repeat([]byte("x"), maxLine+1))
	f.Write([]byte("tail"))
	f.Close()
	want := "<a>\n<bc>\n<>\n<d" + strings.Repeat("x", maxLine+1) + ">\n<tail>\n"
	if got := out.String(); got != want {
		t.Errorf("got %.80q", got)
	}
}

// TestGitHubFenceToken: a fresh token per fence, never a command name, and
// the agent's streams are defused inside it.
func TestGitHubFenceToken(t *testing.T) {
	var log, stdout bytes.Buffer
	rep := NewReporter(cienv.GitHubActions, &log, "")
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		w, ew, end := rep.Untrusted(&stdout, &log)
		w.Write([]byte("::error::out\nno newline"))
		ew.Write([]byte("x\r::warning::err"))
		end()
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		token := strings.TrimPrefix(lines[len(lines)-3], "::stop-commands::")
		if !ciouttest.HexToken.MatchString(token) || seen[token] || lines[len(lines)-1] != "::"+token+"::" {
			t.Fatalf("fence %d:\n%s", i, log.String())
		}
		seen[token] = true
	}
	if !strings.Contains(stdout.String(), "%3A:error::out\nno newline\n") || !strings.Contains(log.String(), "x\r%3A:warning::err\n") {
		t.Errorf("streams not defused:\nstdout %q\nlog %q", stdout.String(), log.String())
	}
}

func TestGitHubReporter(t *testing.T) {
	var out bytes.Buffer
	summary := filepath.Join(t.TempDir(), "summary.md")
	rep := NewReporter(cienv.GitHubActions, &out, summary)
	end := rep.Group("step\n::error::injected")
	end()
	rep.Annotate("error", "a:b,c", "line1\nline2 100%")
	w, _, stop := rep.Untrusted(&out, &out)
	w.Write([]byte("::add-mask::x\n"))
	stop()
	if err := rep.Summary("| a | b |\n"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"::group::step%0A::error::injected\n", "::endgroup::\n",
		"::error title=a%3Ab%2Cc::line1%0Aline2 100%25\n", "::stop-commands::", "\n%3A:add-mask::x\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	lines := strings.Split(strings.TrimSpace(got), "\n")
	token := strings.TrimPrefix(lines[len(lines)-3], "::stop-commands::")
	if len(token) != 32 || lines[len(lines)-1] != "::"+token+"::" {
		t.Errorf("untrusted output not bracketed by a random token:\n%s", got)
	}
	if b, _ := os.ReadFile(summary); string(b) != "| a | b |\n" {
		t.Errorf("summary %q", b)
	}
}

func TestGitLabReporter(t *testing.T) {
	var out bytes.Buffer
	rep := NewReporter(cienv.GitLabCI, &out, "")
	rep.Group("Create Sandbox!")()
	got := out.String()
	if !strings.Contains(got, "section_start:") || !strings.Contains(got, ":fullsend_1_create_sandbox[collapsed=true]\r\x1b[0KCreate Sandbox!\n") ||
		!strings.Contains(got, "section_end:") {
		t.Errorf("section markers:\n%q", got)
	}
}

// TestGitLabFence: the agent's output is fenced by two lines carrying one
// random token the agent never sees before it is printed.
func TestGitLabFence(t *testing.T) {
	var log, out bytes.Buffer
	rep := NewReporter(cienv.GitLabCI, &log, "")
	o, _, end := rep.Untrusted(&out, &out)
	fmt.Fprintln(o, "----- agent output ends (fence 0000000000000000) -----")
	end()
	re := regexp.MustCompile(`(?m)^----- agent output begins \(untrusted; fence ([0-9a-f]{16})\) -----\n----- agent output ends \(fence ([0-9a-f]{16})\) -----$`)
	m := re.FindStringSubmatch(log.String())
	if m == nil || m[1] != m[2] || m[1] == "0000000000000000" {
		t.Fatalf("no fence with one token:\n%q", log.String())
	}
	if strings.Contains(out.String(), "fence "+m[1]) {
		t.Error("the agent's output carries the token")
	}
}

// TestAppendOutputs: step outputs are appended as name=value lines in one
// write; a name or value that would start another output is refused and
// nothing is written.
func TestAppendOutputs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "github_output")
	if err := os.WriteFile(path, []byte("earlier=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendOutputs(path, [][2]string{{"ref", "r@sha256:ab"}, {"digest", "sha256:ab"}}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][2]string{{"ref", "x\nother=y"}, {"ref", "x\r"}, {"a=b", "x"}, {"a\nb", "x"}, {"", "x"}} {
		if err := AppendOutputs(path, [][2]string{{"ok", "1"}, bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "earlier=1\nref=r@sha256:ab\ndigest=sha256:ab\n"; string(got) != want {
		t.Errorf("file %q, want %q", got, want)
	}
}
