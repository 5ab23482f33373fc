package lint

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// lineLocator finds the line of a policy path in a YAML policy document.
type lineLocator struct{ root *yaml.Node }

// newLineLocator parses raw with yaml.v3 for its node tree. The engine calls
// it only for a policy that has a finding to place, once per policy.
func newLineLocator(raw []byte) *lineLocator {
	if len(raw) == 0 {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	return &lineLocator{root: doc.Content[0]}
}

// lazyLines locates policy paths in a raw policy, parsing it on the first
// path to locate: most policies have no finding that needs a line.
type lazyLines struct {
	raw    []byte
	parsed bool
	loc    *lineLocator
}

// line returns the line of a policy path, or 0 for no path or no raw
// policy.
func (l *lazyLines) line(path string) int {
	if path == "" || len(l.raw) == 0 {
		return 0
	}
	if !l.parsed {
		l.loc, l.parsed = newLineLocator(l.raw), true
	}
	return l.loc.line(path)
}

// line returns the line of the deepest node on path
// (network_policies.x.endpoints[0].host), or 0.
func (l *lineLocator) line(path string) int {
	if l == nil {
		return 0
	}
	n, line := l.root, l.root.Line
	for _, tok := range splitPath(path) {
		next, at := child(n, tok)
		if next == nil {
			break
		}
		n, line = next, at
	}
	return line
}

// child returns the node tok names under n (a mapping's value for a key, a
// sequence's item for an index) and its line (a key's own line), or nil.
func child(n *yaml.Node, tok pathToken) (*yaml.Node, int) {
	switch {
	case n.Kind == yaml.MappingNode && !tok.index:
		return mappingValue(n, tok.key)
	case n.Kind == yaml.SequenceNode && tok.index && tok.i < len(n.Content):
		return n.Content[tok.i], n.Content[tok.i].Line
	}
	return nil, 0
}

// mappingValue returns the value of key in mapping n and the key's line,
// or nil.
func mappingValue(n *yaml.Node, key string) (*yaml.Node, int) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1], n.Content[i].Line
		}
	}
	return nil, 0
}

type pathToken struct {
	key   string
	index bool
	i     int
}

// splitPath splits a.b[2].c into a, b, [2], c.
func splitPath(p string) []pathToken {
	var out []pathToken
	for _, part := range strings.Split(p, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key != "" {
			out = append(out, pathToken{key: key})
		}
		out = appendIndexes(out, rest)
	}
	return out
}

// appendIndexes appends the index tokens of "2][0]" (what follows a key's
// first '[') to out, up to the first that is not a non-negative integer.
// The path comes from a rule's message, custom rules' included: "[-1]" or
// "[x]" names no item.
func appendIndexes(out []pathToken, rest string) []pathToken {
	for rest != "" {
		num, after, ok := strings.Cut(rest, "]")
		i, err := strconv.Atoi(num)
		if !ok || err != nil || i < 0 {
			break
		}
		out = append(out, pathToken{index: true, i: i})
		rest = strings.TrimPrefix(after, "[")
	}
	return out
}
