package agentdef

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// toolList reads a tool list: one string of comma- and/or space-separated
// rules, or a YAML list whose elements are rules (each element may itself
// hold several). It returns the rules and whether all parsed cleanly.
func (d *decoder) toolList(n *yaml.Node, name string) ([]ToolRule, bool) {
	elems, ok := d.toolListElems(n, name)
	if !ok {
		return nil, false
	}
	tl := &toolListReader{d: d, name: name, seq: n.Kind == yaml.SequenceNode, clean: true}
	for _, el := range elems {
		tl.element(el)
	}
	return tl.out, tl.clean
}

// toolListElems returns the elements of a tool list: the string itself, or
// the list's strings.
func (d *decoder) toolListElems(n *yaml.Node, name string) ([]stringItem, bool) {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!str":
		return []stringItem{{value: n.Value, node: n, field: name}}, true
	case n.Kind == yaml.SequenceNode:
		return d.stringList(n, name, false)
	}
	d.errAt(d.pos(n), name, fmt.Sprintf("want a comma-separated string or a list of tool rules, got a %s", kindName(n)),
		"write tools: Read, Grep, Bash(gh *)")
	return nil, false
}

// toolListReader gathers the rules of one tool list, element by element.
type toolListReader struct {
	d     *decoder
	name  string // the list's field
	seq   bool   // the list is a YAML list, not one string
	out   []ToolRule
	idx   int  // the index of the next rule in the whole list
	clean bool // every element so far parsed cleanly
}

// element reads the rules of one list element. A list element holding a
// single rule is reported as that element; the rules of a string holding
// several are numbered across the whole list.
func (tl *toolListReader) element(el stringItem) {
	items, err := SplitToolList(el.value)
	if err != nil {
		tl.d.toolListError(el, err)
		tl.clean = false
		return
	}
	single := tl.seq && el.node.Kind == yaml.ScalarNode && len(items) == 1
	for _, it := range items {
		field := el.field
		if !single {
			field = fieldIndex(tl.name, tl.idx)
		}
		tl.idx++
		r, ok, unknown := tl.d.toolRule(el, it, field)
		if !ok {
			tl.clean = tl.clean && unknown
			continue
		}
		tl.out = append(tl.out, r)
	}
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
		if !slices.ContainsFunc(disallowed, func(x ToolRule) bool { return coversRule(x, r) }) {
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
		return coversMCPRule(x, r)
	}
	return !x.HasSpecifier || strings.TrimSpace(x.Specifier) == "*" ||
		(r.HasSpecifier && normalizeSpecifier(x) == normalizeSpecifier(r))
}

// coversMCPRule reports whether disallowed mcp__server[__tool] rule x
// removes allowed mcp rule r: the same server, and every tool or r's.
func coversMCPRule(x, r ToolRule) bool {
	return x.MCPServer == r.MCPServer && (x.MCPTool == "" || x.MCPTool == "*" || x.MCPTool == r.MCPTool)
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
