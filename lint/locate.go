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

// line returns the line of the deepest node on path
// (network_policies.x.endpoints[0].host), or 0.
func (l *lineLocator) line(path string) int {
	if l == nil {
		return 0
	}
	n, line := l.root, l.root.Line
	for _, tok := range splitPath(path) {
		var next *yaml.Node
		switch {
		case n.Kind == yaml.MappingNode && !tok.index:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == tok.key {
					line, next = n.Content[i].Line, n.Content[i+1]
					break
				}
			}
		case n.Kind == yaml.SequenceNode && tok.index:
			if tok.i < len(n.Content) {
				next = n.Content[tok.i]
				line = next.Line
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return line
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
		for rest != "" {
			num, after, ok := strings.Cut(rest, "]")
			i, err := strconv.Atoi(num)
			if !ok || err != nil {
				break
			}
			out = append(out, pathToken{index: true, i: i})
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out
}
