package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/ciout/ciouttest"
)

// The tests in this file reproduce the log-injection attacks of issue 12
// (item 4) and the pass-env masking attack (item 9): each drives a whole run
// against the openshell fake with an agent (a script in the workspace that
// the runtime stub sources) that plays the attacker, then replays the log
// the way GitHub Actions or GitLab CI reads it.

// shQuote spells s as a printf format in single quotes, every byte that is
// not a plain ASCII letter or digit as an octal escape.
func shQuote(s string) string {
	var b strings.Builder
	b.WriteString("\"$(printf '")
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\%03o", c)
		}
	}
	b.WriteString("')\"")
	return b.String()
}

// agentWorkspace returns a workspace whose runtime stub runs script.
func agentWorkspace(t *testing.T, script string) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".stub-script"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestAttackFileNameInjection: an agent names files in its outputs so that
// the runner, logging what it removed from them, writes workflow commands,
// ANSI sequences or GitLab section markers into the job log.
func TestAttackFileNameInjection(t *testing.T) {
	for attack, name := range ciouttest.AttackNames() {
		for _, ci := range []CIKind{CIGitHub, CIGitLab} {
			t.Run(attack+"/"+string(ci), func(t *testing.T) {
				h := newHarness(t, ci)
				ws := agentWorkspace(t, "mkdir -p out && ln -s /etc/passwd out/"+shQuote(name)+"\n")
				res, err := h.run(context.Background(), Request{Workspace: ws, Outputs: []string{"out"}})
				if err != nil {
					t.Fatalf("%v\n%s", err, h.log.String())
				}
				removed := false
				for _, r := range res.Removed {
					removed = removed || strings.HasSuffix(r, name)
				}
				if !removed {
					t.Fatalf("the symlink %q was not removed: %q", name, res.Removed)
				}
				log := h.log.String()
				switch ci {
				case CIGitHub:
					g := &ciouttest.GitHubRunner{}
					g.Feed(log)
					if bad := ciouttest.ForeignCommands(g.Executed); len(bad) > 0 {
						t.Errorf("the job executed %q:\n%s", bad, log)
					}
					if strings.ContainsAny(log, "\x1b\r") {
						t.Errorf("raw control characters in the log:\n%q", log)
					}
					if strings.Contains(name, "%") && !strings.Contains(log, strings.ReplaceAll(name, "%", "%25")) {
						t.Errorf("file name not data-encoded (%% as %%25):\n%s", log)
					}
				case CIGitLab:
					if bad := ciouttest.GitLabForged(log); len(bad) > 0 {
						t.Errorf("forged in the job log: %q\n%q", bad, log)
					}
				}
			})
		}
	}
}

// agentCommands is what an attacking agent prints on stdout and stderr: it
// stops commands with its own token, resumes them, and issues commands in
// both syntaxes, one hidden behind a carriage return; its last line has no
// newline, to glue onto whatever the runner writes next.
const agentCommands = `s='::stop-commands::foo
foo
::error::pwned
::foo::
##[error]legacy pwned
  ::add-mask::agentmask
hello` + "\r" + `::warning::cr-split
foo'
printf '%s' "$s"
printf '%s' "$s" >&2
echo 3 > .stub-exit
`

// TestAttackAgentStopCommands: the agent's output must not issue workflow
// commands, whatever order GitHub reads the runner's stdout and stderr in
// (actions/runner reads them on two threads and, in each batch, handles the
// stderr lines first), and the runner's own commands after the agent's
// output must still work.
func TestAttackAgentStopCommands(t *testing.T) {
	for _, mode := range []string{"stderr then stdout", "stdout then stderr", "one stream"} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			if mode == "one stream" {
				h.opts.Stdout = &h.log
			}
			ws := agentWorkspace(t, agentCommands)
			_, err := h.run(context.Background(), Request{Workspace: ws})
			if ExitCode(err) != 3 {
				t.Fatalf("exit %d: %v\n%s", ExitCode(err), err, h.log.String())
			}
			g := &ciouttest.GitHubRunner{}
			switch mode {
			case "stderr then stdout":
				g.Feed(h.log.String())
				g.Feed(h.stdout.String())
			case "stdout then stderr":
				g.Feed(h.stdout.String())
				g.Feed(h.log.String())
			default:
				g.Feed(h.log.String())
			}
			if bad := ciouttest.ForeignCommands(g.Executed); len(bad) > 0 {
				t.Errorf("the agent's output executed %q\nlog:\n%s\nstdout:\n%s", bad, h.log.String(), h.stdout.String())
			}
			if g.Stopped {
				t.Errorf("commands still stopped at the end of the run (token %q)", g.Token)
			}
			if mode == "one stream" {
				groups, ends, annotated := 0, 0, false
				for _, c := range g.Executed {
					groups += btoi(c.Name == "group")
					ends += btoi(c.Name == "endgroup")
					annotated = annotated || c.Name == "error" && strings.HasPrefix(c.Data, "exit 3")
				}
				if groups == 0 || groups != ends || !annotated {
					t.Errorf("the runner's own commands after the agent did not run: %d groups, %d ends, error annotation %v\n%s",
						groups, ends, annotated, h.log.String())
				}
			}
			// The fence token never reaches the sandbox.
			calls, _ := os.ReadFile(filepath.Join(h.state, "calls.jsonl"))
			for _, c := range g.Executed {
				if c.Name == "stop-commands" && bytes.Contains(calls, []byte(c.Data)) {
					t.Errorf("stop-commands token %s in an openshell call", c.Data)
				}
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestAttackAgentGitLabSection: on GitLab an agent prints section markers
// and erase-line sequences to fold away or overwrite the runner's lines.
func TestAttackAgentGitLabSection(t *testing.T) {
	h := newHarness(t, CIGitLab)
	h.opts.Stdout = &h.log
	ws := agentWorkspace(t, `printf 'section_start:1:pwn[collapsed=true]\r\033[0Khidden\n'
printf 'section_end:1:pwn\r\033[0K\n' >&2
printf 'ok\033[2K\033[1Afake line\n'
printf '\033[32mgreen is fine\033[0m\n'
`)
	if _, err := h.run(context.Background(), Request{Workspace: ws}); err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	log := h.log.String()
	// Colour (SGR) from the agent stays; nothing else does.
	log = strings.ReplaceAll(log, "\x1b[32mgreen is fine\x1b[0m", "green is fine")
	if bad := ciouttest.GitLabForged(log); len(bad) > 0 {
		t.Errorf("forged in the job log: %q\n%q", bad, log)
	}
}
