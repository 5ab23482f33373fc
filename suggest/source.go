package suggest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// source is one agent or skill file whose frontmatter suggest edits: text
// insertions at recorded positions, so comments, order and style survive.
type source struct {
	path  string
	lines []string // without line breaks
	crlf  bool
	// open and close are the 0-based indexes of the "---" lines.
	open, close int
	root        *yaml.Node // the frontmatter mapping
	edits       []insertion
	// replaced holds whole-line replacements by 1-based file line.
	replaced map[int]string
}

// insertion puts text after the 1-based file line `after`.
type insertion struct {
	after int
	text  []string
	seq   int
}

var errNoFrontmatter = errors.New("no YAML frontmatter between --- lines")

func loadSource(fsys fs.FS, path string) (*source, error) {
	data, err := fs.ReadFile(fsys, path)
	if err != nil {
		return nil, err
	}
	s := &source{path: path, crlf: bytes.Contains(data, []byte("\r\n"))}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	s.lines = strings.Split(text, "\n")
	s.open, s.close = frontmatterBounds(s.lines)
	if s.open < 0 || s.close < 0 {
		return nil, fmt.Errorf("%s: %w", path, errNoFrontmatter)
	}
	s.root, err = parseFrontmatter(strings.Join(s.lines[s.open+1:s.close], "\n"))
	if err != nil {
		return nil, fmt.Errorf("%s: frontmatter: %w", path, err)
	}
	return s, nil
}

// frontmatterBounds finds the "---" lines that open and close the
// frontmatter, which opens on the first line that is not blank; -1 for
// either when it is not found.
func frontmatterBounds(lines []string) (open, close int) {
	open = -1
	for i, l := range lines {
		if strings.TrimRight(l, " \t") != "---" {
			if open < 0 && strings.TrimSpace(l) != "" {
				break
			}
			continue
		}
		if open >= 0 {
			return open, i
		}
		open = i
	}
	return open, -1
}

// parseFrontmatter parses the frontmatter into its top mapping, an empty
// one when it holds no mapping.
func parseFrontmatter(fm string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(fm), &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		return doc.Content[0], nil
	}
	return &yaml.Node{Kind: yaml.MappingNode}, nil
}

// fileLine is the 1-based file line of a frontmatter node.
func (s *source) fileLine(n *yaml.Node) int { return n.Line + s.open + 1 }

// lastLine is the last file line a node's subtree spans.
func (s *source) lastLine(n *yaml.Node) int {
	max := n.Line
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Line > max {
			max = n.Line
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return max + s.open + 1
}

// get returns the value of key in mapping m.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// endpointEntry is one item of sandbox.endpoints.
type endpointEntry struct {
	index int
	node  *yaml.Node
	host  string
	port  int
}

func (s *source) sandbox() *yaml.Node { return get(s.root, "sandbox") }

func (s *source) endpoints() []endpointEntry {
	seq := get(s.sandbox(), "endpoints")
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil
	}
	var out []endpointEntry
	for i, item := range seq.Content {
		e := endpointEntry{index: i, node: item, port: 443}
		if h := get(item, "host"); h != nil {
			e.host = strings.ToLower(h.Value)
		}
		if p := get(item, "port"); p != nil {
			if n, err := strconv.Atoi(p.Value); err == nil {
				e.port = n
			}
		}
		out = append(out, e)
	}
	return out
}

// itemPrefix is "<indent>- " for a new item of a block sequence.
func (s *source) itemPrefix(seq *yaml.Node) (string, error) {
	if seq.Style&yaml.FlowStyle != 0 || len(seq.Content) == 0 {
		return "", fmt.Errorf("%s:%d: a flow-style list ([...]); rewrite it as a block list (one \"- \" item a line) and run suggest again", s.path, s.fileLine(seq))
	}
	first := seq.Content[0]
	line := s.lines[s.fileLine(first)-1]
	col := first.Column - 1
	if col > len(line) {
		col = len(line)
	}
	dash := strings.LastIndexByte(line[:col], '-')
	if dash < 0 {
		return "", fmt.Errorf("%s:%d: cannot find the list's dash", s.path, s.fileLine(first))
	}
	return strings.Repeat(" ", dash) + "- ", nil
}

// keyIndent is the indentation of mapping m's keys.
func (s *source) keyIndent(m *yaml.Node) string {
	if len(m.Content) == 0 {
		return ""
	}
	return strings.Repeat(" ", m.Content[0].Column-1)
}

func (s *source) insert(after int, text ...string) {
	s.edits = append(s.edits, insertion{after: after, text: text, seq: len(s.edits)})
}

// replaceScalar replaces the text of a plain scalar node with value.
func (s *source) replaceScalar(n *yaml.Node, value string) error {
	line := s.fileLine(n)
	text := s.lines[line-1]
	col := n.Column - 1
	if n.Kind != yaml.ScalarNode || n.Style != 0 || col < 0 || col+len(n.Value) > len(text) || text[col:col+len(n.Value)] != n.Value {
		return fmt.Errorf("%s:%d: cannot edit %q in place", s.path, line, n.Value)
	}
	if s.replaced == nil {
		s.replaced = map[int]string{}
	}
	s.replaced[line] = text[:col] + value + text[col+len(n.Value):]
	return nil
}

// changed reports whether the file has edits.
func (s *source) changed() bool { return len(s.edits) > 0 || len(s.replaced) > 0 }

// render returns the file with its insertions.
func (s *source) render() []byte {
	edits := append([]insertion(nil), s.edits...)
	slices.SortStableFunc(edits, func(a, b insertion) int {
		// At one line, the deeper list's item first: a rule of the last
		// endpoint goes before a new endpoint appended after it.
		return cmp.Or(cmp.Compare(a.after, b.after), cmp.Compare(indentOf(b.text), indentOf(a.text)), cmp.Compare(a.seq, b.seq))
	})
	var out []string
	k := 0
	for i, l := range s.lines {
		if r, ok := s.replaced[i+1]; ok {
			l = r
		}
		out = append(out, l)
		for k < len(edits) && edits[k].after == i+1 {
			out = append(out, edits[k].text...)
			k++
		}
	}
	nl := "\n"
	if s.crlf {
		nl = "\r\n"
	}
	return []byte(strings.Join(out, nl))
}

// scalar renders s as a YAML scalar for a block item or value.
func scalar(s string) string {
	out, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// overlay is a project file system with some files replaced: the patched
// project suggest recompiles. Links are reported as the base reports them.
type overlay struct {
	base  fs.FS
	files map[string][]byte
}

func (o overlay) Open(name string) (fs.File, error) {
	if b, ok := o.files[name]; ok {
		return &memFile{name: name, r: bytes.NewReader(b), size: int64(len(b))}, nil
	}
	return o.base.Open(name)
}

func (o overlay) ReadFile(name string) ([]byte, error) {
	if b, ok := o.files[name]; ok {
		return append([]byte(nil), b...), nil
	}
	return fs.ReadFile(o.base, name)
}

func (o overlay) Stat(name string) (fs.FileInfo, error) {
	if b, ok := o.files[name]; ok {
		return memInfo{name: name, size: int64(len(b))}, nil
	}
	return fs.Stat(o.base, name)
}

func (o overlay) Lstat(name string) (fs.FileInfo, error) {
	if b, ok := o.files[name]; ok {
		return memInfo{name: name, size: int64(len(b))}, nil
	}
	return fs.Lstat(o.base, name)
}

func (o overlay) ReadLink(name string) (string, error) { return fs.ReadLink(o.base, name) }

func (o overlay) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(o.base, name) }

type memFile struct {
	name string
	r    *bytes.Reader
	size int64
}

func (f *memFile) Stat() (fs.FileInfo, error) { return memInfo{name: f.name, size: f.size}, nil }
func (f *memFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *memFile) Close() error               { return nil }

var _ io.Reader = (*memFile)(nil)

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string {
	if j := strings.LastIndexByte(i.name, '/'); j >= 0 {
		return i.name[j+1:]
	}
	return i.name
}
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

func indentOf(text []string) int {
	if len(text) == 0 {
		return 0
	}
	return len(text[0]) - len(strings.TrimLeft(text[0], " "))
}
