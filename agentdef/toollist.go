package agentdef

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

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
		d.warnAt(re.Pos, field, re.Message+" grants nothing; the rule is ignored and the runtime will not pre-approve it", re.Hint)
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
	sp := toolListSplitter{s: s, start: -1, lastComma: -1}
	for i, c := range s {
		if err := sp.next(i, c); err != nil {
			return nil, err
		}
	}
	if sp.depth > 0 {
		return nil, &ToolListError{Offset: sp.start, Message: "unbalanced parentheses: '(' is never closed"}
	}
	sp.flush(len(s))
	if sp.lastComma >= 0 && !sp.sawItem {
		return nil, &ToolListError{Offset: sp.lastComma, Message: "trailing comma in tool list"}
	}
	return sp.out, nil
}

// toolListSplitter is the state of SplitToolList: the items so far, the
// parenthesis depth, the start of the current item (-1 between items).
type toolListSplitter struct {
	s         string
	out       []ToolListItem
	depth     int
	start     int
	lastComma int
	sawItem   bool // an item since the last comma
}

// flush ends the current item, if any, at end.
func (sp *toolListSplitter) flush(end int) {
	if sp.start >= 0 {
		sp.out = append(sp.out, ToolListItem{Text: sp.s[sp.start:end], Offset: sp.start})
		sp.start = -1
		sp.sawItem = true
	}
}

// next consumes the rune c at byte offset i.
func (sp *toolListSplitter) next(i int, c rune) error {
	switch {
	case c == '(':
		if sp.start < 0 {
			return &ToolListError{Offset: i, Message: "'(' without a tool name"}
		}
		sp.depth++
	case c == ')':
		if sp.depth == 0 {
			return &ToolListError{Offset: i, Message: "unbalanced parentheses: ')' without '('"}
		}
		sp.depth--
	case sp.depth == 0 && c == ',':
		return sp.comma(i)
	case sp.depth == 0 && unicode.IsSpace(c):
		sp.flush(i)
		return nil
	}
	if sp.start < 0 {
		sp.start = i
	}
	return nil
}

// comma ends the current item at the separating comma at offset i; a
// comma with no item since the last one is an error.
func (sp *toolListSplitter) comma(i int) error {
	sp.flush(i)
	if !sp.sawItem {
		return &ToolListError{Offset: i, Message: "empty element in tool list"}
	}
	sp.sawItem = false
	sp.lastComma = i
	return nil
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
