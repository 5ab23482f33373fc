package agentdef

import (
	"errors"
	"slices"
	"strconv"
)

// grant is one effective (tool, pattern) allowance or denial.
type grant struct {
	tool    string
	pattern string
	rule    permRule
}

// evalPermissions applies OpenCode's last-matching-rule-wins order: a later
// deny removes every earlier allowance it covers (the same tool, or "*",
// with a pattern matching the earlier pattern), and a later allow removes
// the earlier denials it covers. What remains is converted to tool rules.
func (d *decoder) evalPermissions(rules []permRule) (allowed, denied []ToolRule) {
	allows, denies := lastMatchWins(rules)
	for _, g := range allows {
		if r, ok := d.grantRule(g); ok {
			allowed = append(allowed, r)
		}
	}
	for _, g := range denies {
		denied = append(denied, denialRule(g))
	}
	return allowed, denied
}

// lastMatchWins splits rules into the tools' allowances and denials that
// no later rule covers.
func lastMatchWins(rules []permRule) (allows, denies []grant) {
	for _, r := range rules {
		for _, tool := range permTools(r.perm) {
			g := grant{tool: tool, pattern: r.pattern, rule: r}
			allows, denies = dropCovered(allows, g), dropCovered(denies, g)
			if r.action == "allow" {
				allows = append(allows, g)
			} else {
				denies = append(denies, g)
			}
		}
	}
	return allows, denies
}

// dropCovered removes from list, in place, the grants of g's tool whose
// pattern g's pattern matches.
func dropCovered(list []grant, g grant) []grant {
	return slices.DeleteFunc(list, func(x grant) bool {
		return x.tool == g.tool && wildcardMatch(g.pattern, x.pattern)
	})
}

// denialRule converts a denial into a tool rule. A denial never widens
// anything: a pattern the tool-rule syntax cannot express (a glob command
// such as "rm*") is kept verbatim.
func denialRule(g grant) ToolRule {
	raw := grantRaw(g)
	if r, err := ParseToolRule(raw, g.rule.pos); err == nil {
		return r
	}
	return ToolRule{Raw: raw, Pos: g.rule.pos, Tool: g.tool, Specifier: g.pattern, HasSpecifier: raw != g.tool}
}

// permTools lists the Claude Code tools a permission key governs.
func permTools(perm string) []string {
	if perm != "*" {
		if t := openCodeTools[perm]; t != "" {
			return []string{t}
		}
		return nil
	}
	tools := map[string]bool{}
	for _, t := range openCodeTools {
		if t != "" {
			tools[t] = true
		}
	}
	return sortedMapKeys(tools)
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
