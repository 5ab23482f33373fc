package agentdef

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Permission limits. Last-match-wins evaluation compares every rule with
// the earlier ones by wildcard matching, so both bounds keep a hostile
// definition from costing more than a fraction of a second.
const (
	maxPermissionRules  = 200
	maxPermissionLength = 200
)

// permRule is one OpenCode permission rule in evaluation order.
type permRule struct {
	perm    string // permission key, "*" for all
	pattern string
	action  string // allow | deny (ask is normalized to deny)
	pos     Pos
	field   string
}

// parseOpenCodeAgent decodes an OpenCode agent and normalizes its tools map
// and permission into tool rules; see docs/agent-format.md.
func parseOpenCodeAgent(d *decoder, doc *document) *Agent {
	stem := strings.TrimSuffix(path.Base(doc.file), ".md")
	a := &Agent{File: doc.file, Format: FormatOpenCode, Name: stem, NamePos: Pos{File: doc.file, Line: 1, Column: 1}}
	d.lenient = true
	f := d.fields(doc.root, "", openCodeAgentKeys)
	d.lenient = false
	d.openCodeAgentName(a, stem, f)
	a.Description = d.openCodeDescription(doc, f)
	if v, ok := f["mode"]; ok {
		a.Mode, _ = d.enum(v.value, "mode", openCodeModes...)
	}
	if v, ok := f["model"]; ok {
		d.openCodeModel(a, v)
	}
	d.checkFields(f, openCodeAgentChecks)
	if v, ok := f["sandbox"]; ok {
		a.Sandbox = d.sandbox(v.value, "sandbox")
	}
	d.openCodeToolRules(a, doc, f)
	return a
}

// openCodeAgentName names the agent. OpenCode's loader builds
// {name: <path name>, ...md.data, prompt: body} and keys the agent by its
// name, so a frontmatter name overrides the file's (anomalyco/opencode
// packages/opencode/src/config/agent.ts, load; agent/agent.ts keys
// cfg.agent entries by that name). The name is also fullsend's policy file
// name and the key of Agent(...) rules, so it must be a valid agent name
// (agentIDRE, the syntax the forge proxy and the spawn service accept).
// One that is not falls back to the file's name, which is then checked
// instead: a warning, since OpenCode loads the agent; the policy file name
// stays safe. Only when neither is valid is it an error.
func (d *decoder) openCodeAgentName(a *Agent, stem string, f map[string]field) {
	v, ok := f["name"]
	if !ok {
		if !agentIDRE.MatchString(stem) {
			d.errAt(a.NamePos, "name", fmt.Sprintf("invalid agent name %q (taken from the file's name)", stem),
				"rename the file (letters, digits, '.', '_' and '-', such as reviewer.md), or set name: to such a name")
		}
		return
	}
	s, good := d.str(v.value, "name")
	if !good {
		return
	}
	pos := d.pos(v.value)
	switch {
	case agentIDRE.MatchString(s):
		a.Name, a.NamePos = s, pos
	case agentIDRE.MatchString(stem):
		d.warnAt(pos, "name", fmt.Sprintf("OpenCode names this agent %q, not a valid fullsend agent name; fullsend names it %q after its file, and permission.task rules naming %q grant nothing", s, stem, s),
			"use letters, digits, '.', '_' and '-', such as name: "+stem)
	default:
		d.errAt(pos, "name", fmt.Sprintf("invalid agent name %q, and the file's name %q is not valid either", s, stem),
			"letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters: the name is the policy file's name and the agent's identity")
	}
}

// openCodeDescription reads the description. OpenCode makes it optional
// (anomalyco/opencode packages/core/src/v1/config/agent.ts:
// Schema.optional(Schema.String)), so a missing or blank one is a warning;
// one that is not a string fails OpenCode's schema and is an error.
func (d *decoder) openCodeDescription(doc *document, f map[string]field) string {
	v, ok := f["description"]
	if !ok {
		d.warnAt(d.pos(doc.root), "description", "no description: OpenCode loads the agent, but other agents cannot tell when to call it; the policy is unaffected",
			"describe what the agent does and when to use it")
		return ""
	}
	s, good := d.str(v.value, "description")
	if good && strings.TrimSpace(s) == "" {
		d.warnAt(d.pos(v.value), "description", "blank description: OpenCode loads the agent, but other agents cannot tell when to call it; the policy is unaffected",
			"describe what the agent does and when to use it")
		return ""
	}
	return s
}

// parseOpenCodeDocument is parseDocument for a file in a fixed OpenCode
// agent directory (.opencode/agent, .opencode/agents). OpenCode reads agent
// files with gray-matter (anomalyco/opencode
// packages/opencode/src/config/markdown.ts, parse), which gives empty data
// for a file with no frontmatter or an empty one, and the loader then
// builds {name: <path name>, prompt: body} (config/agent.ts, load), which
// OpenCode's schema accepts: a prompt-only agent with OpenCode's defaults.
// Such a file gets an empty mapping as its root, so parseOpenCodeAgent
// compiles it like `---\n---` (warnings: no description, no "*" rule, so
// the compiler grants nothing). Every other file goes to parseDocument.
func parseOpenCodeDocument(d *decoder, data []byte) *document {
	if len(data) > MaxFileSize {
		return parseDocument(d, data)
	}
	fm, body, err := splitFrontmatter(data)
	empty := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1, Column: 1}
	switch {
	case errors.Is(err, errNoFrontmatter):
		text := strings.ReplaceAll(string(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))), "\r\n", "\n")
		d.lineOffset = 0
		return &document{file: d.file, root: empty, body: text}
	case err == nil && len(fm) <= MaxFrontmatterSize && yamlEmpty(fm):
		d.lineOffset = 1
		return &document{file: d.file, root: empty, lineOffset: 1, raw: fm, body: body}
	}
	return parseDocument(d, data)
}

// yamlEmpty reports whether fm holds no YAML value (blank lines and
// comments only), which gray-matter reads as empty data.
func yamlEmpty(fm string) bool {
	var n yaml.Node
	err := yaml.NewDecoder(strings.NewReader(fm)).Decode(&n)
	return errors.Is(err, io.EOF) || (err == nil && (n.Kind == 0 || len(n.Content) == 0))
}

// openCodeAgentChecks check the agent fields the compiler does not read, in
// the order they are reported.
var openCodeAgentChecks = []fieldCheck{
	{"prompt", checkString},
	{"temperature", checkNumber(0, 2)},
	{"top_p", checkNumber(0, 1)},
	{"steps", checkInteger(1, 1<<20)},
	{"maxSteps", checkMaxSteps},
	{"disable", checkDisable},
	{"hidden", checkBoolean},
	{"hidden_from_cycle", checkBoolean},
	{"color", checkNonEmpty},
	{"variant", checkNonEmpty},
	{"options", checkMapping},
}

// checkMaxSteps checks the deprecated maxSteps and warns that it is.
func checkMaxSteps(d *decoder, v field, name string) {
	if _, good := d.integer(v.value, name, 1, 1<<20); good {
		d.warnAt(d.pos(v.key), name, "maxSteps is deprecated", "use steps")
	}
}

// checkDisable checks disable and warns when the agent is disabled.
func checkDisable(d *decoder, v field, name string) {
	if b, good := d.boolean(v.value, name); good && b {
		d.warnAt(d.pos(v.value), name, "the agent is disabled; it is still compiled", "delete the file if the agent is gone")
	}
}

// openCodeModel reads a provider/model-id model.
func (d *decoder) openCodeModel(a *Agent, v field) {
	s, good := d.str(v.value, "model")
	if !good {
		return
	}
	if prov, id, found := strings.Cut(s, "/"); !found || prov == "" || id == "" || !modelRE.MatchString(s) {
		d.errAt(d.pos(v.value), "model", fmt.Sprintf("invalid model %q", s), "OpenCode models are provider/model-id, such as anthropic/claude-sonnet-4-5")
		return
	}
	a.Model, a.ModelPos = s, d.pos(v.value)
}

// openCodeToolRules folds the deprecated tools map and permission into tool
// rules, and reports an agent without an explicit "*" default (OpenCode
// allows every unlisted tool) or one that allows nothing.
func (d *decoder) openCodeToolRules(a *Agent, doc *document, f map[string]field) {
	rules, explicitDefault := d.openCodePermRules(f)
	a.Tools, a.Disallowed = d.evalPermissions(rules)
	perm, hasPerm := f["permission"]
	switch {
	case !explicitDefault:
		a.ToolsOmitted = true
		a.ToolsPos = d.pos(doc.root)
		if hasPerm {
			a.ToolsPos = d.pos(perm.key)
		}
		d.warnAt(a.ToolsPos, "permission", "no \"*\" permission rule: OpenCode allows every tool not listed",
			`start permission with "*": deny and allow what the agent needs; the compiler grants nothing to unlisted tools`)
	case len(a.Tools) == 0 && d.nerr == 0:
		d.noAllowedTool(doc, f)
	case hasPerm:
		a.ToolsPos = d.pos(perm.key)
	default:
		a.ToolsPos = d.pos(f["tools"].key)
	}
}

// openCodePermRules reads the deprecated tools map, then permission, into
// permission rules in OpenCode's order, and reports whether either sets
// the "*" default.
func (d *decoder) openCodePermRules(f map[string]field) (rules []permRule, explicitDefault bool) {
	if v, ok := f["tools"]; ok {
		d.warnAt(d.pos(v.key), "tools", "the tools map is deprecated in OpenCode; it is folded into permission (true = allow, false = deny), before the permission rules",
			"move the entries to permission")
		rules, explicitDefault = d.openCodeToolsMap(v.value)
	}
	if perm, ok := f["permission"]; ok {
		permRules, def := d.openCodePermission(perm.value)
		rules = append(rules, permRules...)
		explicitDefault = explicitDefault || def
	}
	return rules, explicitDefault
}

// noAllowedTool reports an agent whose permission rules allow no tool, at
// permission, else at the tools map, else at the frontmatter.
func (d *decoder) noAllowedTool(doc *document, f map[string]field) {
	at, field := d.pos(doc.root), "permission"
	if perm, ok := f["permission"]; ok {
		at = d.pos(perm.key)
	} else if v, ok := f["tools"]; ok {
		at, field = d.pos(v.key), "tools"
	}
	d.errAt(at, field, "permission resolves to no allowed tool",
		"allow the tools the agent needs, such as read: allow")
}

// openCodeToolsMap reads the deprecated `tools: {name: bool}` map. OpenCode
// turns each entry into a permission of the same name (write, edit and
// patch into edit) before the permission block (anomalyco/opencode
// packages/core/src/v1/config/agent.ts, normalize), so a name fullsend does
// not know is read like an unknown permission key. It reports whether the
// map sets the "*" default.
func (d *decoder) openCodeToolsMap(n *yaml.Node) ([]permRule, bool) {
	if !d.mapping(n, "tools") {
		return nil, false
	}
	var out []permRule
	explicit := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := fieldPath("tools", k.Value)
		_, known := openCodeTools[k.Value]
		_, legacy := openCodeLegacyTools[k.Value]
		b, ok := d.boolean(v, name)
		if !ok {
			continue
		}
		action := "deny"
		if b {
			action = "allow"
		}
		r := permRule{perm: k.Value, pattern: "*", action: action, pos: d.pos(k), field: name}
		switch {
		case legacy:
			r.perm = "edit"
		case k.Value == "*":
			explicit = true
		case !known:
			out = append(out, d.unknownOpenCodeKey(k, name, []permRule{r},
				"known tools: "+strings.Join(sortedKeys(openCodeTools, openCodeLegacyTools), ", "))...)
			continue
		}
		out = append(out, r)
	}
	return out, explicit
}

// unknownOpenCodeKey handles a permission or tools key fullsend does not
// know, whose value was read into rules (perm = the key). OpenCode accepts
// any key (anomalyco/opencode packages/core/src/v1/config/permission.ts:
// StructWithRest(..., Record(String, Rule))) and matches keys against
// permission names as wildcards (packages/opencode/src/permission:
// evaluate, Wildcard.match(permission, rule.permission)): mcp_* names MCP
// tools, which the compiler does not map, so such a key grants nothing in
// the sandbox and is a warning. A wildcard key that matches permissions
// fullsend knows applies to them: denials are kept for each (they only
// narrow), and an allowance is an error, because it would widen access
// through a name that does not say which tools it opens.
func (d *decoder) unknownOpenCodeKey(k *yaml.Node, name string, rules []permRule, hint string) []permRule {
	if matched := wildcardPerms(k.Value); len(matched) > 0 {
		var out []permRule
		for _, r := range rules {
			if r.action == "allow" {
				d.errAt(d.pos(k), name, fmt.Sprintf("wildcard key %q allows the permissions %s", k.Value, strings.Join(matched, ", ")),
					"name each permission the agent needs instead")
				return nil
			}
			for _, m := range matched {
				r2 := r
				r2.perm = m
				out = append(out, r2)
			}
		}
		return out
	}
	if _, legacy := openCodeLegacyTools[k.Value]; legacy && strings.HasPrefix(name, "permission.") {
		// OpenCode's write, patch and multiedit tools ask for the edit
		// permission (anomalyco/opencode packages/opencode/src/permission,
		// disabled: EDIT_TOOLS map to "edit").
		hint = fmt.Sprintf("OpenCode's %s tool asks for the edit permission: write edit: instead", k.Value)
	} else if s := suggest(k.Value, sortedKeys(openCodeTools)); s != "" {
		hint = fmt.Sprintf("did you mean %q? %s", s, hint)
	}
	d.warnAt(d.pos(k), name, fmt.Sprintf("unknown permission %q grants nothing in the sandbox: fullsend derives access only from the tools it knows", k.Value),
		hint+"; MCP tools are not compiled: declare their endpoints in sandbox.endpoints")
	return nil
}

// wildcardPerms lists, sorted, the permissions fullsend knows and maps to
// a tool that the wildcard key k matches; nil when k has no wildcard.
func wildcardPerms(k string) []string {
	if !strings.ContainsAny(k, "*?") {
		return nil
	}
	var out []string
	for _, p := range sortedKeys(openCodeTools) {
		if openCodeTools[p] != "" && wildcardMatch(k, p) {
			out = append(out, p)
		}
	}
	return out
}

// openCodePermission flattens `permission` into ordered rules. It reports
// whether the rules set an explicit default for every tool ("*": action, or
// a single action for the whole agent).
func (d *decoder) openCodePermission(n *yaml.Node) ([]permRule, bool) {
	if n.Kind == yaml.ScalarNode {
		act, ok := d.action(n, "permission")
		if !ok {
			return nil, false
		}
		return []permRule{{perm: "*", pattern: "*", action: act, pos: d.pos(n), field: "permission"}}, true
	}
	if !d.mapping(n, "permission") {
		return nil, false
	}
	var out []permRule
	explicit := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		rules, def := d.openCodePermissionEntry(n.Content[i], n.Content[i+1])
		out = append(out, rules...)
		explicit = explicit || def
	}
	if len(out) > maxPermissionRules {
		d.errAt(d.pos(n), "permission", fmt.Sprintf("%d permission rules; at most %d allowed", len(out), maxPermissionRules),
			"group commands with wildcards, or split the agent")
		return nil, explicit
	}
	return out, explicit
}

// openCodePermissionEntry reads one `permission` entry, key: action or key:
// {pattern: action}, and reports whether it sets the "*" default.
func (d *decoder) openCodePermissionEntry(k, v *yaml.Node) ([]permRule, bool) {
	name := fieldPath("permission", k.Value)
	_, known := openCodeTools[k.Value]
	known = known || k.Value == "*"
	rules, def, ok := d.openCodePermissionValue(k, v, name, known)
	if !ok {
		return nil, false
	}
	if !known {
		return d.unknownOpenCodeKey(k, name, rules, "known permissions: *, "+strings.Join(sortedKeys(openCodeTools), ", ")), false
	}
	return rules, def
}

// openCodePermissionValue reads the value of permission entry k (field
// name; known tells whether fullsend knows the permission): one action,
// or a {pattern: action} map where the permission takes patterns. It
// reports whether the value sets the "*" default, and false in ok when
// the value is unusable.
func (d *decoder) openCodePermissionValue(k, v *yaml.Node, name string, known bool) (rules []permRule, def, ok bool) {
	if v.Kind == yaml.ScalarNode {
		act, ok := d.action(v, name)
		if !ok {
			return nil, false, false
		}
		return []permRule{{perm: k.Value, pattern: "*", action: act, pos: d.pos(k), field: name}}, k.Value == "*", true
	}
	if known && !openCodePatternPerms[k.Value] {
		d.errAt(d.pos(v), name, fmt.Sprintf("%s takes one action, not a pattern map", k.Value), "write "+k.Value+": allow, ask or deny")
		return nil, false, false
	}
	if !d.mapping(v, name) {
		return nil, false, false
	}
	rules, def = d.openCodePatterns(k.Value, name, v)
	return rules, def, true
}

// openCodePatterns reads the {pattern: action} map of permission perm, and
// reports whether it sets the "*" default ("*": {"*": action}).
func (d *decoder) openCodePatterns(perm, name string, v *yaml.Node) ([]permRule, bool) {
	var out []permRule
	explicit := false
	for j := 0; j+1 < len(v.Content); j += 2 {
		pk, pv := v.Content[j], v.Content[j+1]
		pname := name + "[" + strconv.Quote(pk.Value) + "]"
		if strings.TrimSpace(pk.Value) == "" {
			d.errAt(d.pos(pk), pname, "empty pattern", `use "*" for everything`)
			continue
		}
		if len(pk.Value) > maxPermissionLength {
			d.errAt(d.pos(pk), name, fmt.Sprintf("pattern longer than %d bytes", maxPermissionLength), "shorten the pattern")
			continue
		}
		if act, ok := d.action(pv, pname); ok {
			out = append(out, permRule{perm: perm, pattern: pk.Value, action: act, pos: d.pos(pk), field: pname})
			explicit = explicit || (perm == "*" && pk.Value == "*")
		}
	}
	return out, explicit
}

// action reads allow/ask/deny; ask becomes deny because nobody can answer a
// prompt in CI (fail closed).
func (d *decoder) action(n *yaml.Node, name string) (string, bool) {
	act, ok := d.enum(n, name, permActions...)
	if !ok {
		return "", false
	}
	if act == "ask" {
		d.warnAt(d.pos(n), name, "ask is treated as deny: nobody can answer a permission prompt in CI", "write allow or deny")
		return "deny", true
	}
	return act, true
}

// sortedKeys returns the keys of the maps, sorted and deduplicated.
func sortedKeys(ms ...map[string]string) []string {
	keys := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			keys[k] = true
		}
	}
	return sortedMapKeys(keys)
}
