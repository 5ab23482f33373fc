package agentdef

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var (
	// agentNameRE is Claude Code's subagent name syntax: lowercase letters,
	// digits and hyphens, no leading hyphen (and so no ':').
	agentNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	// agentIDRE is what fullsend accepts as an agent's name, which is also
	// its policy file name and its identity at the forge proxy and the
	// spawn service (forge.ValidAgentName, kept equal by
	// TestAgentNameSyntaxMatchesForge): Claude Code's syntax, and the
	// letters, dots and underscores Claude Code loads all the same
	// (dotnet-framework-4.8-expert), never a space or a slash.
	agentIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	// modelRE accepts aliases (opus, sonnet[1m]) and full ids
	// (claude-sonnet-4-6@default, provider/model-id).
	modelRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@/\[\]-]{0,127}$`)
)

// parseClaudeAgent decodes a Claude Code subagent definition.
func parseClaudeAgent(d *decoder, doc *document) *Agent {
	a := &Agent{File: doc.file, Format: FormatClaude}
	d.keyHints, d.keyErrors, d.lenient = openCodeKeyHints, openCodeKeyErrors, true
	f := d.fields(doc.root, "", claudeAgentKeys)
	d.keyHints, d.keyErrors, d.lenient = nil, nil, false
	if v, ok := f["name"]; ok {
		d.claudeAgentName(a, doc, v)
	} else {
		d.errAt(d.pos(doc.root), "name", "missing required field name", "add name: my-agent")
	}
	a.Description = requiredDescription(d, doc.root, f)
	if v, ok := f["model"]; ok {
		d.claudeModel(a, v)
	}
	if v, ok := f["permissionMode"]; ok {
		d.claudePermissionMode(a, v)
	}
	if v, ok := f["skills"]; ok {
		a.Skills = d.nameRefs(v.value, "skills", skillNameRE, "a skill name: lowercase letters, digits and single hyphens")
	}
	d.checkFields(f, claudeAgentChecks)
	if v, ok := f["mcpServers"]; ok {
		a.MCPServers = mcpServers(v.value, d.pos)
	}
	if v, ok := f["sandbox"]; ok {
		a.Sandbox = d.sandbox(v.value, "sandbox")
	}
	d.claudeTools(a, doc, f)
	if v, ok := f["memory"]; ok {
		d.claudeMemory(a, v)
	}
	return a
}

// claudeMemory reads memory, the scope of the agent's persistent memory
// directory, and grants a named agent with a tool list access to it.
func (d *decoder) claudeMemory(a *Agent, v field) {
	if s, good := d.enum(v.value, "memory", memoryScopes...); good && a.Name != "" && !a.ToolsOmitted {
		a.Tools = append(a.Tools, memoryTools(s, a.Name, d.pos(v.value))...)
	}
}

// claudeAgentChecks check the subagent fields the compiler does not read,
// in the order they are reported.
var claudeAgentChecks = []fieldCheck{
	{"mcpServers", checkMCPServers},
	{"hooks", checkMapping},
	{"maxTurns", checkInteger(1, 1<<20)},
	{"background", checkBoolean},
	{"effort", checkEnum(effortLevels...)},
	{"isolation", checkEnum(isolationModes...)},
	{"color", checkNonEmpty},
	{"initialPrompt", checkString},
}

// claudeAgentName reads the agent's name: Claude Code's name syntax, and
// (a warning) the same as the file's name.
func (d *decoder) claudeAgentName(a *Agent, doc *document, v field) {
	s, good := d.str(v.value, "name")
	if !good {
		return
	}
	a.Name, a.NamePos = s, d.pos(v.value)
	switch {
	case !agentIDRE.MatchString(s):
		d.errAt(a.NamePos, "name", fmt.Sprintf("invalid agent name %q", s),
			"lowercase letters, digits and hyphens, not starting with a hyphen, at most 64 characters: the name is the policy file's name and the agent's identity")
	case !agentNameRE.MatchString(s):
		// Claude Code's loader only requires a string (anthropics'
		// subagent docs give the lowercase-and-hyphens syntax).
		d.warnAt(a.NamePos, "name", fmt.Sprintf("agent name %q is not Claude Code's documented syntax; Claude Code loads it, and so does fullsend", s),
			"lowercase letters, digits and hyphens, not starting with a hyphen, at most 64 characters")
	case s != strings.TrimSuffix(path.Base(doc.file), ".md"):
		d.warnAt(a.NamePos, "name", fmt.Sprintf("agent name %q differs from its file name %q", s, strings.TrimSuffix(path.Base(doc.file), ".md")),
			"name the file after the agent so both tools and people find it")
	}
}

// claudeModel reads a model alias or full model id.
func (d *decoder) claudeModel(a *Agent, v field) {
	s, good := d.str(v.value, "model")
	if !good {
		return
	}
	if !modelRE.MatchString(s) {
		d.errAt(d.pos(v.value), "model", fmt.Sprintf("invalid model %q", s),
			"sonnet, opus, haiku, inherit, or a full model id such as claude-sonnet-4-6@default")
		return
	}
	a.Model, a.ModelPos = s, d.pos(v.value)
}

// claudePermissionMode reads permissionMode, warning about
// bypassPermissions.
func (d *decoder) claudePermissionMode(a *Agent, v field) {
	s, good := d.enum(v.value, "permissionMode", permissionModes...)
	if !good {
		return
	}
	a.PermissionMode = s
	if s == "bypassPermissions" {
		d.warnAt(d.pos(v.value), "permissionMode", "bypassPermissions turns off Claude Code's own permission checks",
			"the sandbox policy is then the only boundary; prefer dontAsk or plan")
	}
}

// checkMCPServers checks that mcpServers is a list or mapping, and warns
// that the servers are not compiled.
func checkMCPServers(d *decoder, v field, name string) {
	switch v.value.Kind {
	case yaml.MappingNode:
		d.mcpDefinitions(v.value, name)
	case yaml.SequenceNode:
		for i, it := range v.value.Content {
			d.mcpListItem(it, fieldIndex(name, i))
		}
	default:
		d.errAt(d.pos(v.value), name, fmt.Sprintf("want a list or mapping, got a %s", kindName(v.value)), "")
	}
}

// mcpDefinitions checks that each server of a name-to-definition mapping
// is defined by a mapping.
func (d *decoder) mcpDefinitions(m *yaml.Node, prefix string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if def := m.Content[i+1]; def.Kind != yaml.MappingNode {
			d.errAt(d.pos(def), fieldPath(prefix, m.Content[i].Value), fmt.Sprintf("want a server definition (a mapping), got a %s", kindName(def)),
				"write {type: http, url: https://...} or {command: ..., args: [...]}")
		}
	}
}

// mcpListItem checks one item of an mcpServers list: a configured
// server's name or an inline {name: definition}.
func (d *decoder) mcpListItem(it *yaml.Node, field string) {
	switch {
	case it.Kind == yaml.MappingNode:
		d.mcpDefinitions(it, field)
	case it.Kind == yaml.ScalarNode && it.Tag == "!!str":
		d.nonEmptyStr(it, field)
	default:
		d.errAt(d.pos(it), field, fmt.Sprintf("want a server name or an inline definition, got a %s", kindName(it)),
			"list configured server names (github) or inline definitions ({github: {type: http, url: ...}})")
	}
}

// mcpServers reads mcpServers (Claude Code's subagent field: a list whose
// items are a configured server's name or {name: config}, or a mapping of
// name to config) into the servers the agent's mcp__ tools may use. Shapes
// it does not know are left alone: checkMCPServers reports the field.
func mcpServers(n *yaml.Node, pos func(*yaml.Node) Pos) []MCPServerDecl {
	var out []MCPServerDecl
	switch n.Kind {
	case yaml.SequenceNode:
		for _, it := range n.Content {
			switch it.Kind {
			case yaml.ScalarNode:
				out = append(out, MCPServerDecl{Name: it.Value, Pos: pos(it)})
			case yaml.MappingNode:
				out = appendInlineServers(out, it, pos)
			}
		}
	case yaml.MappingNode:
		out = appendInlineServers(out, n, pos)
	}
	return out
}

// appendInlineServers appends the servers of a name-to-definition mapping.
func appendInlineServers(out []MCPServerDecl, m *yaml.Node, pos func(*yaml.Node) Pos) []MCPServerDecl {
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, inlineServer(m.Content[i], m.Content[i+1], pos))
	}
	return out
}

// inlineServer reads the server named by k and defined by v; a definition
// that is not a mapping yields the name alone.
func inlineServer(k, v *yaml.Node, pos func(*yaml.Node) Pos) MCPServerDecl {
	s := MCPServerDecl{Name: k.Value, Pos: pos(k)}
	if v.Kind != yaml.MappingNode {
		return s
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		switch val := v.Content[i+1].Value; v.Content[i].Value {
		case "url":
			s.setURL(val)
		case "command":
			s.Command = val
		case "type":
			s.Type = val
		}
	}
	return s
}

// setURL records an inline definition's url, and its host, port and path
// when it parses and uses no ${VAR} expansion.
func (s *MCPServerDecl) setURL(raw string) {
	s.URL = raw
	if u, err := url.Parse(raw); err == nil && !strings.Contains(raw, "${") {
		s.Host = strings.ToLower(u.Hostname())
		s.Port, s.Path = urlPort(u), u.EscapedPath()
	}
}

// claudeTools resolves tools against disallowedTools: disallowedTools are
// removed first, then tools resolve against the rest (Claude Code's order).
// Omitted tools inherit every tool, which the compiler does not grant.
func (d *decoder) claudeTools(a *Agent, doc *document, f map[string]field) {
	var disallowed []ToolRule
	if v, ok := f["disallowedTools"]; ok {
		disallowed, _ = d.toolList(v.value, "disallowedTools")
		a.Disallowed = disallowed
	}
	v, ok := f["tools"]
	if !ok {
		// The compile warns, once for every runtime (compileAgent).
		a.ToolsOmitted = true
		a.ToolsPos = d.pos(doc.root)
		return
	}
	a.ToolsPos = d.pos(v.value)
	rules, clean := d.toolList(v.value, "tools")
	a.Tools = subtractTools(rules, disallowed)
	if clean {
		d.checkToolsGrant(a, v.value, rules)
	}
}

// checkToolsGrant reports a cleanly parsed tools value n that grants
// nothing by mistake. tools: [] is an agent with no tools (it gets the
// runtime's baseline only); a blank string or blank elements are a
// mistake, and so are rules that disallowedTools all remove.
func (d *decoder) checkToolsGrant(a *Agent, n *yaml.Node, rules []ToolRule) {
	switch {
	case len(rules) == 0 && blankTools(n):
		d.errAt(a.ToolsPos, "tools", "tools is empty",
			"list the tools the agent needs, such as Read, Grep, Bash(gh *), or write tools: [] for an agent with no tools")
	case len(rules) > 0 && len(a.Tools) == 0:
		d.errAt(a.ToolsPos, "tools", "tools resolve to nothing: every tool is removed by disallowedTools",
			"remove the disallowedTools entries that cancel tools, or list the tools the agent needs")
	}
}

// blankTools reports whether a tools value holds only blank text: a blank
// string, or a non-empty list of blank strings.
func blankTools(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.ScalarNode:
		return strings.TrimSpace(n.Value) == ""
	case yaml.SequenceNode:
		for _, e := range n.Content {
			if e.Kind != yaml.ScalarNode || strings.TrimSpace(e.Value) != "" {
				return false
			}
		}
		return len(n.Content) > 0
	}
	return false
}

// memoryTools are the rules Claude Code adds for an agent's persistent
// memory directory: Read, Write and Edit limited to that directory.
func memoryTools(scope, agent string, pos Pos) []ToolRule {
	dir := map[string]string{
		"user":    "~/.claude/agent-memory/" + agent + "/**",
		"project": ".claude/agent-memory/" + agent + "/**",
		"local":   ".claude/agent-memory-local/" + agent + "/**",
	}[scope]
	var out []ToolRule
	for _, t := range []string{"Read", "Write", "Edit"} {
		raw := t + "(" + dir + ")"
		out = append(out, ToolRule{Raw: raw, Pos: pos, Tool: t, Specifier: dir, HasSpecifier: true, Path: dir})
	}
	return out
}

// openCodeKeyHints explain OpenCode fields found in a file read as Claude
// Code; openCodeKeyErrors keep them errors: the file is read in the wrong
// dialect, and its OpenCode restrictions (permission) would be dropped.
var openCodeKeyHints, openCodeKeyErrors = map[string]string{}, map[string]bool{}

func init() {
	for _, k := range []string{"permission", "mode", "temperature", "top_p", "steps", "maxSteps", "prompt", "variant", "hidden", "disable", "options"} {
		openCodeKeyHints[k] = "this is an OpenCode field: put OpenCode agents under .opencode/agent/, or under agents/ without a name field"
		openCodeKeyErrors[k] = true
	}
	// A skill's allowed-tools in an agent: Claude Code ignores it, and the
	// agent inherits every tool.
	for _, k := range []string{"allowed-tools", "allowed_tools", "allowedTools"} {
		openCodeKeyHints[k] = "a Claude Code agent lists its tools under tools: (allowed-tools is a skill field)"
		openCodeKeyErrors[k] = true
	}
}

// requiredDescription reads the required description field.
func requiredDescription(d *decoder, root *yaml.Node, f map[string]field) string {
	v, ok := f["description"]
	if !ok {
		d.errAt(d.pos(root), "description", "missing required field description",
			"describe what the agent or skill does and when to use it")
		return ""
	}
	s, _ := d.nonEmptyStr(v.value, "description")
	return s
}

// hasKey reports whether a mapping node has key k.
func hasKey(m *yaml.Node, k string) bool {
	if m == nil || m.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k {
			return true
		}
	}
	return false
}

// nameRefs reads a list of names (or one string of comma-separated names).
func (d *decoder) nameRefs(n *yaml.Node, name string, re *regexp.Regexp, hint string) []NameRef {
	var items []stringItem
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		off := 0
		for _, part := range strings.Split(n.Value, ",") {
			s := strings.TrimSpace(part)
			items = append(items, stringItem{value: s, node: &yaml.Node{Line: n.Line, Column: d.scalarPos(n, off+strings.Index(part, s)).Column}, field: name})
			off += len(part) + 1
		}
	} else {
		items, _ = d.stringList(n, name, false)
	}
	var out []NameRef
	seen := map[string]bool{}
	for _, it := range items {
		p := d.pos(it.node)
		switch {
		case !re.MatchString(it.value):
			d.errAt(p, it.field, fmt.Sprintf("invalid name %q", it.value), hint)
		case seen[it.value]:
			d.errAt(p, it.field, fmt.Sprintf("%q listed twice", it.value), "list each name once")
		default:
			seen[it.value] = true
			out = append(out, NameRef{Name: it.value, Pos: p})
		}
	}
	return out
}

// urlPort is u's port, or its scheme's default (80 for http, else 443).
func urlPort(u *url.URL) int {
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err == nil && n > 0 && n <= 65535 {
			return n
		}
		return 0
	}
	if strings.EqualFold(u.Scheme, "http") {
		return 80
	}
	return 443
}
