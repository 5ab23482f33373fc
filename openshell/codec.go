package openshell

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MaxPolicyBytes is OpenShell's limit on one serialized policy (256 KiB).
const MaxPolicyBytes = 256 << 10

// Marshal encodes p as the YAML document OpenShell loads, with yaml.v3
// (two-space indentation). The output is byte-for-byte deterministic: struct
// fields in schema order, map keys sorted, a header comment naming the
// generator when given. Each line of header becomes one "# " comment line;
// a header holding a character YAML reads as a line break, or any other
// control or format character, is refused (ErrHeaderText), so a header can
// never end its comment and start document content.
func Marshal(p *Policy, header string) ([]byte, error) {
	var buf bytes.Buffer
	if header != "" {
		if err := checkHeader(header); err != nil {
			return nil, err
		}
		for line := range strings.SplitSeq(header, "\n") {
			buf.WriteString("# ")
			buf.WriteString(line)
			buf.WriteByte('\n')
		}
	}
	mark := buf.Len()
	if err := encodeYAML(&buf, p); err != nil {
		return nil, err
	}
	// yaml.v3 (v3.0.1) writes a string "<<" plain, which a YAML reader takes
	// for the merge key, so a query or config key "<<" would not decode as
	// itself; and it writes a string that is not UTF-8 as !!binary base64,
	// which OpenShell's string fields refuse. Both are rare: only then is
	// the document encoded again through a node tree, which quotes the
	// former and refuses the latter.
	if body := buf.Bytes()[mark:]; bytes.Contains(body, []byte("<<")) || bytes.Contains(body, []byte("!!binary")) {
		var n yaml.Node
		if err := n.Encode(p); err != nil {
			return nil, fmt.Errorf("encoding policy: %w", err)
		}
		if err := fixScalars(&n); err != nil {
			return nil, err
		}
		buf.Truncate(mark)
		if err := encodeYAML(&buf, &n); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// ErrNotUTF8 reports a policy string that is not valid UTF-8: OpenShell's
// fields are Rust strings, and YAML could carry it only as !!binary.
var ErrNotUTF8 = errors.New("policy holds a string that is not valid UTF-8")

// fixScalars double-quotes every plain scalar "<<" in the tree and refuses
// a !!binary one (a Go string that is not UTF-8).
func fixScalars(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		switch {
		case n.Tag == "!!binary":
			return fmt.Errorf("%w (line %d)", ErrNotUTF8, n.Line)
		case n.Value == "<<" && n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) == 0:
			n.Style, n.Tag = yaml.DoubleQuotedStyle, "!!str"
		}
	}
	for _, c := range n.Content {
		if err := fixScalars(c); err != nil {
			return err
		}
	}
	return nil
}

// encodeYAML appends v's document with two-space indentation.
func encodeYAML(buf *bytes.Buffer, v any) error {
	enc := yaml.NewEncoder(buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding policy: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("encoding policy: %w", err)
	}
	return nil
}

// ErrHeaderText reports a policy header holding a character that is not
// printable text: YAML's line breaks other than \n (\r, U+0085, U+2028,
// U+2029) would end the comment and let the rest of the header become part
// of the document.
var ErrHeaderText = errors.New("policy header holds a character that is not printable text")

// checkHeader refuses a header with invalid UTF-8 or a rune other than \n
// that is not graphic (strconv.IsGraphic: letters, marks, numbers,
// punctuation, symbols and spaces of category Zs; not controls, format
// characters or line and paragraph separators).
func checkHeader(header string) error {
	if !utf8.ValidString(header) {
		return fmt.Errorf("%w: invalid UTF-8", ErrHeaderText)
	}
	for i, r := range header {
		if r != '\n' && !strconv.IsGraphic(r) {
			return fmt.Errorf("%w: %U at byte %d", ErrHeaderText, r, i)
		}
	}
	return nil
}

// Unmarshal decodes one policy document strictly: unknown fields are errors,
// as they are for OpenShell's serde structs, and so is trailing content.
func Unmarshal(data []byte) (*Policy, error) {
	if len(data) > MaxPolicyBytes {
		return nil, fmt.Errorf("policy is %d bytes, over OpenShell's limit of %d", len(data), MaxPolicyBytes)
	}
	p, err := decodeStrict(data)
	if err != nil && strings.Contains(err.Error(), "already defined") {
		// A repeated key: OpenShell keeps the last entry of a map field
		// and refuses a repeated struct field. Decode what it loads.
		if deduped, ok := lastEntriesWin(data); ok {
			p, err = decodeStrict(deduped)
		}
	}
	return p, err
}

// decodeStrict decodes one policy document, refusing unknown fields and a
// second document.
func decodeStrict(data []byte) (*Policy, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Policy
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("policy is empty")
		}
		return nil, fmt.Errorf("decoding policy: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("policy file holds more than one YAML document")
	}
	return &p, nil
}

// lastEntriesWin re-encodes data with every repeated key of a map field
// dropped but its last entry, as OpenShell loads such a file: serde_yml
// hands every pair to serde and a BTreeMap field inserts a repeat again,
// the last one winning; a repeated struct field, or a repeat inside a
// free-form value (a middleware's config), stays and is refused (the
// citations are at validate/shape.go's duplicate-key comment, where
// `policy validate` reports the dropped entries as traps). ok is false when
// data does not parse.
func lastEntriesWin(data []byte) ([]byte, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, false
	}
	dropRepeats(&doc, structOrValue)
	out, err := yaml.Marshal(&doc)
	return out, err == nil
}

// mapKind says what a mapping node is to serde.
type mapKind int

const (
	// structOrValue: a struct or a free-form value; repeats are refused.
	structOrValue mapKind = iota
	// namedStructs: a BTreeMap of structs (network_policies,
	// network_middlewares, graphql_persisted_queries).
	namedStructs
	// matchers: a BTreeMap of matchers (query, params), whose params
	// values may be nested matcher maps.
	matchers
)

// fieldMapKind says what a field's value is (lib.rs:66, 68, 163, 328, 338,
// 356 @ v0.0.111): the map fields, or structOrValue.
func fieldMapKind(key string) mapKind {
	switch key {
	case "network_policies", "network_middlewares", "graphql_persisted_queries":
		return namedStructs
	case "query", "params":
		return matchers
	}
	return structOrValue
}

// dropRepeats keeps only the last entry of each repeated key of a map
// node (kind namedStructs or matchers) and walks on. A middleware's config
// is a serde_yml Value, whose own mapping refuses repeats: it is not walked.
func dropRepeats(n *yaml.Node, kind mapKind) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			dropRepeats(c, structOrValue)
		}
		return
	case yaml.MappingNode:
	default:
		return
	}
	isAny := len(n.Content) == 2 && n.Content[0].Value == "any"
	if kind != structOrValue && !isAny {
		last := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			last[n.Content[i].Value] = i
		}
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			if last[n.Content[i].Value] == i {
				kept = append(kept, n.Content[i], n.Content[i+1])
			}
		}
		n.Content = kept
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		switch {
		case kind == matchers && !isAny:
			dropRepeats(val, matchers) // a nested params object
		case kind == namedStructs:
			dropRepeats(val, structOrValue)
		case key == "config":
			// a serde_yml Value: left as written
		default:
			dropRepeats(val, fieldMapKind(key))
		}
	}
}

// UnmarshalYAML implements yaml.Unmarshaler: a scalar glob or {any: [globs]}.
func (q *QueryMatch) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		q.Glob = n.Value
		return nil
	case yaml.MappingNode:
		var m struct {
			Any []string `yaml:"any"`
		}
		// Decode through a strict decoder so keys other than any are rejected.
		raw, err := yaml.Marshal(n)
		if err != nil {
			return err
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		dec.KnownFields(true)
		if err := dec.Decode(&m); err != nil {
			return fmt.Errorf("line %d: query matcher: %w", n.Line, err)
		}
		if len(m.Any) == 0 {
			return fmt.Errorf("line %d: query matcher {any: [...]} needs at least one glob", n.Line)
		}
		q.Any = m.Any
		return nil
	default:
		return fmt.Errorf("line %d: query matcher must be a glob string or {any: [globs]}", n.Line)
	}
}

// UnmarshalYAML implements yaml.Unmarshaler with serde's untagged order for
// ParamMatcherDef (crates/openshell-policy/src/lib.rs:350-356 @ v0.0.111): a
// scalar or an {any: [...]} mapping is a matcher, any other mapping a nested
// object of parameter matchers.
func (m *ParamMatch) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode && !isAnyMatcher(n) {
		var obj map[string]ParamMatch
		if err := n.Decode(&obj); err != nil {
			return err
		}
		m.Object = obj
		return nil
	}
	var q QueryMatch
	if err := q.UnmarshalYAML(n); err != nil {
		return err
	}
	m.Matcher = &q
	return nil
}

// isAnyMatcher reports whether a mapping is the {any: [...]} matcher form:
// QueryAnyDef is deny_unknown_fields, so only a mapping whose one key is any.
func isAnyMatcher(n *yaml.Node) bool {
	return len(n.Content) == 2 && n.Content[0].Value == "any"
}

// MarshalJSON encodes a ParamMatch the way it is written in YAML.
func (m ParamMatch) MarshalJSON() ([]byte, error) {
	if m.Matcher != nil {
		return json.Marshal(m.Matcher)
	}
	return json.Marshal(m.Object)
}

// MarshalYAML implements yaml.Marshaler: a binary is written as its path
// alone, as OpenShell serializes it (harness is skip_serializing,
// crates/openshell-policy/src/lib.rs:394 @ v0.0.111).
func (b Binary) MarshalYAML() (any, error) {
	return struct {
		Path string `yaml:"path"`
	}{b.Path}, nil
}
