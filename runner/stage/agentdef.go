package stage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// claudeAgentFields are the subagent fields `claude --agents` takes (the
// frontmatter fields of a file-based subagent; the Markdown body becomes
// "prompt"). Other frontmatter keys (name, fullsend's own) are left out.
var claudeAgentFields = map[string]bool{
	"description": true, "tools": true, "disallowedTools": true, "model": true, "permissionMode": true,
	"mcpServers": true, "hooks": true, "maxTurns": true, "skills": true, "initialPrompt": true,
	"memory": true, "effort": true, "background": true, "isolation": true, "color": true,
}

// claudeListFields may be written as a comma-separated string in
// frontmatter; --agents wants a JSON array.
var claudeListFields = map[string]bool{"tools": true, "disallowedTools": true, "skills": true}

// ClaudeAgentsJSON turns the verified definition of a Claude Code agent
// (YAML frontmatter and a Markdown body) into the JSON object of `claude
// --agents`: {"NAME": {fields..., "prompt": BODY}}. Claude Code ranks
// --agents above the project's .claude/agents/ and the user's
// ~/.claude/agents/ (only managed settings rank higher), so the verified
// definition wins whatever the workspace holds. Key order is kept.
func ClaudeAgentsJSON(name string, def []byte) ([]byte, error) {
	front, body, err := splitFrontmatter(def)
	if err != nil {
		return nil, err
	}
	m, err := frontmatterMapping(name, front)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	key, _ := json.Marshal(name)
	b.WriteString("{" + string(key) + ":{")
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		if !claudeAgentFields[k] {
			continue
		}
		if err := claudeFieldJSON(&b, k, v); err != nil {
			return nil, fmt.Errorf("agent %s: frontmatter %s: %w", name, k, err)
		}
	}
	pb, _ := json.Marshal(string(body))
	b.WriteString(`"prompt":` + string(pb) + "}}")
	return b.Bytes(), nil
}

// frontmatterMapping parses the frontmatter of agent name, which must be
// a YAML mapping.
func frontmatterMapping(name string, front []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		return nil, fmt.Errorf("agent %s: frontmatter: %w", name, err)
	}
	m := &doc
	if m.Kind == yaml.DocumentNode && len(m.Content) == 1 {
		m = m.Content[0]
	}
	if m.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("agent %s: frontmatter is not a mapping", name)
	}
	return m, nil
}

// claudeFieldJSON writes `"k":v,` for a subagent field, a list field
// written as a comma-separated string made an array.
func claudeFieldJSON(b *bytes.Buffer, k string, v *yaml.Node) error {
	kb, _ := json.Marshal(k)
	b.Write(kb)
	b.WriteByte(':')
	if claudeListFields[k] && v.Kind == yaml.ScalarNode {
		lb, _ := json.Marshal(splitTopLevel(v.Value))
		b.Write(lb)
	} else if err := nodeJSON(b, v, 0); err != nil {
		return err
	}
	b.WriteByte(',')
	return nil
}

// splitFrontmatter splits "---\nYAML\n---\nBODY".
func splitFrontmatter(def []byte) (front, body []byte, err error) {
	s := strings.ReplaceAll(string(def), "\r\n", "\n")
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return nil, nil, errors.New("agent definition has no frontmatter")
	}
	if strings.HasPrefix(rest, "---\n") || rest == "---" {
		return nil, []byte(strings.TrimPrefix(strings.TrimPrefix(rest, "---"), "\n")), nil
	}
	i := strings.Index(rest, "\n---\n")
	if i < 0 {
		if !strings.HasSuffix(rest, "\n---") {
			return nil, nil, errors.New("agent definition: frontmatter is not closed")
		}
		return []byte(strings.TrimSuffix(rest, "\n---")), nil, nil
	}
	return []byte(rest[:i+1]), []byte(rest[i+len("\n---\n"):]), nil
}

// splitTopLevel splits "Bash(gh,curl), Read" at the commas outside
// parentheses.
func splitTopLevel(s string) []string {
	out := []string{}
	depth, start := 0, 0
	add := func(p string) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth = max(0, depth-1)
		case ',':
			if depth == 0 {
				add(s[start:i])
				start = i + 1
			}
		}
	}
	add(s[start:])
	return out
}

// nodeJSON writes a YAML node as JSON, mappings in their key order.
func nodeJSON(b *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > 64 {
		return errors.New("nested too deep")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return errors.New("empty document")
		}
		return nodeJSON(b, n.Content[0], depth+1)
	case yaml.AliasNode:
		return nodeJSON(b, n.Alias, depth+1)
	case yaml.MappingNode:
		return mappingJSON(b, n, depth)
	case yaml.SequenceNode:
		return sequenceJSON(b, n, depth)
	}
	return scalarJSON(b, n)
}

// mappingJSON writes a mapping node as a JSON object, in its key order.
func mappingJSON(b *bytes.Buffer, n *yaml.Node, depth int) error {
	b.WriteByte('{')
	for i := 0; i+1 < len(n.Content); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(n.Content[i].Value)
		b.Write(kb)
		b.WriteByte(':')
		if err := nodeJSON(b, n.Content[i+1], depth+1); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// sequenceJSON writes a sequence node as a JSON array.
func sequenceJSON(b *bytes.Buffer, n *yaml.Node, depth int) error {
	b.WriteByte('[')
	for i, c := range n.Content {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := nodeJSON(b, c, depth+1); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// scalarJSON writes a scalar node as the JSON of its decoded value.
func scalarJSON(b *bytes.Buffer, n *yaml.Node) error {
	var v any
	if err := n.Decode(&v); err != nil {
		return err
	}
	vb, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(vb)
	return nil
}

// OpenCodePermission mirrors, in the OPENCODE_PERMISSION map the manifest
// sets for the agent's tier, the command allowances of the verified
// OpenCode definition, as Claude Code's --allowedTools carries the agent's
// own Bash(...) rules: where the tier's map says `"bash": "deny"` and the
// agent's permission.bash is a pattern map ({"*": deny, "gh pr view *":
// allow}), the pattern map is used, behind a leading "*": deny. The
// compiler gave the agent a tier that holds every command it allows, so
// the mirror never exceeds the tier; the sandbox policy stays the
// boundary. Anything else is returned unchanged.
func OpenCodePermission(tierMap string, def []byte) (string, error) {
	m := jsonObject(tierMap)
	bash := mappingValue(m, "bash")
	if bash == nil || bash.Kind != yaml.ScalarNode || bash.Value != "deny" {
		return tierMap, nil
	}
	own, err := agentBashPatterns(def)
	if err != nil {
		return "", err
	}
	if own == nil {
		return tierMap, nil
	}
	*bash = *bashMirror(own)
	var b bytes.Buffer
	if err := nodeJSON(&b, m, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

// jsonObject parses s as a JSON (YAML) object, or returns nil: what is not
// one is left to OpenCode to judge.
func jsonObject(s string) *yaml.Node {
	var env yaml.Node
	if err := yaml.Unmarshal([]byte(s), &env); err != nil || len(env.Content) != 1 || env.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	return env.Content[0]
}

// agentBashPatterns returns the permission.bash pattern map of an OpenCode
// definition, or nil if it has none.
func agentBashPatterns(def []byte) (*yaml.Node, error) {
	front, _, err := splitFrontmatter(def)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil || len(doc.Content) != 1 {
		return nil, nil
	}
	own := mappingValue(mappingValue(doc.Content[0], "permission"), "bash")
	if own == nil || own.Kind != yaml.MappingNode {
		return nil, nil
	}
	return own, nil
}

// openCodeActions are the values a permission pattern may take.
var openCodeActions = map[string]bool{"allow": true, "deny": true, "ask": true}

// bashMirror returns the agent's bash patterns behind a leading "*": deny,
// leaving out its own "*" and any pattern whose value is not an action.
func bashMirror(own *yaml.Node) *yaml.Node {
	mirror := &yaml.Node{Kind: yaml.MappingNode}
	mirror.Content = append(mirror.Content, scalar("*"), scalar("deny"))
	for i := 0; i+1 < len(own.Content); i += 2 {
		k, v := own.Content[i], own.Content[i+1]
		if k.Value != "*" && v.Kind == yaml.ScalarNode && openCodeActions[v.Value] {
			mirror.Content = append(mirror.Content, scalar(k.Value), scalar(v.Value))
		}
	}
	return mirror
}

// mappingValue returns the value of key in a mapping node, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
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

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
