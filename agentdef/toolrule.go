package agentdef

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
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
	// UnknownTool is set when the rule is well formed but names a tool
	// fullsend does not know: the runtimes ignore it, so the rule grants
	// nothing.
	UnknownTool bool
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
	"SendMessage": specNone, "TeamCreate": specNone, "TeamDelete": specNone,
	"CronCreate": specNone, "CronDelete": specNone, "CronList": specNone,
	"EnterPlanMode": specNone, "ToolSearch": specNone,
	// git worktrees (fs write)
	"EnterWorktree": specNone, "ExitWorktree": specNone,
	// MCP resources of the agent's configured servers
	"ListMcpResourcesTool": specNone, "ReadMcpResourceTool": specNone,
	// publishes a file to claude.ai (the runtime's own egress)
	"Artifact": specNone,
}

// foreignRuntimes names the runtimes whose built-in tool is called name,
// from the sections of foreignTools.
func foreignRuntimes(name string) string {
	var rs []string
	for _, r := range []struct {
		runtime string
		names   string
	}{
		{"OpenCode", " bash read glob grep list edit write patch multiedit apply_patch task webfetch websearch codesearch todowrite todoread skill lsp question plan_exit "},
		{"Gemini CLI", " run_shell_command read_file read_many_files list_directory glob grep_search write_file replace web_fetch google_web_search write_todos activate_skill ask_user enter_plan_mode exit_plan_mode save_memory "},
		{"Codex", " shell exec_command apply_patch update_plan web_search view_image list_dir grep_files list_mcp_resources read_mcp_resource "},
		{"pi", " read bash edit write grep find ls "},
	} {
		if strings.Contains(r.names, " "+name+" ") {
			rs = append(rs, r.runtime)
		}
	}
	if len(rs) == 0 {
		return "another runtime"
	}
	return strings.Join(rs, " and ")
}

// foreignTools maps the built-in tool names of the other agent runtimes
// (OpenCode, Codex, Gemini CLI, pi) to the Claude Code tool that does the
// same, so that a rule written in another runtime's vocabulary gets a
// did-you-mean naming the tool to write instead. catalog/tools.cue lists the
// same names under each tool's aliases, with the source they come from
// (TestForeignToolsMatchCatalog).
var foreignTools = map[string]string{
	// OpenCode packages/opencode/src/tool/registry.ts
	"bash": "Bash", "read": "Read", "glob": "Glob", "grep": "Grep", "list": "LS", "edit": "Edit",
	"write": "Write", "patch": "Edit", "multiedit": "MultiEdit", "apply_patch": "Edit", "task": "Agent",
	"webfetch": "WebFetch", "websearch": "WebSearch", "codesearch": "WebSearch", "todowrite": "TodoWrite",
	"todoread": "TodoWrite", "skill": "Skill", "lsp": "LSP", "question": "AskUserQuestion",
	"plan_exit": "ExitPlanMode",
	// Gemini CLI packages/core/src/tools/definitions/base-declarations.ts
	"run_shell_command": "Bash", "read_file": "Read", "read_many_files": "Read", "list_directory": "LS",
	"grep_search": "Grep", "write_file": "Write", "replace": "Edit",
	"web_fetch": "WebFetch", "google_web_search": "WebSearch", "write_todos": "TodoWrite",
	"activate_skill": "Skill", "ask_user": "AskUserQuestion", "enter_plan_mode": "EnterPlanMode",
	"exit_plan_mode": "ExitPlanMode", "save_memory": "Write",
	// Codex codex-rs/core/src/tools (shell, apply_patch, update_plan, web_search, view_image)
	"shell": "Bash", "exec_command": "Bash", "update_plan": "TodoWrite", "web_search": "WebSearch",
	"view_image": "Read", "list_dir": "LS", "grep_files": "Grep",
	"list_mcp_resources": "ListMcpResourcesTool", "read_mcp_resource": "ReadMcpResourceTool",
	// pi (badlogic/pi-mono packages/coding-agent): read, bash, edit, write, grep, find, ls
	"find": "Glob", "ls": "LS",
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
	agentRefRE  = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$`)
	skillNameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	domainRE    = regexp.MustCompile(`^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
)

// ParseToolRule parses one rule, `Tool` or `Tool(specifier)`, written at
// pos. Errors are *RuleError values with a hint.
func ParseToolRule(raw string, pos Pos) (ToolRule, error) {
	r, f := parseToolRule(ToolRule{Raw: raw, Pos: pos})
	if f == nil {
		return r, nil
	}
	p := pos
	if p.Column > 0 {
		p.Column += f.off
	}
	return ToolRule{}, &RuleError{Pos: p, Message: fmt.Sprintf("tool rule %q: ", raw) + f.msg, Hint: f.hint, UnknownTool: f.unknownTool}
}

// ruleFailure is a tool-rule error at a byte offset of the rule, before it
// is placed at the rule's position.
type ruleFailure struct {
	off         int
	hint        string
	msg         string
	unknownTool bool
}

func failAt(off int, hint, format string, args ...any) *ruleFailure {
	return &ruleFailure{off: off, hint: hint, msg: fmt.Sprintf(format, args...)}
}

// parseToolRule parses r.Raw into r.
func parseToolRule(r ToolRule) (ToolRule, *ruleFailure) {
	name, spec, hasSpec, f := splitToolRule(r.Raw)
	if f != nil {
		return ToolRule{}, f
	}
	if strings.HasPrefix(name, "mcp__") {
		return parseMCPRule(r, name, hasSpec)
	}
	kind, f := lookupTool(name)
	if f != nil {
		return ToolRule{}, f
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
		return ToolRule{}, failAt(specOff, fmt.Sprintf("write %s without parentheses to allow it unrestricted, or put a specifier inside", name), "empty specifier")
	}
	r.Specifier, r.HasSpecifier = spec, true
	if f := parseSpecifier(&r, kind, name, spec, specOff); f != nil {
		return ToolRule{}, f
	}
	return r, nil
}

// splitToolRule splits `Tool` or `Tool(specifier)` into the name and the
// specifier, checking blanks and parentheses.
func splitToolRule(s string) (name, spec string, hasSpec bool, f *ruleFailure) {
	if strings.TrimSpace(s) == "" {
		return "", "", false, failAt(0, "name a tool such as Read or Bash(gh *)", "empty tool rule")
	}
	if s != strings.TrimSpace(s) {
		return "", "", false, failAt(0, "remove the surrounding blanks", "leading or trailing blanks")
	}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if i := strings.IndexByte(s, ')'); i >= 0 {
			return "", "", false, failAt(i, "open the parenthesis: Tool(specifier)", "unbalanced parentheses")
		}
		return s, "", false, nil
	}
	if !strings.HasSuffix(s, ")") {
		if strings.Count(s, "(") > strings.Count(s, ")") {
			return "", "", false, failAt(open, "close the parenthesis: Tool(specifier)", "unbalanced parentheses")
		}
		return "", "", false, failAt(strings.LastIndexByte(s, ')')+1, "nothing may follow the closing parenthesis", "text after the specifier")
	}
	spec = s[open+1 : len(s)-1]
	if !parenDepthOK(spec) {
		return "", "", false, failAt(open, "balance the parentheses inside the specifier", "unbalanced parentheses")
	}
	return s[:open], spec, true, nil
}

// parseMCPRule parses mcp__<server>[__<tool>], which takes no specifier.
func parseMCPRule(r ToolRule, name string, hasSpec bool) (ToolRule, *ruleFailure) {
	m := mcpRE.FindStringSubmatch(name)
	if m == nil {
		return ToolRule{}, failAt(0, "write mcp__<server>__<tool>, e.g. mcp__github__get_issue", "malformed MCP tool name")
	}
	if hasSpec {
		return ToolRule{}, failAt(len(name), "MCP tools take no specifier", "unexpected specifier")
	}
	r.Tool, r.MCPServer, r.MCPTool = "mcp", m[1], m[2]
	return r, nil
}

// lookupTool returns the specifier kind of a known Claude Code tool.
func lookupTool(name string) (specKind, *ruleFailure) {
	if !toolNameRE.MatchString(name) {
		return specNone, failAt(0, "a tool name is letters, digits and '_', such as Bash or WebFetch", "malformed tool name %q", name)
	}
	kind, known := claudeTools[name]
	if !known {
		f := failAt(0, unknownToolHint(name), "unknown tool %q", name)
		f.unknownTool = true
		return specNone, f
	}
	return kind, nil
}

// unknownToolHint lists the known tools, after the tool another runtime
// calls name or the closest known one, if any.
func unknownToolHint(name string) string {
	hint := "known tools: " + strings.Join(KnownTools(), ", ") + ", mcp__<server>__<tool>"
	if sg, ok := foreignTools[name]; ok {
		return fmt.Sprintf("did you mean %q? (%s is %s's name for it) %s", sg, name, foreignRuntimes(name), hint)
	} else if sg, ok := foreignTools[strings.ToLower(name)]; ok {
		return fmt.Sprintf("did you mean %q? %s", sg, hint)
	} else if sg := suggest(name, KnownTools()); sg != "" {
		return fmt.Sprintf("did you mean %q? %s", sg, hint)
	}
	return hint
}

// parseSpecifier parses the non-empty specifier of tool name by its kind
// into r; specOff is the specifier's offset in the rule.
func parseSpecifier(r *ToolRule, kind specKind, name, spec string, specOff int) *ruleFailure {
	switch kind {
	case specNone:
		return failAt(specOff, fmt.Sprintf("write plain %s", name), "%s takes no specifier", name)
	case specCommand:
		return parseCommandSpec(r, spec, specOff)
	case specPath:
		return parsePathSpec(r, spec, specOff)
	case specDomain:
		return parseDomainSpec(r, spec, specOff)
	case specAgents:
		return parseAgentsSpec(r, spec, specOff)
	case specSkill:
		return parseSkillSpec(r, spec, specOff)
	}
	return nil
}

// parseCommandSpec parses Bash(commands).
func parseCommandSpec(r *ToolRule, spec string, specOff int) *ruleFailure {
	cmds, off, hint, err := parseCommands(spec)
	if err != nil {
		return failAt(specOff+off, hint, "%v", err)
	}
	r.Commands = cmds
	return nil
}

// parsePathSpec parses the gitignore-style path of Read(path) and the
// other file tools.
func parsePathSpec(r *ToolRule, spec string, specOff int) *ruleFailure {
	if hint, err := checkRulePath(spec); err != nil {
		return failAt(specOff, hint, "%v", err)
	}
	r.Path = spec
	return nil
}

// parseSkillSpec parses Skill(name), Skill(name:*) or Skill(name *).
func parseSkillSpec(r *ToolRule, spec string, specOff int) *ruleFailure {
	n := strings.TrimSpace(spec)
	n = strings.TrimSuffix(strings.TrimSuffix(n, ":*"), " *")
	if !skillNameRE.MatchString(n) {
		return failAt(specOff, "a skill name: lowercase letters, digits and single hyphens", "invalid skill name %q", n)
	}
	r.SkillName = n
	return nil
}

// parseDomainSpec parses WebFetch(domain:host).
func parseDomainSpec(r *ToolRule, spec string, specOff int) *ruleFailure {
	host, ok := strings.CutPrefix(spec, "domain:")
	if !ok {
		return failAt(specOff, "write WebFetch(domain:example.com) or WebFetch(domain:*.example.com)", "WebFetch specifier must start with domain:")
	}
	if !domainRE.MatchString(host) || len(host) > 253 {
		hint := "a lowercase host name with at least two labels; *.example.com matches subdomains only"
		if strings.ToLower(host) != host {
			hint = "host names are lowercase: " + strings.ToLower(host)
		}
		return failAt(specOff+len("domain:"), hint, "invalid domain %q", host)
	}
	r.Domain = host
	return nil
}

// parseAgentsSpec parses Agent(*) or Agent(a, b): distinct agent names.
func parseAgentsSpec(r *ToolRule, spec string, specOff int) *ruleFailure {
	if strings.TrimSpace(spec) == "*" {
		return nil // any subagent
	}
	off := specOff
	for _, part := range strings.Split(spec, ",") {
		a := strings.TrimSpace(part)
		if !agentRefRE.MatchString(a) {
			return failAt(off+strings.Index(part, a), "list agent names separated by commas: Agent(reviewer, tester)", "invalid agent name %q", a)
		}
		if containsString(r.Agents, a) {
			return failAt(off+strings.Index(part, a), "list each agent once", "agent %q listed twice", a)
		}
		r.Agents = append(r.Agents, a)
		off += len(part) + 1
	}
	return nil
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
		cp, errOff, hint, err := parseCommand(item)
		if err != nil {
			return nil, itemOff + errOff, hint, err
		}
		out = append(out, cp)
	}
	return out, 0, "", nil
}

// parseCommand parses one item of a Bash specifier, `cmd args` or
// `cmd args:*`. On error it returns the byte offset inside item and a hint.
func parseCommand(item string) (CommandPattern, int, string, error) {
	if item == "" {
		return CommandPattern{}, 0, "separate commands with single commas: Bash(gh,curl,jq)", errors.New("empty command in list")
	}
	if item == "*" {
		return CommandPattern{}, 0, "write Bash or Bash(*) alone to allow any command", errors.New("'*' inside a command list")
	}
	if op, i := shellOperator(item); op != "" {
		return CommandPattern{}, i, "a rule names one command and its arguments; write one rule per command", fmt.Errorf("shell operator %q in command pattern", op)
	}
	item, i := legacyPrefix(item)
	if i >= 0 {
		return CommandPattern{}, i, "':*' may only end the pattern, as in Bash(gh api:*)", errors.New("':*' in the middle of a command pattern")
	}
	cmd, args, _ := strings.Cut(item, " ")
	args = strings.Join(strings.Fields(args), " ")
	if hint, err := checkCommandName(cmd); err != nil {
		return CommandPattern{}, 0, hint, err
	}
	return CommandPattern{Command: cmd, Args: args, Wrapper: wrapperCommands[cmd] && (args == "" || strings.ContainsAny(args, "*?["))}, 0, "", nil
}

// shellOperator returns the first of shellOperators that item holds, and
// its offset; "" when it holds none.
func shellOperator(item string) (string, int) {
	for _, op := range shellOperators {
		if i := strings.Index(item, op); i >= 0 {
			return op, i
		}
	}
	return "", -1
}

// legacyPrefix rewrites the legacy prefix form `cmd args:*` as
// `cmd args *`. It returns the offset of a ':*' that does not end item, or
// -1.
func legacyPrefix(item string) (string, int) {
	i := strings.Index(item, ":*")
	switch {
	case i < 0:
		return item, -1
	case i != len(item)-2:
		return item, i
	}
	return strings.TrimSpace(item[:i]) + " *", -1
}

// checkCommandName rejects a command that is not a plain program name: a
// path, a glob, an environment assignment.
func checkCommandName(cmd string) (string, error) {
	switch {
	case strings.ContainsRune(cmd, '/'):
		return "name the program (gh), not its path; the catalog maps programs to binaries", fmt.Errorf("command %q is a path", cmd)
	case strings.ContainsAny(cmd, "*?[]{}"):
		return "name the program exactly; globs are allowed in the arguments only", fmt.Errorf("command %q is a glob", cmd)
	case strings.ContainsRune(cmd, '='):
		return "environment assignments cannot be allowed by a rule; name the program", fmt.Errorf("command %q is an environment assignment", cmd)
	case !commandRE.MatchString(cmd):
		return "a program name is letters, digits, '.', '_', '+' and '-'", fmt.Errorf("invalid command %q", cmd)
	}
	return "", nil
}

// checkRulePath validates a Read/Edit-style gitignore path.
func checkRulePath(p string) (string, error) {
	if strings.TrimSpace(p) != p {
		return "remove the surrounding blanks", errors.New("path has leading or trailing blanks")
	}
	if slices.Contains(strings.Split(p, "/"), "..") {
		return "write the path without '..': //abs/path for absolute, ~/p for home, p for project-relative", fmt.Errorf("path %q contains '..'", p)
	}
	if strings.ContainsFunc(p, unicode.IsControl) {
		return "remove control characters", fmt.Errorf("path %q contains a control character", p)
	}
	return "", nil
}
