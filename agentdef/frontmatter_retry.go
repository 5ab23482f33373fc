package agentdef

import (
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Claude Code's frontmatter retry, modelled on parseFrontmatter and
// quoteProblematicValues in src/utils/frontmatterParser.ts of Claude Code
// (read in a public copy of Claude Code's
// source): when the frontmatter's YAML does
// not parse, Claude Code rewrites every line matching
// /^([a-zA-Z_-]+):\s+(.+)$/ whose value is not already quoted ("..." or
// '...') and matches YAML_SPECIAL_CHARS = /[{}[\]*&#!|>%@`]|: / into
// `key: "value"` (escaping \ as \\ and " as \") and parses again; if that
// fails too it loads the file with an empty frontmatter (no name: an agent is
// skipped). Agents (loadAgentsDir) and skills (loadSkillsDir) both parse
// through it.
//
// fullsend does the same rewrite and, when the retry parses, compiles the
// retried document with a warning per value the rewrite changed, as long as
// no field fullsend reads structurally changes meaning: a rewritten value
// must belong to a field that is only ever a string (retryStringKeys), to a
// field fullsend ignores (an unknown key), or read as the same string plain
// as quoted (`tools: Read, Bash(npm *)` holds a `*` and is quoted, to no
// effect). `tools: ["Read", "Grep"]` quoted into one string would leave the
// agent without its tools, so the original error stays.
//
// Deliberately not modelled: Claude Code parses with Bun.YAML or the yaml npm
// package, fullsend with yaml.v3 (the retry is judged by yaml.v3); and
// OpenCode files (.opencode/), which OpenCode parses with gray-matter and its
// own fallbackSanitization (anomalyco/opencode
// packages/opencode/src/config/markdown.ts: a top-level `key: value` whose
// value holds any ':' becomes the block scalar `key: |-` plus the value on an
// indented line). That rewrite adds lines and parseDocument does not know an
// agents/ file's dialect before parsing it, so OpenCode files get no retry.

// ccSpecialRE is Claude Code's YAML_SPECIAL_CHARS.
var ccSpecialRE = regexp.MustCompile("[{}\\[\\]*&#!|>%@`]|: ")

// retryStringKeys are the fields fullsend reads only as a string (str,
// nonEmptyStr, enum): Claude Code's quoted reading of them is what both
// runtimes load.
var retryStringKeys = map[string]bool{
	"name": true, "description": true, "model": true, "color": true,
	"initialPrompt": true, "when_to_use": true, "argument-hint": true,
	"license": true, "compatibility": true, "context": true, "agent": true,
	"shell": true, "permissionMode": true, "memory": true, "isolation": true,
}

// requote is one line quoteProblematicValues rewrote.
type requote struct {
	line  int // 0-based line of the frontmatter
	key   string
	col   int // byte offset of the value in the original line
	value string
}

// quoteProblematicValues is Claude Code's rewrite of frontmatter text. It
// returns the rewritten text and the lines it changed; the rewrite only
// changes columns, never the number of lines.
func quoteProblematicValues(fm string) (string, []requote) {
	lines := strings.Split(fm, "\n")
	var changed []requote
	for i, line := range lines {
		key, col, ok := ccKeyValue(line)
		if !ok {
			continue
		}
		value := line[col:]
		if isQuoted(value) || !ccSpecialRE.MatchString(value) {
			continue
		}
		escaped := strings.ReplaceAll(strings.ReplaceAll(value, `\`, `\\`), `"`, `\"`)
		lines[i] = key + `: "` + escaped + `"`
		changed = append(changed, requote{line: i, key: key, col: col, value: value})
	}
	return strings.Join(lines, "\n"), changed
}

// isQuoted reports whether value starts and ends with the same quote
// character, which Claude Code's rewrite leaves alone.
func isQuoted(value string) bool {
	return (strings.HasPrefix(value, `"`) && strings.HasSuffix(value, `"`)) ||
		(strings.HasPrefix(value, "'") && strings.HasSuffix(value, "'"))
}

// ccKeyChars are the characters of the key in Claude Code's line regexp.
const ccKeyChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-"

// ccKeyValue matches a line against /^([a-zA-Z_-]+):\s+(.+)$/ as JavaScript
// does: \s is JavaScript's white space, `.` matches no line terminator and
// $ is the end of the line. It returns the key and the value's offset; a
// line of only white space after the colon has no value worth quoting (the
// regexp's one-space value never holds a special character).
func ccKeyValue(line string) (key string, col int, ok bool) {
	k := len(line) - len(strings.TrimLeft(line, ccKeyChars))
	if k == 0 || !strings.HasPrefix(line[k:], ":") {
		return "", 0, false
	}
	rest := line[k+1:]
	value := strings.TrimLeftFunc(rest, jsSpace)
	if len(value) == len(rest) || value == "" || strings.ContainsAny(value, "\r\u2028\u2029") {
		return "", 0, false
	}
	return line[:k], len(line) - len(value), true
}

// jsSpace reports whether r is white space for JavaScript's \s.
func jsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return 0x2000 <= r && r <= 0x200a
}

// retryApplies reports whether a file is parsed by Claude Code's parser:
// OpenCode files are not (see above), and Claude Code reads a CRLF file's
// lines with their \r, which its line regexp never matches.
func retryApplies(file string, crlf bool) bool {
	return !crlf && !strings.HasPrefix(file, ".opencode/") && !strings.Contains(file, "/.opencode/")
}

// retryKnownKeys returns the fields fullsend reads in the file: a skill's,
// or, for an agents/ file, whose dialect is decided from its fields after
// parsing (agentFormat), those of both agent dialects.
func retryKnownKeys(file string) []string {
	if strings.EqualFold(path.Base(file), "SKILL.md") {
		return skillKeys
	}
	return append(append([]string(nil), claudeAgentKeys...), openCodeAgentKeys...)
}

// retryQuoted runs Claude Code's retry on a frontmatter yaml.v3 rejected.
// When the retried document parses and no field fullsend reads changes
// meaning, it sets doc.root, warns for each value the rewrite changed and
// returns true; otherwise it reports nothing and the caller reports the
// original error.
//
// blocked names the field whose meaning the retry would change, when that
// is why the retry was refused, for the error's hint.
func retryQuoted(d *decoder, doc *document, fm string) (ok bool, blocked string) {
	quoted, changed := quoteProblematicValues(fm)
	if len(changed) == 0 {
		return false, ""
	}
	known := retryKnownKeys(d.file)
	differ, blocked := retryChanges(changed, known)
	if blocked != "" || len(differ) == 0 {
		return false, blocked
	}
	root := decodeRetried(d, quoted)
	if root == nil {
		return false, ""
	}
	restorePositions(root, changed)
	for _, r := range differ {
		if containsString(known, r.key) { // an unknown key has its own warning
			warnRequoted(d, doc, r)
		}
	}
	doc.root = root
	doc.requoted = map[int]bool{}
	for _, r := range changed {
		doc.requoted[r.line] = true
	}
	return true, ""
}

// retryChanges returns the rewritten values whose reading the quoting
// changes, or, when one of them is a field fullsend reads other than as a
// string, that field's name (blocked).
func retryChanges(changed []requote, known []string) (differ []requote, blocked string) {
	for _, r := range changed {
		if readsAsPlain(r.value) {
			continue
		}
		if !retryStringKeys[r.key] && containsString(known, r.key) {
			return nil, r.key
		}
		differ = append(differ, r)
	}
	return differ, ""
}

// decodeRetried parses the rewritten frontmatter: one document holding a
// non-empty mapping that passes checkSafe (duplicate keys, which the yaml
// npm package refuses too, included). Nil when it does not.
func decodeRetried(d *decoder, text string) *yaml.Node {
	var n yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&n); err != nil {
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil
	}
	if len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	scratch := newDecoder(d.file)
	scratch.lineOffset = d.lineOffset
	if !checkSafe(scratch, n.Content[0], 1) || scratch.nerr > 0 {
		return nil
	}
	return n.Content[0]
}

// readsAsPlain reports whether value, unquoted after a key, is the plain
// string value: quoting it then changes nothing.
func readsAsPlain(value string) bool {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("k: "+value), &n); err != nil || len(n.Content) == 0 {
		return false
	}
	m := n.Content[0]
	if m.Kind != yaml.MappingNode || len(m.Content) != 2 {
		return false
	}
	v := m.Content[1]
	return v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Style == 0 && v.Value == value
}

// restorePositions moves each rewritten value node back to its column in
// the original file and makes it plain again: its text is verbatim there
// (the quoting only escaped \ and "), so positions inside it (scalarPos)
// stay exact. Lines never moved.
func restorePositions(root *yaml.Node, changed []requote) {
	for _, r := range changed {
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			if k.Line == r.line+1 && k.Value == r.key && v.Kind == yaml.ScalarNode && v.Line == r.line+1 {
				v.Column = r.col + 1
				v.Style = 0
			}
		}
	}
}

// warnRequoted warns about one value Claude Code's retry quoted, at the
// place yaml.v3 stopped: the `: ` or the first special character.
func warnRequoted(d *decoder, doc *document, r requote) {
	at, what := strings.Index(r.value, ": "), "unquoted ': '"
	if at < 0 {
		loc := ccSpecialRE.FindStringIndex(r.value)
		at, what = loc[0], fmt.Sprintf("unquoted %q", r.value[loc[0]:loc[1]])
		if r.value[at] == '#' {
			what = "unquoted '#'"
		}
	}
	d.warnAt(Pos{File: d.file, Line: r.line + 1 + doc.lineOffset, Column: r.col + at + 1}, r.key,
		fmt.Sprintf("%s in %s: Claude Code quotes the value and loads it, so does fullsend", what, r.key),
		fmt.Sprintf("quote it: %s: %q", r.key, strings.TrimSpace(r.value)))
}
