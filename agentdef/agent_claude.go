package agentdef

import (
	"errors"
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
		if s, good := d.enum(v.value, "memory", memoryScopes...); good && a.Name != "" && !a.ToolsOmitted {
			a.Tools = append(a.Tools, memoryTools(s, a.Name, d.pos(v.value))...)
		}
	}
	return a
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
	if v.value.Kind != yaml.SequenceNode && v.value.Kind != yaml.MappingNode {
		d.errAt(d.pos(v.value), name, fmt.Sprintf("want a list or mapping, got a %s", kindName(v.value)), "")
		return
	}
	definitions := func(m *yaml.Node, prefix string) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if def := m.Content[i+1]; def.Kind != yaml.MappingNode {
				d.errAt(d.pos(def), fieldPath(prefix, m.Content[i].Value), fmt.Sprintf("want a server definition (a mapping), got a %s", kindName(def)),
					"write {type: http, url: https://...} or {command: ..., args: [...]}")
			}
		}
	}
	if v.value.Kind == yaml.MappingNode {
		definitions(v.value, name)
	} else {
		for i, it := range v.value.Content {
			switch {
			case it.Kind == yaml.MappingNode:
				definitions(it, fieldIndex(name, i))
			case it.Kind == yaml.ScalarNode && it.Tag == "!!str":
				d.nonEmptyStr(it, fieldIndex(name, i))
			default:
				d.errAt(d.pos(it), fieldIndex(name, i), fmt.Sprintf("want a server name or an inline definition, got a %s", kindName(it)),
					"list configured server names (github) or inline definitions ({github: {type: http, url: ...}})")
			}
		}
	}
}

// mcpServers reads mcpServers (Claude Code's subagent field: a list whose
// items are a configured server's name or {name: config}, or a mapping of
// name to config) into the servers the agent's mcp__ tools may use. Shapes
// it does not know are left alone: checkMCPServers reports the field.
func mcpServers(n *yaml.Node, pos func(*yaml.Node) Pos) []MCPServerDecl {
	var out []MCPServerDecl
	inline := func(k, v *yaml.Node) {
		s := MCPServerDecl{Name: k.Value, Pos: pos(k)}
		if v.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(v.Content); i += 2 {
				switch v.Content[i].Value {
				case "url":
					s.URL = v.Content[i+1].Value
					if u, err := url.Parse(s.URL); err == nil && !strings.Contains(s.URL, "${") {
						s.Host = strings.ToLower(u.Hostname())
						s.Port, s.Path = urlPort(u), u.EscapedPath()
					}
				case "command":
					s.Command = v.Content[i+1].Value
				case "type":
					s.Type = v.Content[i+1].Value
				}
			}
		}
		out = append(out, s)
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, it := range n.Content {
			switch it.Kind {
			case yaml.ScalarNode:
				out = append(out, MCPServerDecl{Name: it.Value, Pos: pos(it)})
			case yaml.MappingNode:
				for i := 0; i+1 < len(it.Content); i += 2 {
					inline(it.Content[i], it.Content[i+1])
				}
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			inline(n.Content[i], n.Content[i+1])
		}
	}
	return out
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
	// tools: [] is an agent with no tools (it gets the runtime's baseline
	// only); a blank string or blank elements are a mistake.
	if clean && len(rules) == 0 && blankTools(v.value) {
		d.errAt(a.ToolsPos, "tools", "tools is empty",
			"list the tools the agent needs, such as Read, Grep, Bash(gh *), or write tools: [] for an agent with no tools")
	}
	a.Tools = subtractTools(rules, disallowed)
	if clean && len(rules) > 0 && len(a.Tools) == 0 {
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

// toolList reads a tool list: one string of comma- and/or space-separated
// rules, or a YAML list whose elements are rules (each element may itself
// hold several). It returns the rules and whether all parsed cleanly.
func (d *decoder) toolList(n *yaml.Node, name string) ([]ToolRule, bool) {
	var elems []stringItem
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		elems = []stringItem{{value: n.Value, node: n, field: name}}
	} else if n.Kind == yaml.SequenceNode {
		var ok bool
		if elems, ok = d.stringList(n, name, false); !ok {
			return nil, false
		}
	} else {
		d.errAt(d.pos(n), name, fmt.Sprintf("want a comma-separated string or a list of tool rules, got a %s", kindName(n)),
			"write tools: Read, Grep, Bash(gh *)")
		return nil, false
	}
	clean := true
	var out []ToolRule
	idx := 0
	for _, el := range elems {
		items, err := SplitToolList(el.value)
		if err != nil {
			d.toolListError(el, err)
			clean = false
			continue
		}
		for _, it := range items {
			field := fieldIndex(name, idx)
			if el.node.Kind == yaml.ScalarNode && n.Kind == yaml.SequenceNode && len(items) == 1 {
				field = el.field
			}
			idx++
			r, ok, unknown := d.toolRule(el, it, field)
			if !ok {
				clean = clean && unknown
				continue
			}
			out = append(out, r)
		}
	}
	return out, clean
}

// toolListError reports a tool list string that does not split into rules.
func (d *decoder) toolListError(el stringItem, err error) {
	var le *ToolListError
	off := 0
	msg := err.Error()
	if errors.As(err, &le) {
		off, msg = le.Offset, le.Message
	}
	d.errAt(d.scalarPos(el.node, off), el.field, msg, "separate rules with commas; keep each specifier's parentheses balanced: Bash(gh,curl,jq), Skill")
}

// toolRule parses one rule of a tool list element, reporting it as field
// when it does not parse. A well-formed rule naming a tool fullsend does
// not know is a warning and is dropped (unknown): the runtimes ignore it,
// so it grants nothing.
func (d *decoder) toolRule(el stringItem, it ToolListItem, field string) (r ToolRule, ok, unknown bool) {
	r, err := ParseToolRule(it.Text, d.scalarPos(el.node, it.Offset))
	if err == nil {
		return r, true, false
	}
	var re *RuleError
	switch {
	case errors.As(err, &re) && re.UnknownTool:
		d.warnAt(re.Pos, field, re.Message+" grants nothing; the rule is ignored", re.Hint)
		return ToolRule{}, false, true
	case errors.As(err, &re):
		d.errAt(re.Pos, field, re.Message, re.Hint)
	default:
		d.errAt(d.scalarPos(el.node, it.Offset), field, err.Error(), "")
	}
	return ToolRule{}, false, false
}

// subtractTools removes from rules every rule that a disallowed rule
// covers: a bare disallowed tool removes all rules of that tool; a
// disallowed rule with a specifier removes the identical rule. Narrower
// denials of a broader allowance cannot be subtracted here and stay in the
// agent's Disallowed list for the runtime and explain output.
func subtractTools(rules, disallowed []ToolRule) []ToolRule {
	var out []ToolRule
	for _, r := range rules {
		removed := false
		for _, x := range disallowed {
			if coversRule(x, r) {
				removed = true
				break
			}
		}
		if !removed {
			out = append(out, r)
		}
	}
	return out
}

// coversRule reports whether disallowed rule x removes allowed rule r.
func coversRule(x, r ToolRule) bool {
	if x.Tool != r.Tool {
		return false
	}
	if x.Tool == "mcp" {
		return x.MCPServer == r.MCPServer && (x.MCPTool == "" || x.MCPTool == "*" || x.MCPTool == r.MCPTool)
	}
	return !x.HasSpecifier || strings.TrimSpace(x.Specifier) == "*" ||
		(r.HasSpecifier && normalizeSpecifier(x) == normalizeSpecifier(r))
}

// normalizeSpecifier renders a rule's specifier canonically, so that
// Bash(gh api:*) and Bash(gh api *) compare equal.
func normalizeSpecifier(r ToolRule) string {
	if len(r.Commands) > 0 {
		parts := make([]string, len(r.Commands))
		for i, c := range r.Commands {
			parts[i] = c.String()
		}
		return strings.Join(parts, ",")
	}
	if len(r.Agents) > 0 {
		return strings.Join(r.Agents, ",")
	}
	return strings.TrimSpace(r.Specifier)
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
