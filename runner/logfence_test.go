package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The tests in this file reproduce the log-injection attacks of issue 12
// (item 4) and the pass-env masking attack (item 9): each drives a whole run
// against the openshell fake with an agent (a script in the workspace that
// the runtime stub sources) that plays the attacker, then replays the log
// the way GitHub Actions or GitLab CI reads it.

// ghCommand is one workflow command the GitHub Actions runner executed.
type ghCommand struct{ name, data string }

// ghRunner replays log text the way the GitHub Actions runner processes a
// step's output (actions/runner, src/Runner.Worker/ActionCommandManager.cs
// and src/Runner.Common/ActionCommand.cs): lines split by StreamReader.
// ReadLine (LF, CR or CRLF); a `::name props::data` command after leading
// white space, or a legacy `##[name props]data` anywhere in the line; while
// stop-commands is on, only the resume token is recognised.
type ghRunner struct {
	stopped  bool
	token    string
	executed []ghCommand
}

var ghRegistered = map[string]bool{"add-mask": true, "add-matcher": true, "remove-matcher": true, "debug": true,
	"warning": true, "error": true, "notice": true, "group": true, "endgroup": true, "echo": true, "save-state": true,
	"set-output": true, "set-env": true, "add-path": true, "stop-commands": true}

func (g *ghRunner) feed(stream string) {
	stream = strings.ReplaceAll(stream, "\r\n", "\n")
	for _, line := range strings.FieldsFunc(stream, func(r rune) bool { return r == '\n' || r == '\r' }) {
		g.line(line)
	}
}

func (g *ghRunner) registered(name string) bool {
	return ghRegistered[strings.ToLower(name)] || g.token != "" && strings.EqualFold(name, g.token)
}

func (g *ghRunner) parse(line string) (name, data string, ok bool) {
	if m := strings.TrimLeftFunc(line, unicode.IsSpace); strings.HasPrefix(m, "::") {
		if end := strings.Index(m[2:], "::"); end >= 0 {
			info := m[2 : 2+end]
			name, _, _ = strings.Cut(info, " ")
			if g.registered(name) {
				return name, ghUnescapeData(m[2+end+2:]), true
			}
		}
	}
	if i := strings.Index(line, "##["); i >= 0 {
		if rb := strings.IndexByte(line[i:], ']'); rb >= 0 {
			info := line[i+3 : i+rb]
			name, _, _ = strings.Cut(info, " ")
			if g.registered(name) {
				return name, line[i+rb+1:], true
			}
		}
	}
	return "", "", false
}

func (g *ghRunner) line(line string) {
	name, data, ok := g.parse(line)
	switch {
	case !ok:
	case g.stopped:
		if strings.EqualFold(name, g.token) {
			g.stopped, g.token = false, ""
			g.executed = append(g.executed, ghCommand{"resume", name})
		}
	case name == "stop-commands":
		g.stopped, g.token = true, data
		g.executed = append(g.executed, ghCommand{name, data})
	default:
		g.executed = append(g.executed, ghCommand{name, data})
	}
}

// ghUnescapeData is ActionCommand.UnescapeData: the mappings applied in
// their declared order.
func ghUnescapeData(s string) string {
	for _, m := range [][2]string{{"%0D", "\r"}, {"%0A", "\n"}, {"%25", "%"}} {
		s = strings.ReplaceAll(s, m[0], m[1])
	}
	return s
}

var hexToken = regexp.MustCompile(`^[0-9a-f]{32}$`)

// foreignCommands returns the commands executed that the runner did not
// issue: its own are groups, its error annotation, masks of the values it
// knows, and stop-commands/resume with its random 32-hex-digit tokens.
func foreignCommands(cmds []ghCommand, masks ...string) []ghCommand {
	var out []ghCommand
	for _, c := range cmds {
		switch {
		case c.name == "group" || c.name == "endgroup":
		case c.name == "error" && strings.HasPrefix(c.data, "exit "):
		case (c.name == "stop-commands" || c.name == "resume") && hexToken.MatchString(c.data):
		case c.name == "add-mask" && contains(masks, c.data):
		default:
			out = append(out, c)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// gitlabOwn matches the sequences the runner itself writes on GitLab: its
// section markers and the colours of its annotations.
var gitlabOwn = regexp.MustCompile(`\x1b\[0Ksection_(start|end):\d+:fullsend_\d+_[a-z0-9_.-]*(\[collapsed=true\])?\r\x1b\[0K|\x1b\[1;3[0-9]m|\x1b\[0m`)

// gitlabSection is GitLab's trace section marker (Gitlab::Regex.build_trace_section_regex):
// it is recognised anywhere in a line.
var gitlabSection = regexp.MustCompile(`section_(start|end):(\d+):([a-zA-Z0-9_.-]+)(\[[^\]]*\])?\r\x1b\[0K`)

// gitlabForged returns what in a GitLab log is not the runner's own: section
// markers and escape sequences or carriage returns that would move the
// cursor, erase or open sections.
func gitlabForged(log string) []string {
	var out []string
	for _, m := range gitlabSection.FindAllStringSubmatch(log, -1) {
		if !strings.HasPrefix(m[3], "fullsend_") {
			out = append(out, fmt.Sprintf("section marker %q", m[0]))
		}
	}
	rest := strings.ReplaceAll(gitlabOwn.ReplaceAllString(log, ""), "\r\n", "\n")
	if i := strings.IndexAny(rest, "\x1b\r"); i >= 0 {
		out = append(out, fmt.Sprintf("control character in %q", rest[max(0, i-40):min(len(rest), i+40)]))
	}
	return out
}

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

// attackNames are file names an agent leaves in its outputs for the runner
// to log.
var attackNames = map[string]string{
	"newline add-mask":      "\n::add-mask::x",
	"encoded newline error": "%0A::error::pwn",
	"osc 8 hyperlink":       "\x1b]8;;https:evil.example\x1b\\click\x1b]8;;\x1b\\",
	"erase line":            "ok\x1b[0Kfake",
	"section_start":         "section_start:123:x\r\x1b[0K",
	"carriage return error": "a\r::error::pwn",
	"legacy command":        "a ##[error]pwn",
}

// TestAttackFileNameInjection: an agent names files in its outputs so that
// the runner, logging what it removed from them, writes workflow commands,
// ANSI sequences or GitLab section markers into the job log.
func TestAttackFileNameInjection(t *testing.T) {
	for attack, name := range attackNames {
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
					g := &ghRunner{}
					g.feed(log)
					if bad := foreignCommands(g.executed); len(bad) > 0 {
						t.Errorf("the job executed %q:\n%s", bad, log)
					}
					if strings.ContainsAny(log, "\x1b\r") {
						t.Errorf("raw control characters in the log:\n%q", log)
					}
					if strings.Contains(name, "%") && !strings.Contains(log, strings.ReplaceAll(name, "%", "%25")) {
						t.Errorf("file name not data-encoded (%% as %%25):\n%s", log)
					}
				case CIGitLab:
					if bad := gitlabForged(log); len(bad) > 0 {
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
			g := &ghRunner{}
			switch mode {
			case "stderr then stdout":
				g.feed(h.log.String())
				g.feed(h.stdout.String())
			case "stdout then stderr":
				g.feed(h.stdout.String())
				g.feed(h.log.String())
			default:
				g.feed(h.log.String())
			}
			if bad := foreignCommands(g.executed); len(bad) > 0 {
				t.Errorf("the agent's output executed %q\nlog:\n%s\nstdout:\n%s", bad, h.log.String(), h.stdout.String())
			}
			if g.stopped {
				t.Errorf("commands still stopped at the end of the run (token %q)", g.token)
			}
			if mode == "one stream" {
				groups, ends, annotated := 0, 0, false
				for _, c := range g.executed {
					groups += btoi(c.name == "group")
					ends += btoi(c.name == "endgroup")
					annotated = annotated || c.name == "error" && strings.HasPrefix(c.data, "exit 3")
				}
				if groups == 0 || groups != ends || !annotated {
					t.Errorf("the runner's own commands after the agent did not run: %d groups, %d ends, error annotation %v\n%s",
						groups, ends, annotated, h.log.String())
				}
			}
			// The fence token never reaches the sandbox.
			calls, _ := os.ReadFile(filepath.Join(h.state, "calls.jsonl"))
			for _, c := range g.executed {
				if c.name == "stop-commands" && bytes.Contains(calls, []byte(c.data)) {
					t.Errorf("stop-commands token %s in an openshell call", c.data)
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
	if bad := gitlabForged(log); len(bad) > 0 {
		t.Errorf("forged in the job log: %q\n%q", bad, log)
	}
}
