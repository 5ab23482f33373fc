package agentdef

import (
	"cmp"
	"fmt"
	"strings"
)

// Pos is a position in an input file, 1-based. File is slash-separated and
// relative to the project root.
type Pos struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// Compare orders positions by file, then line, then column, numerically
// (file:9 before file:10): -1, 0 or +1, as cmp.Compare. Diagnostics are
// reported in this order.
func (p Pos) Compare(q Pos) int {
	return cmp.Or(cmp.Compare(p.File, q.File), cmp.Compare(p.Line, q.Line), cmp.Compare(p.Column, q.Column))
}

// String renders the position as file:line:column.
func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Column == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// Format is the dialect an agent definition is written in.
type Format string

// Agent definition formats.
const (
	FormatClaude   Format = "claude"
	FormatOpenCode Format = "opencode"
)

// Project is a parsed agent system: every agent and skill found under a
// project root, normalized, with the position of every value.
type Project struct {
	// Agents sorted by name.
	Agents []*Agent
	// Skills by name.
	Skills map[string]*Skill
	// Files maps every input file read (slash path relative to the root) to
	// the sha256 of its bytes, for the manifest.
	Files map[string]string
	// Warnings are findings that do not stop compilation.
	Warnings Diagnostics

	// byName holds every agent read, by name, including those left out of
	// Agents because their file has an error (for --agent selection).
	byName map[string]*Agent
}

// Defined returns every agent read, by name, including those left out of
// Agents because their file has an error (what --agent may select and a
// spawn may name). It is nil for a Project not made by the loader; callers
// must not modify it.
func (p *Project) Defined() map[string]*Agent { return p.byName }

// Agent is one normalized agent definition.
type Agent struct {
	Name    string
	NamePos Pos
	// File is the definition's path relative to the project root.
	File   string
	Format Format
	// Description is the required description (used in explain output).
	Description string
	// Mode is OpenCode's mode (primary, subagent, all); empty for Claude Code.
	Mode     string
	Model    string
	ModelPos Pos
	// PermissionMode is Claude Code's permissionMode, if set.
	PermissionMode string
	// Tools holds the allowed tool rules after disallowed tools were removed.
	// Every rule keeps its own position.
	Tools []ToolRule
	// ToolsOmitted is true when the definition grants no explicit tool list
	// (Claude Code: `tools` omitted = inherits all tools). The compiler treats
	// this as "no capabilities beyond the baseline" and warns.
	ToolsOmitted bool
	ToolsPos     Pos
	// Disallowed holds the parsed disallowedTools (Claude Code) or denied
	// permissions (OpenCode), kept for explain output.
	Disallowed []ToolRule
	// Skills names the skills preloaded into the agent's context.
	Skills []NameRef
	// MCPServers are the MCP servers of Claude Code's mcpServers field: a
	// name referencing a configured server, or an inline definition.
	MCPServers []MCPServerDecl `json:",omitempty"`
	// Sandbox is the agent's own `sandbox:` declaration, if any.
	Sandbox *Sandbox
}

// Skill is one normalized Agent Skill (SKILL.md).
type Skill struct {
	Name    string
	NamePos Pos
	// File is the SKILL.md path relative to the project root; Dir its directory.
	File string
	Dir  string
	// Description is the required description.
	Description  string
	AllowedTools []ToolRule
	// PolicyFile is fullsend's `policy` field: a path, relative to the skill
	// directory, to an OpenShell policy fragment.
	PolicyFile    string
	PolicyFilePos Pos
	// Dependencies is fullsend's `dependencies` field, kept for the manifest.
	Dependencies []NameRef
	Sandbox      *Sandbox
	// Disallowed holds the parsed `disallowed-tools` (Claude Code's skill
	// extension); matching entries were already removed from AllowedTools.
	Disallowed []ToolRule
}

// NameRef is a name written at a position (a skill, a profile, a subagent).
type NameRef struct {
	Name string
	Pos  Pos
}

// ToolRule is one parsed tool permission rule, `Tool` or `Tool(specifier)`.
type ToolRule struct {
	// Raw is the rule as written; for an OpenCode permission entry, the
	// equivalent Claude Code rule (`bash: {"git diff *": allow}` is
	// `Bash(git diff *)`), positioned at the entry.
	Raw string
	Pos Pos
	// Tool is the canonical Claude Code tool name: Bash, Read, Edit, Write,
	// Grep, Glob, LS, WebFetch, WebSearch, Agent (also for Task), Skill,
	// NotebookEdit, MultiEdit, TodoWrite, ... or "mcp" for mcp__server__tool.
	// OpenCode permissions map onto the same names (bash -> Bash, edit -> Edit,
	// webfetch -> WebFetch, task -> Agent, ...).
	Tool string
	// Specifier is the text inside the parentheses; HasSpecifier tells
	// `Bash` apart from `Bash()`.
	Specifier    string
	HasSpecifier bool

	// Commands holds the parsed Bash specifier: one pattern per command for
	// `Bash(gh,curl,jq)`; one for `Bash(gh api:*)` or `Bash(grep *)`.
	// Empty for bare `Bash` and for `Bash(*)`, which mean any command.
	Commands []CommandPattern
	// Domain is WebFetch's `domain:` value (`example.com`, `*.example.com`).
	Domain string
	// Path is the gitignore-style path of Read/Edit/Write rules as written.
	Path string
	// Agents lists the subagents of Agent(a, b) / Task(a, b).
	Agents []string
	// MCPServer and MCPTool split mcp__server__tool.
	MCPServer, MCPTool string
	// SkillName is the skill of a Skill(name) rule; empty for bare Skill.
	SkillName string
}

// AnyCommand reports whether a Bash rule allows any command.
func (r ToolRule) AnyCommand() bool {
	return r.Tool == "Bash" && len(r.Commands) == 0
}

// CommandPattern is one Bash command allowance.
type CommandPattern struct {
	// Command is the program name (`gh`, `curl`), never a path or glob.
	Command string
	// Args is the argument glob after the command (`api *`, `*`); empty when
	// the rule names only the command (`Bash(gh,curl,jq)` allows any args).
	Args string
	// Wrapper is true when Command runs other programs or arbitrary code
	// (npx, env, sudo, xargs, find, sh, python, docker, ...) and Args leave it
	// free to do so: the pattern then allows any command. Wrappers are never
	// stripped (Claude Code does not strip them either).
	Wrapper bool
}

// String renders the pattern in Claude Code's `cmd args` form.
func (c CommandPattern) String() string {
	if c.Args == "" {
		return c.Command
	}
	return c.Command + " " + c.Args
}

// Sandbox is fullsend's `sandbox:` block in agent or skill frontmatter: what
// an agent needs that its tools cannot imply.
type Sandbox struct {
	Pos Pos
	// Tier caps the agent's capabilities: read-only, network or full.
	Tier    string
	TierPos Pos
	// Provider selects the model API baseline (anthropic, vertex, openai, ...).
	Provider    string
	ProviderPos Pos
	// Profiles names catalog profiles (forge-read, vertex-ai, ...).
	Profiles []NameRef
	// Providers names OpenShell provider profiles (providers_decl.go).
	Providers []ProviderDecl `json:",omitempty"`
	// Endpoints are explicit network declarations.
	Endpoints []EndpointDecl
	// ReadOnly and ReadWrite are extra filesystem paths.
	ReadOnly  []PathDecl
	ReadWrite []PathDecl
	// Outputs are paths inside the sandbox the runner downloads after a run.
	Outputs []PathDecl
	// SpawnWidening declares what the agents it spawns may hold beyond
	// its own policy (widening_decl.go).
	SpawnWidening []SpawnWideningDecl `json:",omitempty"`
	// PolicyFile is a path (relative to the declaring file's directory) to an
	// OpenShell policy fragment whose network policies are merged in: the
	// form experiment 0005 used (`sandbox: policies/triage.yaml`).
	PolicyFile    string
	PolicyFilePos Pos
}

// EndpointDecl declares one network endpoint.
type EndpointDecl struct {
	Pos  Pos
	Host string
	// Port defaults to 443.
	Port int
	// Protocol defaults to rest.
	Protocol string
	// Access is a preset (read-only, read-write, full); exclusive with Rules.
	Access string
	// Rules are "METHOD /path" allowances, each with its position.
	Rules []RuleDecl
	// AllowedIPs for hosts that resolve to private addresses ({{HOST_IP}}).
	AllowedIPs []string
	// Binaries overrides the binaries allowed to reach this endpoint; when
	// empty, the binaries implied by the agent's tools and runtime are used.
	Binaries []PathDecl
}

// RuleDecl is one `METHOD /path` rule in a sandbox endpoint declaration.
type RuleDecl struct {
	Pos    Pos
	Method string
	Path   string
	// Query maps a query parameter to a glob.
	Query map[string]string
}

// PathDecl is a path written at a position.
type PathDecl struct {
	Path string
	Pos  Pos
}

// Severity of a diagnostic.
type Severity string

// Diagnostic severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	// SeverityNote says what a run did not do and why (expectations of an
	// agent that did not compile were skipped); it never fails a run, not
	// even under --strict.
	SeverityNote Severity = "note"
)

// Diagnostic is one problem found in the inputs, with its position, the
// field it concerns, and a hint on how to fix it.
type Diagnostic struct {
	Pos      Pos      `json:"pos"`
	Severity Severity `json:"severity"`
	// Field is the frontmatter field path, e.g. `tools[2]` or `sandbox.endpoints[0].host`.
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

// String renders the diagnostic as `file:line:col: severity: field: message (hint: ...)`.
func (d Diagnostic) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s: ", d.Pos, d.Severity)
	if d.Field != "" {
		b.WriteString(d.Field + ": ")
	}
	b.WriteString(d.Message)
	if d.Hint != "" {
		b.WriteString(" (hint: " + d.Hint + ")")
	}
	return b.String()
}

// Diagnostics is a list of diagnostics; as an error it reports every error-severity entry.
type Diagnostics []Diagnostic

// Error implements error.
func (ds Diagnostics) Error() string {
	var lines []string
	for _, d := range ds {
		lines = append(lines, d.String())
	}
	return strings.Join(lines, "\n")
}

// Errors returns the error-severity diagnostics.
func (ds Diagnostics) Errors() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == SeverityError {
			out = append(out, d)
		}
	}
	return out
}

// Strict returns the diagnostics with every warning made an error, for
// projects that want every warning (an unknown field, an unknown tool, a
// skill-spec violation the runtimes tolerate) enforced.
func (ds Diagnostics) Strict() Diagnostics {
	out := make(Diagnostics, len(ds))
	for i, d := range ds {
		if d.Severity == SeverityWarning {
			d.Severity = SeverityError
			d.Message += " (strict: warnings are errors)"
		}
		out[i] = d
	}
	return out
}

// Err returns the error-severity diagnostics as an error, or nil when there are none.
func (ds Diagnostics) Err() error {
	if errs := ds.Errors(); len(errs) > 0 {
		return errs
	}
	return nil
}

// MCPServerDecl is one entry of an agent's mcpServers: a server name and,
// for an inline remote definition, the host of its url.
type MCPServerDecl struct {
	Name string
	Pos  Pos
	// Host is the url's host of an inline http/sse definition ("" for a
	// name reference or a stdio command).
	Host string
	// Command is set for an inline stdio definition: the server runs inside
	// the sandbox as that program.
	Command string
	// URL is the definition's url as written; Host, Port and Path stay
	// unset when it uses Claude Code's ${VAR} expansion.
	URL string
	// Type is the definition's transport (http, sse, stdio; "" when unset).
	Type string
	// Port and Path are the url's port (the scheme's default when unset)
	// and path, for an inline http/sse definition.
	Port int
	Path string
}
