// Package ciouttest holds the test oracles of CI log output: a model of how
// the GitHub Actions runner reads a step's log (which workflow commands it
// executes), a check for what GitLab would read as a forged section or
// escape sequence, and the attack strings that try both. The tests of
// ciout and of every package writing into a CI log (runner) replay their
// output through them. It imports the standard library only and is
// imported by _test.go files only.
package ciouttest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Command is one workflow command the GitHub Actions runner executed.
type Command struct{ Name, Data string }

// GitHubRunner replays log text the way the GitHub Actions runner
// processes a step's output (actions/runner,
// src/Runner.Worker/ActionCommandManager.cs and
// src/Runner.Common/ActionCommand.cs): lines split by StreamReader.ReadLine
// (LF, CR or CRLF); a `::name props::data` command after leading white
// space, or a legacy `##[name props]data` anywhere in the line; while
// stop-commands is on, only the resume token is recognised.
type GitHubRunner struct {
	// Stopped is set while stop-commands is on, with its Token.
	Stopped bool
	Token   string
	// Executed lists the commands run, in order; a resume is recorded as
	// the command "resume" with the token as its data.
	Executed []Command
}

// githubCommands are the commands the runner registers.
func githubCommands() []string {
	return []string{"add-mask", "add-matcher", "remove-matcher", "debug", "warning", "error", "notice", "group",
		"endgroup", "echo", "save-state", "set-output", "set-env", "add-path", "stop-commands"}
}

// Feed reads one stream of log text.
func (g *GitHubRunner) Feed(stream string) {
	stream = strings.ReplaceAll(stream, "\r\n", "\n")
	for _, line := range strings.FieldsFunc(stream, func(r rune) bool { return r == '\n' || r == '\r' }) {
		g.line(line)
	}
}

func (g *GitHubRunner) registered(name string) bool {
	return slices.Contains(githubCommands(), strings.ToLower(name)) || g.Token != "" && strings.EqualFold(name, g.Token)
}

func (g *GitHubRunner) parse(line string) (name, data string, ok bool) {
	if m := strings.TrimLeftFunc(line, unicode.IsSpace); strings.HasPrefix(m, "::") {
		if end := strings.Index(m[2:], "::"); end >= 0 {
			info := m[2 : 2+end]
			name, _, _ = strings.Cut(info, " ")
			if g.registered(name) {
				return name, UnescapeData(m[2+end+2:]), true
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

func (g *GitHubRunner) line(line string) {
	name, data, ok := g.parse(line)
	switch {
	case !ok:
	case g.Stopped:
		if strings.EqualFold(name, g.Token) {
			g.Stopped, g.Token = false, ""
			g.Executed = append(g.Executed, Command{"resume", name})
		}
	case name == "stop-commands":
		g.Stopped, g.Token = true, data
		g.Executed = append(g.Executed, Command{name, data})
	default:
		g.Executed = append(g.Executed, Command{name, data})
	}
}

// UnescapeData is ActionCommand.UnescapeData: the mappings applied in
// their declared order.
func UnescapeData(s string) string {
	for _, m := range [][2]string{{"%0D", "\r"}, {"%0A", "\n"}, {"%25", "%"}} {
		s = strings.ReplaceAll(s, m[0], m[1])
	}
	return s
}

// HexToken matches the random tokens of the runner's stop-commands fence.
var HexToken = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ForeignCommands returns the commands executed that the runner did not
// issue: its own are groups, its error annotation, masks of the values it
// knows, and stop-commands/resume with its random 32-hex-digit tokens.
func ForeignCommands(cmds []Command, masks ...string) []Command {
	var out []Command
	for _, c := range cmds {
		switch {
		case c.Name == "group" || c.Name == "endgroup":
		case c.Name == "error" && strings.HasPrefix(c.Data, "exit "):
		case (c.Name == "stop-commands" || c.Name == "resume") && HexToken.MatchString(c.Data):
		case c.Name == "add-mask" && slices.Contains(masks, c.Data):
		default:
			out = append(out, c)
		}
	}
	return out
}

// gitlabOwn matches the sequences the runner itself writes on GitLab: its
// section markers and the colours of its annotations.
var gitlabOwn = regexp.MustCompile(`\x1b\[0Ksection_(start|end):\d+:fullsend_\d+_[a-z0-9_.-]*(\[collapsed=true\])?\r\x1b\[0K|\x1b\[1;3[0-9]m|\x1b\[0m`)

// gitlabSection is GitLab's trace section marker (Gitlab::Regex.build_trace_section_regex):
// it is recognised anywhere in a line.
var gitlabSection = regexp.MustCompile(`section_(start|end):(\d+):([a-zA-Z0-9_.-]+)(\[[^\]]*\])?\r\x1b\[0K`)

// GitLabForged returns what in a GitLab log is not the runner's own:
// section markers and escape sequences or carriage returns that would move
// the cursor, erase or open sections.
func GitLabForged(log string) []string {
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

// AttackNames are names (of files an agent leaves in its outputs, of
// agents, of paths in a checkout) that try to issue a command in the log
// of the CI that prints them, by name of the attack.
func AttackNames() map[string]string {
	return map[string]string{
		"newline add-mask":      "\n::add-mask::x",
		"encoded newline error": "%0A::error::pwn",
		"osc 8 hyperlink":       "\x1b]8;;https:evil.example\x1b\\click\x1b]8;;\x1b\\",
		"erase line":            "ok\x1b[0Kfake",
		"section_start":         "section_start:123:x\r\x1b[0K",
		"carriage return error": "a\r::error::pwn",
		"legacy command":        "a ##[error]pwn",
	}
}
