package compile

import (
	"errors"
	"fmt"
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

// grant is one effective (tool, pattern) allowance or denial.
type grant struct {
	tool    string
	pattern string
	rule    permRule
}

// parseOpenCodeAgent decodes an OpenCode agent and normalizes its tools map
// and permission into tool rules; see docs/agent-format.md.
func parseOpenCodeAgent(d *decoder, doc *document) *Agent {
	stem := strings.TrimSuffix(path.Base(doc.file), ".md")
	a := &Agent{File: doc.file, Format: FormatOpenCode, Name: stem, NamePos: Pos{File: doc.file, Line: 1, Column: 1}}
	if !agentNameRE.MatchString(stem) {
		d.errAt(a.NamePos, "name", fmt.Sprintf("invalid agent name %q (OpenCode names an agent after its file)", stem),
			"rename the file: lowercase letters, digits and hyphens, such as reviewer.md")
	}
	// A name field is an error: the agent would silently be named after
	// its file instead.
	d.keyHints, d.keyErrors, d.lenient = map[string]string{"name": "OpenCode names an agent after its file; remove name, or rename the file"}, map[string]bool{"name": true}, true
	f := d.fields(doc.root, "", openCodeAgentKeys)
	d.keyHints, d.keyErrors, d.lenient = nil, nil, false
	a.Description = requiredDescription(d, doc.root, f)
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
	var rules []permRule
	explicitDefault := false
	if v, ok := f["tools"]; ok {
		d.warnAt(d.pos(v.key), "tools", "the tools map is deprecated in OpenCode; it is folded into permission (true = allow, false = deny), before the permission rules",
			"move the entries to permission")
		rules = append(rules, d.openCodeToolsMap(v.value)...)
	}
	perm, hasPerm := f["permission"]
	if hasPerm {
		rules2, def := d.openCodePermission(perm.value)
		rules = append(rules, rules2...)
		explicitDefault = def
	}
	a.Tools, a.Disallowed = d.evalPermissions(rules)
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
		d.errAt(d.pos(perm.key), "permission", "permission resolves to no allowed tool",
			"allow the tools the agent needs, such as read: allow")
	default:
		a.ToolsPos = d.pos(perm.key)
	}
}

// openCodeToolsMap reads the deprecated `tools: {name: bool}` map.
func (d *decoder) openCodeToolsMap(n *yaml.Node) []permRule {
	if !d.mapping(n, "tools") {
		return nil
	}
	var out []permRule
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := fieldPath("tools", k.Value)
		_, known := openCodeTools[k.Value]
		_, legacy := openCodeLegacyTools[k.Value]
		b, ok := d.boolean(v, name)
		if !ok {
			continue
		}
		if !known && !legacy {
			d.unknownOpenCodeTool(k, name, !b, "known tools: "+strings.Join(sortedKeys(openCodeTools, openCodeLegacyTools), ", "))
			continue
		}
		action := "deny"
		if b {
			action = "allow"
		}
		perm := k.Value
		if legacy {
			perm = "edit"
		}
		out = append(out, permRule{perm: perm, pattern: "*", action: action, pos: d.pos(k), field: name})
	}
	return out
}

// unknownOpenCodeTool reports a tool or permission name fullsend does not
// know (an MCP tool such as github_*, or a typo). Denying it changes nothing
// the compiler grants, so that is a warning; allowing it is an error.
func (d *decoder) unknownOpenCodeTool(k *yaml.Node, name string, denyOnly bool, hint string) {
	if denyOnly {
		d.warnAt(d.pos(k), name, fmt.Sprintf("unknown tool %q is denied; the rule is ignored", k.Value), hint)
		return
	}
	d.errAt(d.pos(k), name, fmt.Sprintf("unknown permission %q", k.Value),
		hint+"; MCP tools are not compiled: declare their endpoints in sandbox.endpoints")
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
	if _, known := openCodeTools[k.Value]; !known && k.Value != "*" {
		hint := "known permissions: *, " + strings.Join(sortedKeys(openCodeTools), ", ")
		if s := suggest(k.Value, sortedKeys(openCodeTools)); s != "" {
			hint = fmt.Sprintf("did you mean %q? %s", s, hint)
		}
		denyOnly := v.Kind == yaml.ScalarNode && (v.Value == "deny" || v.Value == "ask")
		d.unknownOpenCodeTool(k, name, denyOnly, hint)
		return nil, false
	}
	if v.Kind == yaml.ScalarNode {
		act, ok := d.action(v, name)
		if !ok {
			return nil, false
		}
		return []permRule{{perm: k.Value, pattern: "*", action: act, pos: d.pos(k), field: name}}, k.Value == "*"
	}
	if !openCodePatternPerms[k.Value] {
		d.errAt(d.pos(v), name, fmt.Sprintf("%s takes one action, not a pattern map", k.Value), "write "+k.Value+": allow, ask or deny")
		return nil, false
	}
	if !d.mapping(v, name) {
		return nil, false
	}
	return d.openCodePatterns(k.Value, name, v)
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

// evalPermissions applies OpenCode's last-matching-rule-wins order: a later
// deny removes every earlier allowance it covers (the same tool, or "*",
// with a pattern matching the earlier pattern), and a later allow removes
// the earlier denials it covers. What remains is converted to tool rules.
func (d *decoder) evalPermissions(rules []permRule) (allowed, denied []ToolRule) {
	var allows, denies []grant
	for _, r := range rules {
		for _, tool := range permTools(r.perm) {
			g := grant{tool: tool, pattern: r.pattern, rule: r}
			drop := func(list []grant) []grant {
				out := list[:0]
				for _, x := range list {
					if !(x.tool == tool && wildcardMatch(r.pattern, x.pattern)) {
						out = append(out, x)
					}
				}
				return out
			}
			if r.action == "allow" {
				denies = drop(denies)
				allows = append(drop(allows), g)
			} else {
				allows = drop(allows)
				denies = append(drop(denies), g)
			}
		}
	}
	for _, g := range allows {
		if r, ok := d.grantRule(g); ok {
			allowed = append(allowed, r)
		}
	}
	for _, g := range denies {
		// A denial never widens anything: a pattern the tool-rule syntax
		// cannot express (a glob command such as "rm*") is kept verbatim.
		if r, err := ParseToolRule(grantRaw(g), g.rule.pos); err == nil {
			denied = append(denied, r)
		} else {
			raw := grantRaw(g)
			denied = append(denied, ToolRule{Raw: raw, Pos: g.rule.pos, Tool: g.tool, Specifier: g.pattern, HasSpecifier: raw != g.tool})
		}
	}
	return allowed, denied
}

// permTools lists the Claude Code tools a permission key governs.
func permTools(perm string) []string {
	if perm != "*" {
		if t := openCodeTools[perm]; t != "" {
			return []string{t}
		}
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range openCodeTools {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return sortedCopy(out)
}

// grantRule converts a grant into the equivalent Claude Code tool rule,
// parsed like any other, positioned at the permission entry.
func (d *decoder) grantRule(g grant) (ToolRule, bool) {
	raw := grantRaw(g)
	p := g.rule.pos
	p.Column = 0 // the rule is derived; point at the line
	r, err := ParseToolRule(raw, p)
	if err != nil && g.rule.perm == "*" {
		// "*": {pattern: action} spans every tool; a pattern that does not
		// fit a tool (a path pattern for bash) does not apply to it.
		return ToolRule{}, false
	}
	if err != nil {
		var re *RuleError
		msg, hint := err.Error(), ""
		if errors.As(err, &re) {
			msg, hint = re.Message, re.Hint
		}
		d.errAt(g.rule.pos, g.rule.field, "pattern "+strconv.Quote(g.pattern)+": "+msg, hint)
		return ToolRule{}, false
	}
	r.Pos = g.rule.pos
	return r, true
}

// grantRaw renders a grant as the equivalent Claude Code rule.
func grantRaw(g grant) string {
	if g.pattern == "*" {
		return g.tool
	}
	switch g.tool {
	case "WebFetch", "WebSearch", "TodoWrite", "LSP":
		// these take one action; a "*" permission's pattern does not apply
		return g.tool
	}
	return g.tool + "(" + g.pattern + ")"
}

// wildcardMatch reports whether OpenCode wildcard pattern p ('*' any run of
// characters, '?' one character) matches s taken literally.
func wildcardMatch(p, s string) bool {
	// Iterative matcher with single backtrack point: linear in practice.
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// sortedKeys returns the keys of the maps, sorted and deduplicated.
func sortedKeys(ms ...map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return sortedCopy(out)
}
