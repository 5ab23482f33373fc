package agentdef

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef/projectfile"
	"gopkg.in/yaml.v3"
)

// Input size limits. They bound the work a hostile or broken file can cause:
// the whole file is never read beyond MaxFileSize+1 bytes.
const (
	// MaxFileSize is the largest agent or skill file accepted, in bytes.
	MaxFileSize = projectfile.MaxSize
	// MaxFrontmatterSize is the largest frontmatter block accepted, in bytes.
	MaxFrontmatterSize = 256 << 10
	// MaxYAMLDepth is the deepest nesting of YAML collections accepted in a
	// frontmatter block. Real definitions need about six levels.
	MaxYAMLDepth = 32
)

// Sentinel errors of splitFrontmatter; parseDocument turns each into a
// positioned diagnostic with a hint.
var (
	errNoFrontmatter           = errors.New("no frontmatter")
	errUnterminatedFrontmatter = errors.New("unterminated frontmatter")
)

// document is one Markdown file split into its parsed frontmatter and body.
type document struct {
	file string
	// root is the frontmatter's top-level mapping node; nil when the
	// frontmatter could not be parsed (the diagnostics say why).
	root *yaml.Node
	// lineOffset is added to yaml.v3's 1-based line numbers to get file
	// lines: the number of lines before the frontmatter's first line.
	lineOffset int
	// raw is the frontmatter text with CRLF normalized, for line checks.
	raw  string
	body string
	// requoted are the 0-based frontmatter lines Claude Code's retry
	// rewrote (frontmatter_retry.go), when root comes from the retry.
	requoted map[int]bool
}

// splitFrontmatter splits data into frontmatter and body. The frontmatter
// must open on the first line with `---` and close with a line holding only
// dashes, three or more. A UTF-8 byte order mark is dropped and CRLF line
// ends are accepted.
//
// The closing line follows Claude Code's FRONTMATTER_REGEX,
// /^---\s*\n([\s\S]*?)---\s*\n?/ (src/utils/frontmatterParser.ts, read in a
// public copy of Claude Code's source): it closes at the first
// `---`, so a line of 56 dashes closes the block too. Deliberately not
// modelled: that regexp also closes at a `---` inside a value
// (`description: a---b`), which would silently truncate the frontmatter; here
// such a file stays unterminated.
func splitFrontmatter(data []byte) (fm, body string, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	first, rest, found := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return "", "", errNoFrontmatter
	}
	if !found {
		return "", "", errUnterminatedFrontmatter
	}
	for off := 0; off <= len(rest); {
		end := strings.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if end >= 0 {
			line = rest[off : off+end]
		}
		if isDashLine(line) {
			fm = rest[:off]
			if end >= 0 {
				body = rest[off+end+1:]
			}
			return fm, body, nil
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return "", "", errUnterminatedFrontmatter
}

// isDashLine reports whether line is three or more dashes, optionally
// followed by blanks: a frontmatter's closing line.
func isDashLine(line string) bool {
	line = strings.TrimRight(line, " \t")
	return len(line) >= 3 && strings.Trim(line, "-") == ""
}

// yamlLineRE extracts the line from yaml.v3 error messages.
var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseDocument splits and parses one file. Errors go to d.diags; the
// returned document has a nil root when nothing usable could be parsed.
func parseDocument(d *decoder, data []byte) *document {
	doc := &document{file: d.file, lineOffset: 1}
	if len(data) > MaxFileSize {
		d.errAt(Pos{File: d.file, Line: 1, Column: 1}, "",
			fmt.Sprintf("file is larger than %d bytes", MaxFileSize),
			"agent and skill definitions are small Markdown files; move large reference material into separate files")
		return doc
	}
	fm, body, err := splitFrontmatter(data)
	if !frontmatterFound(d, err) {
		return doc
	}
	if len(fm) > MaxFrontmatterSize {
		d.errAt(Pos{File: d.file, Line: 2, Column: 1}, "",
			fmt.Sprintf("frontmatter is larger than %d bytes", MaxFrontmatterSize),
			"keep prompts in the Markdown body, not in frontmatter fields")
		return doc
	}
	doc.raw, doc.body = fm, body
	d.lineOffset = doc.lineOffset
	d.lines = strings.Split(fm, "\n")

	var n yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(fm))
	if err := dec.Decode(&n); err != nil && !errors.Is(err, io.EOF) {
		yamlSyntaxError(d, doc, bytes.Contains(data, []byte("\r\n")), err)
		return doc
	}
	if !singleDocument(d, doc, dec) {
		return doc
	}
	if doc.root = frontmatterRoot(d, &n); doc.root != nil {
		checkCommentTruncation(d, doc)
	}
	return doc
}

// yamlSyntaxError handles a frontmatter yaml.v3 rejects with err: Claude
// Code's quoting retry recovers it where that applies (crlf tells whether
// the file has CRLF line ends); otherwise err is reported.
func yamlSyntaxError(d *decoder, doc *document, crlf bool, err error) {
	blocked := ""
	if retryApplies(d.file, crlf) {
		var ok bool
		if ok, blocked = retryQuoted(d, doc, doc.raw); ok {
			checkCommentTruncation(d, doc)
			return
		}
	}
	reportYAMLError(d, doc, err, blocked)
}

// frontmatterRoot returns the mapping the frontmatter's document n holds.
// It reports an empty frontmatter, unsafe YAML or a root that is no
// mapping, and returns nil then.
func frontmatterRoot(d *decoder, n *yaml.Node) *yaml.Node {
	if n.Kind == 0 || len(n.Content) == 0 {
		d.errAt(Pos{File: d.file, Line: 2, Column: 1}, "", "frontmatter is empty",
			"declare at least name and description")
		return nil
	}
	root := n.Content[0]
	if !checkSafe(d, root, 1) {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "", "frontmatter must be a YAML mapping of field: value, not a %s", kindName(root))
		return nil
	}
	return root
}

// frontmatterFound reports a missing or unterminated frontmatter block
// (err from splitFrontmatter); false when it reported one.
func frontmatterFound(d *decoder, err error) bool {
	switch {
	case errors.Is(err, errNoFrontmatter):
		d.errAt(Pos{File: d.file, Line: 1, Column: 1}, "",
			"missing YAML frontmatter: the file must start with a line holding only ---",
			"add a frontmatter block (---, name: ..., description: ..., ---), or rename the file to start with _ to exclude it")
		return false
	case errors.Is(err, errUnterminatedFrontmatter):
		d.errAt(Pos{File: d.file, Line: 1, Column: 1}, "",
			"unterminated frontmatter: the --- on line 1 is never closed",
			"end the frontmatter with a line holding only ---")
		return false
	}
	return true
}

// singleDocument reports a second YAML document after the first in the
// frontmatter: a "..." document end followed by more YAML would otherwise
// be ignored. False when it reported one.
func singleDocument(d *decoder, doc *document, dec *yaml.Decoder) bool {
	var extra yaml.Node
	err := dec.Decode(&extra)
	if errors.Is(err, io.EOF) {
		return true
	}
	line := 1
	if err == nil && len(extra.Content) > 0 {
		line = extra.Content[0].Line
	} else if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	d.errAt(Pos{File: d.file, Line: line + doc.lineOffset, Column: 1}, "",
		"frontmatter holds more than one YAML document",
		"remove the '...' or '---' line inside the frontmatter")
	return false
}

// reportYAMLError turns a yaml.v3 syntax error into positioned diagnostics,
// pointing at unquoted `: ` in plain scalars when that is the cause.
// blocked, when set, is the field Claude Code's retry would turn into a
// string (retryQuoted), which the hint of an unquoted ': ' then names.
func reportYAMLError(d *decoder, doc *document, err error, blocked string) {
	msg := err.Error()
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	if strings.Contains(msg, "mapping values are not allowed") {
		if found := reportColonScalars(d, doc, blocked); found {
			return
		}
	}
	if strings.Contains(msg, "tab") || strings.Contains(msg, "cannot start any token") {
		if found := reportTabs(d, doc); found {
			return
		}
	}
	if line == 0 {
		line = 1
	}
	d.errAt(Pos{File: d.file, Line: line + doc.lineOffset, Column: 1}, "",
		"invalid YAML: "+msg, "check indentation and quote values that contain ': ', ' #', or start with a YAML indicator")
}

// plainValueRE matches `key: value` lines (optionally a list item) whose
// value is a plain, unquoted scalar.
var plainValueRE = regexp.MustCompile(`^(\s*(?:-\s+)?)([A-Za-z0-9_.-]+):[ \t]+([^\s'"\[{|>&*!#%@` + "`" + `].*)$`)

// reportColonScalars finds plain scalars holding `: `, which YAML reads as a
// nested mapping (yaml.v3: "mapping values are not allowed in this
// context"), and reports each with its position and the fix.
func reportColonScalars(d *decoder, doc *document, blocked string) bool {
	note := ""
	if blocked != "" {
		note = fmt.Sprintf(" (Claude Code's fallback would load the file only by quoting %s into one string, which changes what it means, so fullsend does not)", blocked)
	}
	found := false
	for i, line := range strings.Split(doc.raw, "\n") {
		m := plainValueRE.FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		key := line[m[4]:m[5]]
		value := line[m[6]:m[7]]
		if c := strings.Index(value, " #"); c >= 0 {
			value = value[:c]
		}
		idx := colonSpace(value)
		if idx < 0 {
			continue
		}
		found = true
		d.errAt(Pos{File: d.file, Line: i + 1 + doc.lineOffset, Column: m[6] + idx + 1}, key,
			"unquoted ': ' inside a plain value: YAML reads it as a nested mapping",
			fmt.Sprintf("quote the value: %s: %q", key, strings.TrimSpace(line[m[6]:m[7]]))+note)
	}
	return found
}

// reportTabs finds tabs in the indentation of the frontmatter, which YAML
// refuses ("found character that cannot start any token"), and reports
// each at its line and column as a tab.
func reportTabs(d *decoder, doc *document) bool {
	found := false
	for i, line := range strings.Split(doc.raw, "\n") {
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		col := strings.IndexByte(line[:indent], '\t')
		if col < 0 || indent == len(line) {
			continue
		}
		found = true
		d.errAt(Pos{File: d.file, Line: i + 1 + doc.lineOffset, Column: col + 1}, "",
			"invalid YAML: a tab in the indentation: YAML indents with spaces only",
			"replace the tab with spaces, as many as the lines around it are indented")
	}
	return found
}

// colonSpace returns the index of the first `:` followed by a blank in s, or -1.
func colonSpace(s string) int {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == ':' && (s[i+1] == ' ' || s[i+1] == '\t') {
			return i
		}
	}
	return -1
}

// checkCommentTruncation warns when a prose field's plain value contains
// ` #`: YAML drops everything from there as a comment, so
// `description: Fix issue #42` silently becomes "Fix issue".
func checkCommentTruncation(d *decoder, doc *document) {
	if !strings.Contains(doc.raw, " #") {
		return
	}
	for i, line := range strings.Split(doc.raw, "\n") {
		if strings.Contains(line, " #") && !doc.requoted[i] {
			checkLineComment(d, doc, i, line)
		}
	}
}

// checkLineComment warns when line i of the frontmatter sets a top-level
// prose field to a plain value that holds a comment.
func checkLineComment(d *decoder, doc *document, i int, line string) {
	m := plainValueRE.FindStringSubmatchIndex(line)
	if m == nil || m[2] != m[3] { // top-level keys only
		return
	}
	key := line[m[4]:m[5]]
	if !freeTextFields[key] {
		return
	}
	value := line[m[6]:m[7]]
	if c := strings.Index(value, " #"); c >= 0 {
		d.warnAt(Pos{File: d.file, Line: i + 1 + doc.lineOffset, Column: m[6] + c + 2}, key,
			"the text after ' #' is a YAML comment and is dropped from the value",
			fmt.Sprintf("quote the value: %s: %q", key, strings.TrimSpace(value)))
	}
}

// checkSafe rejects YAML features that have no place in a definition and
// that enable resource attacks or ambiguity: anchors and aliases (the
// "billion laughs" bomb; yaml.v3's Node API does not expand them but any
// consumer that does would), merge keys, explicit tags, duplicate keys and
// nesting deeper than MaxYAMLDepth. It reports every problem it finds.
func checkSafe(d *decoder, n *yaml.Node, depth int) bool {
	if depth > MaxYAMLDepth {
		d.errorf(n, "", "YAML nesting deeper than %d levels", MaxYAMLDepth)
		return false
	}
	if n.Kind == yaml.AliasNode {
		reportAnchor(d, n)
		return false
	}
	ok := checkNode(d, n)
	for _, c := range n.Content {
		ok = checkSafe(d, c, depth+1) && ok
	}
	return ok
}

// checkNode is checkSafe on one node that is no alias, not its children:
// its anchor, its tag and its keys.
func checkNode(d *decoder, n *yaml.Node) bool {
	ok := true
	if n.Anchor != "" {
		reportAnchor(d, n)
		ok = false
	}
	if n.Style&yaml.TaggedStyle != 0 {
		d.errorfHint(n, "", "remove the tag; values are typed by their field",
			"explicit YAML tag %s is not allowed", n.Tag)
		ok = false
	}
	if n.Kind == yaml.MappingNode && !checkKeys(d, n) {
		ok = false
	}
	return ok
}

// reportAnchor reports the first anchor or alias only: a bomb has
// thousands.
func reportAnchor(d *decoder, n *yaml.Node) {
	if d.aliasSeen {
		return
	}
	d.aliasSeen = true
	what := "anchor &" + n.Anchor
	if n.Kind == yaml.AliasNode {
		what = "alias *" + n.Value
	}
	d.errorfHint(n, "", "write plain values; anchors, aliases and merge keys are not accepted in definitions",
		"YAML %s is not allowed", what)
}

// checkKeys reports mapping keys that are not plain strings (merge keys
// included) and duplicate keys, every one of them.
func checkKeys(d *decoder, n *yaml.Node) bool {
	ok := true
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		switch {
		case k.Tag == "!!merge":
			d.errorfHint(k, "", "write the keys out; anchors, aliases and merge keys are not accepted in definitions", "YAML merge key << is not allowed")
			ok = false
		case k.Kind != yaml.ScalarNode:
			d.errorf(k, "", "mapping keys must be plain strings, not a %s", kindName(k))
			ok = false
		case seen[k.Value] != nil:
			d.errorfHint(k, k.Value, "remove one of them",
				"duplicate key %q (first at line %d)", k.Value, seen[k.Value].Line+d.lineOffset)
			ok = false
		default:
			seen[k.Value] = k
		}
	}
	return ok
}

// kindName names a YAML node kind for messages.
func kindName(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return cmp.Or(scalarTagNames[n.Tag], "string")
	}
	return cmp.Or(nodeKindNames[n.Kind], "document")
}

// nodeKindNames and scalarTagNames are kindName's words for a node's kind
// and, for a scalar, its resolved tag.
var (
	nodeKindNames  = map[yaml.Kind]string{yaml.MappingNode: "mapping", yaml.SequenceNode: "list", yaml.AliasNode: "alias"}
	scalarTagNames = map[string]string{"!!null": "null", "!!bool": "boolean", "!!int": "number", "!!float": "number"}
)
