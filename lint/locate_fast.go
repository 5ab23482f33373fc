package lint

import (
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// fastTree builds the yaml.Node tree lineLocator walks (mappings, sequences
// and the lines of their keys and items) for the block-style YAML policies
// are written in, without a full YAML parse: parsing with yaml.v3 again
// cost a tenth of linting a policy. It accepts only plain keys, single-line
// scalars (plain, or quoted without '#') and block mappings and sequences;
// for anything else (flow collections, block scalars, anchors, tags,
// multi-line scalars, tabs, several documents...) it returns nil and the
// caller parses with yaml.v3. TestFastTree and FuzzFastTree check that the
// trees it returns agree with yaml.v3's on every key and item line.
func fastTree(raw []byte) *yaml.Node {
	if !simpleText(raw) {
		return nil
	}
	var lines []fastLine
	for no, text := range strings.Split(string(raw), "\n") {
		if strings.ContainsAny(text, "\t\r") {
			return nil
		}
		body := strings.TrimLeft(text, " ")
		if body == "" || body[0] == '#' {
			continue
		}
		if strings.HasPrefix(body, "---") || strings.HasPrefix(body, "...") || body[0] == '%' {
			return nil
		}
		lines = append(lines, fastLine{no: no + 1, indent: len(text) - len(body), text: strings.TrimRight(body, " ")})
	}
	if len(lines) == 0 {
		return nil
	}
	p := &fastParser{lines: lines}
	root := p.block(0, 0)
	if p.bad || root == nil || p.i != len(lines) {
		return nil
	}
	return root
}

type fastLine struct {
	no, indent int
	text       string
}

type fastParser struct {
	lines []fastLine
	i     int
	bad   bool
}

// block parses the node starting at the current line, whose indent must be
// at least min.
func (p *fastParser) block(min, _ int) *yaml.Node {
	if p.i >= len(p.lines) || p.lines[p.i].indent < min {
		p.bad = true
		return nil
	}
	l := p.lines[p.i]
	switch {
	case isDash(l.text):
		return p.sequence(l.indent)
	case isKey(l.text):
		return p.mapping(l.indent)
	}
	if l.text[0] == '[' || l.text[0] == '{' {
		p.i++
		return p.flowLine(l.no, l.text)
	}
	// A lone scalar: only valid as a sequence item (a virtual line).
	if !plainOrQuoted(l.text) {
		p.bad = true
		return nil
	}
	p.i++
	return &yaml.Node{Kind: yaml.ScalarNode, Line: l.no, Value: l.text}
}

func isDash(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// isKey reports whether text is "key:" or "key: value" with a plain key.
func isKey(text string) bool {
	k, _, ok := strings.Cut(text, ":")
	if !ok || k == "" || !(len(text) == len(k)+1 || text[len(k)+1] == ' ') {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' ||
			i > 0 && (c == '-' || c == '.' || c == '/')) {
			return false
		}
	}
	return true
}

// plainOrQuoted reports whether v is a single-line scalar this parser
// understands: plain, or quoted without a '#' (so no trailing comment).
func plainOrQuoted(v string) bool {
	if v == "" || strings.ContainsAny(v[:1], "{}[]|>&*!?%@`,-:#") || strings.Contains(v, ": ") || strings.HasSuffix(v, ":") {
		return false
	}
	if v[0] == '"' || v[0] == '\'' {
		return len(v) >= 2 && v[len(v)-1] == v[0] && !strings.Contains(v, "#") && !strings.Contains(v[1:len(v)-1], v[:1])
	}
	return true
}

// sequence parses the items that start with a dash at column ind.
func (p *fastParser) sequence(ind int) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Line: p.lines[p.i].no}
	for !p.bad && p.i < len(p.lines) && p.lines[p.i].indent == ind && isDash(p.lines[p.i].text) {
		l := p.lines[p.i]
		rest := strings.TrimLeft(l.text[1:], " ")
		var item *yaml.Node
		if rest == "" || rest[0] == '#' {
			p.i++
			if p.i >= len(p.lines) || p.lines[p.i].indent <= ind {
				p.bad = true // a null item
				return nil
			}
			item = p.block(ind+1, 0)
		} else {
			// The item starts on the dash's line: parse the rest as a line
			// of its own at its column.
			p.lines[p.i] = fastLine{no: l.no, indent: ind + len(l.text) - len(rest), text: rest}
			item = p.block(0, 0)
		}
		if item == nil {
			p.bad = true
			return nil
		}
		seq.Content = append(seq.Content, item)
	}
	if p.i < len(p.lines) && p.lines[p.i].indent > ind {
		p.bad = true
	}
	return seq
}

// mapping parses the "key: value" lines at column ind.
func (p *fastParser) mapping(ind int) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Line: p.lines[p.i].no}
	for !p.bad && p.i < len(p.lines) && p.lines[p.i].indent == ind {
		l := p.lines[p.i]
		if !isKey(l.text) {
			p.bad = true
			return nil
		}
		k, v, _ := strings.Cut(l.text, ":")
		v = strings.TrimLeft(v, " ")
		if i := strings.Index(v, " #"); i >= 0 && v[0] != '"' && v[0] != '\'' {
			v = strings.TrimRight(v[:i], " ")
		}
		key := &yaml.Node{Kind: yaml.ScalarNode, Line: l.no, Value: k}
		p.i++
		var val *yaml.Node
		switch {
		case v != "" && (v[0] == '[' || v[0] == '{'):
			val = p.flowLine(l.no, v)
		case v != "" && v[0] != '#':
			if !plainOrQuoted(v) {
				p.bad = true
				return nil
			}
			val = &yaml.Node{Kind: yaml.ScalarNode, Line: l.no, Value: v}
		case p.i < len(p.lines) && p.lines[p.i].indent > ind:
			val = p.block(ind+1, 0)
		case p.i < len(p.lines) && p.lines[p.i].indent == ind && isDash(p.lines[p.i].text):
			val = p.sequence(ind) // an indentless sequence
		default:
			val = &yaml.Node{Kind: yaml.ScalarNode, Line: l.no} // null
		}
		if val == nil {
			p.bad = true
			return nil
		}
		m.Content = append(m.Content, key, val)
	}
	if p.i < len(p.lines) && p.lines[p.i].indent > ind {
		p.bad = true
	}
	return m
}

// simpleText reports whether raw is ASCII text (bar non-ASCII letters in
// values) without the characters YAML treats specially: control characters,
// byte order marks and the Unicode line breaks.
func simpleText(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	for _, r := range string(raw) {
		switch {
		case r == '\n':
		case r < 0x20, r == 0x7F, r >= 0x80 && r <= 0x9F, r == 0x2028, r == 0x2029, r == 0xFEFF, r >= 0xD800 && r <= 0xDFFF, r >= 0xFFFE:
			return false
		}
	}
	return true
}

// flowLine parses a flow collection ([a, b] or {k: v}) that ends on its
// line; anything after it but a comment rejects the document.
func (p *fastParser) flowLine(no int, text string) *yaml.Node {
	n, rest, ok := flowValue(no, text)
	if !ok || n.Kind == yaml.ScalarNode || (rest != "" && !strings.HasPrefix(strings.TrimLeft(rest, " "), "#")) ||
		(rest != "" && rest[0] != ' ') {
		p.bad = true
		return nil
	}
	return n
}

// flowValue parses one flow value at the start of s: a collection, a quoted
// scalar without '#' or escapes, or a plain scalar of safe characters.
func flowValue(no int, s string) (*yaml.Node, string, bool) {
	s = strings.TrimLeft(s, " ")
	if s == "" {
		return nil, s, false
	}
	switch s[0] {
	case '[', '{':
		n := &yaml.Node{Kind: yaml.SequenceNode, Line: no}
		closer := byte(']')
		if s[0] == '{' {
			n.Kind, closer = yaml.MappingNode, '}'
		}
		s = strings.TrimLeft(s[1:], " ")
		if s != "" && s[0] == closer {
			return n, s[1:], true
		}
		for {
			if n.Kind == yaml.MappingNode {
				k, rest, ok := strings.Cut(s, ":")
				if !ok || !isKey(k+":") || !strings.HasPrefix(rest, " ") {
					return nil, s, false
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Line: no, Value: k})
				s = rest
			}
			v, rest, ok := flowValue(no, s)
			if !ok {
				return nil, s, false
			}
			n.Content = append(n.Content, v)
			s = strings.TrimLeft(rest, " ")
			switch {
			case s != "" && s[0] == closer:
				return n, s[1:], true
			case s != "" && s[0] == ',':
				s = strings.TrimLeft(s[1:], " ")
				if s == "" || s[0] == closer || s[0] == ',' {
					return nil, s, false
				}
			default:
				return nil, s, false
			}
		}
	case '"', '\'':
		end := strings.IndexByte(s[1:], s[0])
		if end < 0 {
			return nil, s, false
		}
		v := s[:end+2]
		if strings.ContainsAny(v, "#\\") || strings.HasPrefix(s[end+2:], s[:1]) {
			return nil, s, false
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Line: no, Value: v}, s[end+2:], true
	}
	end := strings.IndexAny(s, ",]}")
	if end < 0 {
		end = len(s)
	}
	v := strings.TrimRight(s[:end], " ")
	if v == "" || strings.ContainsAny(v, ":#[]{}\"'&*!|>%@`?") || v[0] == '-' {
		return nil, s, false
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Line: no, Value: v}, s[end:], true
}
