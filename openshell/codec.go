package openshell

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/fullsend-ai/agent-sandbox/internal/yamlblock"
	"gopkg.in/yaml.v3"
)

// MaxPolicyBytes is OpenShell's limit on one serialized policy (256 KiB).
const MaxPolicyBytes = 256 << 10

// Marshal encodes p as the YAML document OpenShell loads. The output is
// byte-for-byte deterministic: struct fields in schema order, map keys sorted,
// two-space indentation, a header comment naming the generator when given.
func Marshal(p *Policy, header string) ([]byte, error) {
	var buf bytes.Buffer
	if header != "" {
		for _, line := range bytes.Split([]byte(header), []byte("\n")) {
			buf.WriteString("# ")
			buf.Write(line)
			buf.WriteByte('\n')
		}
	}
	// The block encoder writes what yaml.v3 would for every policy the
	// compiler emits, without yaml.v3's per-document event buffer; a policy
	// outside its subset goes to yaml.v3.
	mark := buf.Len()
	if err := yamlblock.Encode(&buf, p); err == nil {
		return buf.Bytes(), nil
	}
	buf.Truncate(mark)
	if err := encodeYAMLv3(&buf, p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeYAMLv3 appends p's document as yaml.v3 writes it.
func encodeYAMLv3(buf *bytes.Buffer, p *Policy) error {
	enc := yaml.NewEncoder(buf)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("encoding policy: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("encoding policy: %w", err)
	}
	return nil
}

// Unmarshal decodes one policy document strictly: unknown fields are errors,
// as they are for OpenShell's serde structs, and so is trailing content.
func Unmarshal(data []byte) (*Policy, error) {
	if len(data) > MaxPolicyBytes {
		return nil, fmt.Errorf("policy is %d bytes, over OpenShell's limit of %d", len(data), MaxPolicyBytes)
	}
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
