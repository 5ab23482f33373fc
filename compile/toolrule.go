package compile

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// ErrInvalidToolRule is wrapped by every *RuleError.
var ErrInvalidToolRule = errors.New("invalid tool rule")

// RuleError is a tool-rule syntax error at a position, with a hint.
type RuleError struct {
	Pos     Pos
	Message string
	Hint    string
}

// Error implements error.
func (e *RuleError) Error() string {
	s := e.Pos.String() + ": " + e.Message
	if e.Hint != "" {
		s += " (hint: " + e.Hint + ")"
	}
	return s
}

// Unwrap lets errors.Is match ErrInvalidToolRule.
func (e *RuleError) Unwrap() error { return ErrInvalidToolRule }

// specKind is what a tool's specifier means.
type specKind int

const (
	specNone    specKind = iota // no specifier accepted
	specCommand                 // Bash(cmd args)
	specPath                    // Read(path)
	specDomain                  // WebFetch(domain:host)
	specAgents                  // Agent(a, b)
	specSkill                   // Skill(name)
	specAny                     // accepted and kept verbatim (PowerShell, Monitor)
)

// claudeTools maps Claude Code tool names to their specifier kind; see the
// "Tool classes" table of the agent-format reference.
var claudeTools = map[string]specKind{
	// fs read
	"Read": specPath, "Grep": specPath, "Glob": specPath, "LS": specPath,
	"NotebookRead": specPath, "LSP": specNone,
	// fs write
	"Edit": specPath, "Write": specPath, "NotebookEdit": specPath, "MultiEdit": specPath,
	// exec
	"Bash": specCommand, "PowerShell": specAny, "Monitor": specAny,
	"BashOutput": specNone, "KillShell": specNone,
	// network
	"WebFetch": specDomain, "WebSearch": specNone,
	// orchestration
	"Agent": specAgents, "Task": specAgents, "Skill": specSkill, "TodoWrite": specNone,
	"TaskCreate": specNone, "TaskGet": specNone, "TaskList": specNone,
	"TaskUpdate": specNone, "TaskOutput": specNone, "TaskStop": specNone,
	"ExitPlanMode": specNone, "AskUserQuestion": specNone, "SlashCommand": specNone,
}

// KnownTools returns the Claude Code tool names accepted in tool rules,
// sorted. MCP tools (`mcp__server__tool`) are accepted besides these.
func KnownTools() []string {
	names := make([]string, 0, len(claudeTools))
	for n := range claudeTools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// wrapperCommands run another program named in their arguments, or
// arbitrary code: a rule allowing one of them with free arguments allows
// any command. Claude Code does not strip them and neither do we; the
// pattern is marked CommandPattern.Wrapper.
var wrapperCommands = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true,
	"env": true, "sudo": true, "doas": true, "su": true, "xargs": true, "nohup": true,
	"nice": true, "timeout": true, "time": true, "exec": true, "eval": true,
	"watch": true, "strace": true, "parallel": true, "find": true,
	"npx": true, "bunx": true, "pnpx": true, "uvx": true, "pipx": true,
	"docker": true, "podman": true, "kubectl": true, "ssh": true,
	"python": true, "python3": true, "node": true, "perl": true, "ruby": true,
	"deno": true, "bun": true,
}

var (
	toolNameRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
	mcpRE       = regexp.MustCompile(`^mcp__([A-Za-z0-9_-]+?)(?:__([A-Za-z0-9_*-]+))?$`)
	commandRE   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._+-]*$`)
	agentRefRE  = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,62}[A-Za-z0-9])?$`)
	skillNameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	domainRE    = regexp.MustCompile(`^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
)

// ParseToolRule parses one rule, `Tool` or `Tool(specifier)`, written at
// pos. Errors are *RuleError values with a hint.
func ParseToolRule(raw string, pos Pos) (ToolRule, error) {
	r := ToolRule{Raw: raw, Pos: pos}
	fail := func(off int, hint, format string, args ...any) (ToolRule, error) {
		p := pos
		if p.Column > 0 {
			p.Column += off
		}
		return ToolRule{}, &RuleError{Pos: p, Message: fmt.Sprintf("tool rule %q: ", raw) + fmt.Sprintf(format, args...), Hint: hint}
	}
	s := raw
	if strings.TrimSpace(s) == "" {
		return fail(0, "name a tool such as Read or Bash(gh *)", "empty tool rule")
	}
	if s != strings.TrimSpace(s) {
		return fail(0, "remove the surrounding blanks", "leading or trailing blanks")
	}
	name, spec, hasSpec := s, "", false
	if open := strings.IndexByte(s, '('); open >= 0 {
		if !strings.HasSuffix(s, ")") {
			if strings.Count(s, "(") > strings.Count(s, ")") {
				return fail(open, "close the parenthesis: Tool(specifier)", "unbalanced parentheses")
			}
			return fail(strings.LastIndexByte(s, ')')+1, "nothing may follow the closing parenthesis", "text after the specifier")
		}
		name, spec, hasSpec = s[:open], s[open+1:len(s)-1], true
		if depth := parenDepthOK(spec); !depth {
			return fail(open, "balance the parentheses inside the specifier", "unbalanced parentheses")
		}
	} else if i := strings.IndexByte(s, ')'); i >= 0 {
		return fail(i, "open the parenthesis: Tool(specifier)", "unbalanced parentheses")
	}
	if strings.HasPrefix(name, "mcp__") {
		m := mcpRE.FindStringSubmatch(name)
		if m == nil {
			return fail(0, "write mcp__<server>__<tool>, e.g. mcp__github__get_issue", "malformed MCP tool name")
		}
		if hasSpec {
			return fail(len(name), "MCP tools take no specifier", "unexpected specifier")
		}
		r.Tool, r.MCPServer, r.MCPTool = "mcp", m[1], m[2]
		return r, nil
	}
	if !toolNameRE.MatchString(name) {
		return fail(0, "a tool name is letters, digits and '_', such as Bash or WebFetch", "malformed tool name %q", name)
	}
	kind, known := claudeTools[name]
	if !known {
		hint := "known tools: " + strings.Join(KnownTools(), ", ") + ", mcp__<server>__<tool>"
		if sg := suggest(name, KnownTools()); sg != "" {
			hint = fmt.Sprintf("did you mean %q? %s", sg, hint)
		}
		return fail(0, hint, "unknown tool %q", name)
	}
	r.Tool = name
	if name == "Task" {
		r.Tool = "Agent" // Task is Agent's old name
	}
	if !hasSpec {
		return r, nil
	}
	specOff := len(name) + 1
	if strings.TrimSpace(spec) == "" {
		return fail(specOff, fmt.Sprintf("write %s without parentheses to allow it unrestricted, or put a specifier inside", name), "empty specifier")
	}
	r.Specifier, r.HasSpecifier = spec, true
	switch kind {
	case specNone:
		return fail(specOff, fmt.Sprintf("write plain %s", name), "%s takes no specifier", name)
	case specCommand:
		cmds, off, hint, err := parseCommands(spec)
		if err != nil {
			return fail(specOff+off, hint, "%v", err)
		}
		r.Commands = cmds
	case specPath:
		if hint, err := checkRulePath(spec); err != nil {
			return fail(specOff, hint, "%v", err)
		}
		r.Path = spec
	case specDomain:
		host, ok := strings.CutPrefix(spec, "domain:")
		if !ok {
			return fail(specOff, "write WebFetch(domain:example.com) or WebFetch(domain:*.example.com)", "WebFetch specifier must start with domain:")
		}
		if !domainRE.MatchString(host) || len(host) > 253 {
			hint := "a lowercase host name with at least two labels; *.example.com matches subdomains only"
			if strings.ToLower(host) != host {
				hint = "host names are lowercase: " + strings.ToLower(host)
			}
			return fail(specOff+len("domain:"), hint, "invalid domain %q", host)
		}
		r.Domain = host
	case specAgents:
		if strings.TrimSpace(spec) == "*" {
			break // any subagent
		}
		off := specOff
		for _, part := range strings.Split(spec, ",") {
			a := strings.TrimSpace(part)
			if !agentRefRE.MatchString(a) {
				return fail(off+strings.Index(part, a), "list agent names separated by commas: Agent(reviewer, tester)", "invalid agent name %q", a)
			}
			if containsString(r.Agents, a) {
				return fail(off+strings.Index(part, a), "list each agent once", "agent %q listed twice", a)
			}
			r.Agents = append(r.Agents, a)
			off += len(part) + 1
		}
	case specSkill:
		n := strings.TrimSpace(spec)
		n = strings.TrimSuffix(strings.TrimSuffix(n, ":*"), " *")
		if !skillNameRE.MatchString(n) {
			return fail(specOff, "a skill name: lowercase letters, digits and single hyphens", "invalid skill name %q", n)
		}
		r.SkillName = n
	case specAny:
	}
	return r, nil
}

// parenDepthOK reports whether parentheses in s are balanced.
func parenDepthOK(s string) bool {
	depth := 0
	for _, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// shellOperators would chain a second command onto an allowed prefix.
var shellOperators = []string{"&&", "||", ";", "|", "`", "$(", ">", "<", "\n"}

// parseCommands parses a Bash specifier: `*`, `cmd args`, `cmd args:*`
// (legacy prefix form, the same as `cmd args *`), or a comma-separated list
// of those (`gh,curl,jq`, fullsend's form). On error it returns the byte
// offset inside spec and a hint.
func parseCommands(spec string) ([]CommandPattern, int, string, error) {
	if strings.TrimSpace(spec) == "*" {
		return nil, 0, "", nil
	}
	var out []CommandPattern
	off := 0
	for _, part := range strings.Split(spec, ",") {
		item := strings.TrimSpace(part)
		itemOff := off + strings.Index(part, item)
		off += len(part) + 1
		if item == "" {
			return nil, itemOff, "separate commands with single commas: Bash(gh,curl,jq)", errors.New("empty command in list")
		}
		if item == "*" {
			return nil, itemOff, "write Bash or Bash(*) alone to allow any command", errors.New("'*' inside a command list")
		}
		for _, op := range shellOperators {
			if i := strings.Index(item, op); i >= 0 {
				return nil, itemOff + i, "a rule names one command and its arguments; write one rule per command", fmt.Errorf("shell operator %q in command pattern", op)
			}
		}
		if i := strings.Index(item, ":*"); i >= 0 {
			if i != len(item)-2 {
				return nil, itemOff + i, "':*' may only end the pattern, as in Bash(gh api:*)", errors.New("':*' in the middle of a command pattern")
			}
			item = strings.TrimSpace(item[:i]) + " *"
		}
		cmd, args, _ := strings.Cut(item, " ")
		args = strings.Join(strings.Fields(args), " ")
		switch {
		case strings.ContainsRune(cmd, '/'):
			return nil, itemOff, "name the program (gh), not its path; the catalog maps programs to binaries", fmt.Errorf("command %q is a path", cmd)
		case strings.ContainsAny(cmd, "*?[]{}"):
			return nil, itemOff, "name the program exactly; globs are allowed in the arguments only", fmt.Errorf("command %q is a glob", cmd)
		case strings.ContainsRune(cmd, '='):
			return nil, itemOff, "environment assignments cannot be allowed by a rule; name the program", fmt.Errorf("command %q is an environment assignment", cmd)
		case !commandRE.MatchString(cmd):
			return nil, itemOff, "a program name is letters, digits, '.', '_', '+' and '-'", fmt.Errorf("invalid command %q", cmd)
		}
		out = append(out, CommandPattern{Command: cmd, Args: args, Wrapper: wrapperCommands[cmd] && (args == "" || strings.ContainsAny(args, "*?["))})
	}
	return out, 0, "", nil
}

// checkRulePath validates a Read/Edit-style gitignore path.
func checkRulePath(p string) (string, error) {
	if strings.TrimSpace(p) != p {
		return "remove the surrounding blanks", errors.New("path has leading or trailing blanks")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "write the path without '..': //abs/path for absolute, ~/p for home, p for project-relative", fmt.Errorf("path %q contains '..'", p)
		}
	}
	for _, c := range p {
		if unicode.IsControl(c) {
			return "remove control characters", fmt.Errorf("path %q contains a control character", p)
		}
	}
	return "", nil
}

// ToolListItem is one element of a tool list string, with its byte offset.
type ToolListItem struct {
	Text   string
	Offset int
}

// SplitToolList splits a tool list string into rules. Rules are separated
// by commas and/or blanks outside parentheses, so `Bash(gh,curl,jq), Skill`
// is two rules and `Bash(git:*) Read` (Agent Skills' space-separated form) is
// two as well. An empty element between commas and unbalanced parentheses
// are errors (*ToolListError, with the offending byte offset).
func SplitToolList(s string) ([]ToolListItem, error) {
	var out []ToolListItem
	depth, start := 0, -1
	lastComma := -1
	sawItem := false
	flush := func(end int) {
		if start >= 0 {
			out = append(out, ToolListItem{Text: s[start:end], Offset: start})
			start = -1
			sawItem = true
		}
	}
	for i, c := range s {
		switch {
		case c == '(':
			if start < 0 {
				return nil, &ToolListError{Offset: i, Message: "'(' without a tool name"}
			}
			depth++
		case c == ')':
			if depth == 0 {
				return nil, &ToolListError{Offset: i, Message: "unbalanced parentheses: ')' without '('"}
			}
			depth--
		case depth == 0 && c == ',':
			flush(i)
			if !sawItem {
				return nil, &ToolListError{Offset: i, Message: "empty element in tool list"}
			}
			sawItem = false
			lastComma = i
			continue
		case depth == 0 && unicode.IsSpace(c):
			flush(i)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if depth > 0 {
		return nil, &ToolListError{Offset: start, Message: "unbalanced parentheses: '(' is never closed"}
	}
	flush(len(s))
	if lastComma >= 0 && !sawItem {
		return nil, &ToolListError{Offset: lastComma, Message: "trailing comma in tool list"}
	}
	return out, nil
}

// ToolListError is a SplitToolList error at a byte offset of the list.
type ToolListError struct {
	Offset  int
	Message string
}

// Error implements error.
func (e *ToolListError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Message) }

// Unwrap lets errors.Is match ErrInvalidToolRule.
func (e *ToolListError) Unwrap() error { return ErrInvalidToolRule }
