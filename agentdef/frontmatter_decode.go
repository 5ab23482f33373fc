package agentdef

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/internal/didyoumean"

	"gopkg.in/yaml.v3"
)

// maxDiagnosticsPerFile bounds the diagnostics one file can produce, so a
// pathological input cannot flood the output.
const maxDiagnosticsPerFile = 100

// decoder reads frontmatter nodes strictly and records positioned
// diagnostics for one file. It never stops at the first problem.
type decoder struct {
	file string
	// lineOffset converts yaml.v3 lines (1-based, relative to the
	// frontmatter) to file lines.
	lineOffset int
	diags      Diagnostics
	nerr       int
	truncated  bool
	// warnTruncated is set once dropped warnings were noted.
	warnTruncated bool
	// lines are the frontmatter's lines, to locate text inside scalars.
	lines []string
	// aliasSeen is set once an anchor or alias was reported.
	aliasSeen bool
	// keyHints, when set, replace the hint of specific unknown keys; the
	// "" entry prefixes the hint of any other unknown top-level key.
	keyHints map[string]string
	// lenient makes an unknown top-level key a warning, as the runtimes
	// ignore or pass it through, unless it is close to a known key (a
	// misspelling silently changes meaning) or keyErrors lists it.
	lenient bool
	// keyErrors are unknown keys that stay errors when lenient: another
	// dialect's fields, whose presence means the file is misread.
	keyErrors map[string]bool
}

func newDecoder(file string) *decoder {
	return &decoder{file: file, lineOffset: 1}
}

// pos returns the file position of a node.
func (d *decoder) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: d.file, Line: 1, Column: 1}
	}
	return Pos{File: d.file, Line: n.Line + d.lineOffset, Column: n.Column}
}

func (d *decoder) add(diag Diagnostic) {
	if len(d.diags) >= maxDiagnosticsPerFile {
		// A dropped error still fails the file; dropped warnings do not.
		switch {
		case diag.Severity == SeverityError && !d.truncated:
			d.truncated = true
			d.diags = append(d.diags, Diagnostic{Pos: diag.Pos, Severity: SeverityError,
				Message: fmt.Sprintf("too many problems; stopped after %d", maxDiagnosticsPerFile)})
			d.nerr++
		case diag.Severity != SeverityError && !d.warnTruncated:
			d.warnTruncated = true
			d.diags = append(d.diags, Diagnostic{Pos: diag.Pos, Severity: SeverityWarning,
				Message: fmt.Sprintf("too many warnings; stopped after %d", maxDiagnosticsPerFile)})
		}
		return
	}
	if diag.Severity == SeverityError {
		d.nerr++
	}
	d.diags = append(d.diags, diag)
}

// errAt records an error at a position.
func (d *decoder) errAt(p Pos, field, msg, hint string) {
	d.add(Diagnostic{Pos: p, Severity: SeverityError, Field: field, Message: msg, Hint: hint})
}

// warnAt records a warning at a position.
func (d *decoder) warnAt(p Pos, field, msg, hint string) {
	d.add(Diagnostic{Pos: p, Severity: SeverityWarning, Field: field, Message: msg, Hint: hint})
}

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	d.errAt(d.pos(n), field, fmt.Sprintf(format, args...), "")
}

func (d *decoder) errorfHint(n *yaml.Node, field, hint, format string, args ...any) {
	d.errAt(d.pos(n), field, fmt.Sprintf(format, args...), hint)
}

// field is one key of a frontmatter mapping with its value node.
type field struct {
	key   *yaml.Node
	value *yaml.Node
}

// fields returns the entries of a mapping node by key, reporting keys not
// in known with the list of known keys and a did-you-mean hint. prefix is
// the field path of the mapping ("" at the top level).
func (d *decoder) fields(m *yaml.Node, prefix string, known []string) map[string]field {
	out := map[string]field{}
	if m == nil || m.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			continue // reported by checkSafe
		}
		if !containsString(known, k.Value) {
			d.unknownKey(k, prefix, known)
			continue
		}
		if _, dup := out[k.Value]; !dup {
			out[k.Value] = field{key: k, value: v}
		}
	}
	return out
}

// unknownKey reports a key not in known: an error, or a warning for an
// unknown top-level key of a lenient decoder that is neither close to a
// known key nor listed in keyErrors.
func (d *decoder) unknownKey(k *yaml.Node, prefix string, known []string) {
	s := suggest(k.Value, known)
	hint := d.unknownKeyHint(k.Value, prefix, s, known)
	if d.lenient && prefix == "" && s == "" && !d.keyErrors[k.Value] {
		d.warnAt(d.pos(k), k.Value, fmt.Sprintf("unknown field %q is ignored", k.Value), hint)
		return
	}
	d.errAt(d.pos(k), fieldPath(prefix, k.Value), fmt.Sprintf("unknown field %q", k.Value), hint)
}

// unknownKeyHint is the hint for unknown key at prefix: the decoder's
// hint for it, else did-you-mean suggestion, else the decoder's general
// hint for a top-level key, followed by the known keys.
func (d *decoder) unknownKeyHint(key, prefix, suggestion string, known []string) string {
	hint := "known fields: " + strings.Join(sortedCopy(known), ", ")
	if h, ok := d.keyHints[key]; ok {
		return h
	} else if suggestion != "" {
		return fmt.Sprintf("did you mean %q? %s", suggestion, hint)
	} else if h, ok := d.keyHints[""]; ok && prefix == "" {
		return h + "; " + hint
	}
	return hint
}

// fieldPath builds a field path.
func fieldPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// fieldIndex builds a field path for a list element.
func fieldIndex(prefix string, i int) string {
	return prefix + "[" + strconv.Itoa(i) + "]"
}

// got describes a node for "want X, got Y" messages: its kind, and its
// value when it is a short scalar.
func got(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" && len(n.Value) <= 40 && !strings.ContainsRune(n.Value, '\n') {
		return fmt.Sprintf("%s %q", kindName(n), n.Value)
	}
	return kindName(n)
}

// str reads a string scalar. Numbers and booleans are rejected: a
// description of `yes` is a mistake the author should see.
func (d *decoder) str(n *yaml.Node, name string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.errAt(d.pos(n), name, fmt.Sprintf("want a string, got a %s", got(n)),
			"quote the value if it is meant as text")
		return "", false
	}
	return n.Value, true
}

// nonEmptyStr reads a string that must not be blank.
func (d *decoder) nonEmptyStr(n *yaml.Node, name string) (string, bool) {
	s, ok := d.str(n, name)
	if ok && strings.TrimSpace(s) == "" {
		d.errAt(d.pos(n), name, "must not be empty", "")
		return "", false
	}
	return s, ok
}

// boolean reads a true/false scalar.
func (d *decoder) boolean(n *yaml.Node, name string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		d.errAt(d.pos(n), name, fmt.Sprintf("want true or false, got a %s", got(n)), "")
		return false, false
	}
	b, err := strconv.ParseBool(n.Value)
	if err != nil {
		d.errAt(d.pos(n), name, fmt.Sprintf("want true or false, got %q", n.Value), "")
		return false, false
	}
	return b, true
}

// integer reads an integer scalar within [lo, hi].
func (d *decoder) integer(n *yaml.Node, name string, lo, hi int) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		d.errAt(d.pos(n), name, fmt.Sprintf("want an integer, got a %s", got(n)), "")
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil || v < int64(lo) || v > int64(hi) {
		d.errAt(d.pos(n), name, fmt.Sprintf("want an integer from %d to %d, got %s", lo, hi, n.Value), "")
		return 0, false
	}
	return int(v), true
}

// number reads an integer or float scalar within [lo, hi].
func (d *decoder) number(n *yaml.Node, name string, lo, hi float64) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		d.errAt(d.pos(n), name, fmt.Sprintf("want a number, got a %s", got(n)), "")
		return 0, false
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || v < lo || v > hi {
		d.errAt(d.pos(n), name, fmt.Sprintf("want a number from %g to %g, got %s", lo, hi, n.Value), "")
		return 0, false
	}
	return v, true
}

// enum reads a string that must be one of values.
func (d *decoder) enum(n *yaml.Node, name string, values ...string) (string, bool) {
	s, ok := d.str(n, name)
	if !ok {
		return "", false
	}
	if !containsString(values, s) {
		hint := "one of: " + strings.Join(values, ", ")
		if sg := suggest(s, values); sg != "" {
			hint = fmt.Sprintf("did you mean %q? %s", sg, hint)
		}
		d.errAt(d.pos(n), name, fmt.Sprintf("invalid value %q", s), hint)
		return "", false
	}
	return s, true
}

// stringItem is a string read from a list (or a single-string field) with
// its own position.
type stringItem struct {
	value string
	node  *yaml.Node
	field string
}

// stringList reads a YAML list of strings. A single string is accepted as
// a one-element list when single is true.
func (d *decoder) stringList(n *yaml.Node, name string, single bool) ([]stringItem, bool) {
	if single && n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		return []stringItem{{value: n.Value, node: n, field: name}}, true
	}
	if n.Kind != yaml.SequenceNode {
		want := "a list of strings"
		if single {
			want = "a string or a list of strings"
		}
		d.errAt(d.pos(n), name, fmt.Sprintf("want %s, got a %s", want, kindName(n)), "")
		return nil, false
	}
	out := make([]stringItem, 0, len(n.Content))
	ok := true
	for i, c := range n.Content {
		f := fieldIndex(name, i)
		s, good := d.listString(c, f, n.Style&yaml.FlowStyle != 0)
		if !good {
			ok = false
			continue
		}
		out = append(out, stringItem{value: s, node: c, field: f})
	}
	return out, ok
}

// listString reads element c (field f) of a string list; flow is set for a
// [...] list, where an unquoted ': ' makes the element a mapping.
func (d *decoder) listString(c *yaml.Node, f string, flow bool) (string, bool) {
	if flow && c.Kind == yaml.MappingNode && len(c.Content) == 2 {
		d.errAt(d.pos(c), f, "want a string, got a mapping: an unquoted ': ' inside a [...] list starts a key: value pair",
			"quote the element, e.g. \"Bash(gh api: *)\"")
		return "", false
	}
	return d.str(c, f)
}

// mapping checks that n is a mapping.
func (d *decoder) mapping(n *yaml.Node, name string) bool {
	if n.Kind != yaml.MappingNode {
		d.errAt(d.pos(n), name, fmt.Sprintf("want a mapping, got a %s", kindName(n)), "")
		return false
	}
	return true
}

// scalarPos returns the file position of byte offset off inside a scalar
// node's value, for rules inside a tools string. The value must appear
// verbatim on the node's line (plain, or quoted without escapes); for
// folded, multi-line and escaped scalars it returns the node's position.
func (d *decoder) scalarPos(n *yaml.Node, off int) Pos {
	p := d.pos(n)
	if n.Line < 1 || n.Line > len(d.lines) || n.Column < 1 {
		return p
	}
	start, ok := valueStart(n)
	if !ok {
		return p
	}
	line := d.lines[n.Line-1]
	if start <= len(line) && strings.HasPrefix(line[start:], n.Value) {
		p.Column = start + 1 + off
	}
	return p
}

// valueStart is the byte offset of scalar n's value in its line: its
// column, after the opening quote of a quoted scalar. False for a folded
// or literal block scalar, whose value does not start there.
func valueStart(n *yaml.Node) (int, bool) {
	switch n.Style {
	case 0:
		return n.Column - 1, true
	case yaml.SingleQuotedStyle, yaml.DoubleQuotedStyle:
		return n.Column, true
	}
	return 0, false
}

func containsString(list []string, s string) bool { return slices.Contains(list, s) }

func sortedCopy(list []string) []string {
	out := append([]string(nil), list...)
	sort.Strings(out)
	return out
}

// suggest returns the known value closest to s, or "" when none is close.
func suggest(s string, known []string) string { return didyoumean.Closest(s, known) }
