package bundle

import "testing"

func TestProvenanceFileEqual(t *testing.T) {
	src := func(file string, line int) Source { return Source{File: file, Line: line, Reason: "tool"} }
	base := func() *ProvenanceFile {
		return &ProvenanceFile{Schema: ProvenanceSchema, Agents: map[string]map[string][]Source{
			"triage": {"network_policies.gh": {src("agents/triage.md", 3), src("skills/gh/SKILL.md", 4)}},
		}}
	}
	tests := []struct {
		name  string
		edit  func(*ProvenanceFile) *ProvenanceFile
		equal bool
	}{
		{"same", func(p *ProvenanceFile) *ProvenanceFile { return p }, true},
		{"other schema", func(p *ProvenanceFile) *ProvenanceFile { p.Schema += "x"; return p }, false},
		{"other line", func(p *ProvenanceFile) *ProvenanceFile {
			p.Agents["triage"]["network_policies.gh"][1].Line = 5
			return p
		}, false},
		{"sources reordered", func(p *ProvenanceFile) *ProvenanceFile {
			s := p.Agents["triage"]["network_policies.gh"]
			s[0], s[1] = s[1], s[0]
			return p
		}, false},
		{"a source dropped", func(p *ProvenanceFile) *ProvenanceFile {
			p.Agents["triage"]["network_policies.gh"] = p.Agents["triage"]["network_policies.gh"][:1]
			return p
		}, false},
		{"an extra path", func(p *ProvenanceFile) *ProvenanceFile {
			p.Agents["triage"]["network_policies.x"] = nil
			return p
		}, false},
		{"an extra agent", func(p *ProvenanceFile) *ProvenanceFile {
			p.Agents["review"] = map[string][]Source{}
			return p
		}, false},
		{"nil", func(*ProvenanceFile) *ProvenanceFile { return nil }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := base(), tt.edit(base())
			if got := a.Equal(b); got != tt.equal {
				t.Errorf("a.Equal(b) = %v, want %v", got, tt.equal)
			}
			if got := b.Equal(a); got != tt.equal {
				t.Errorf("b.Equal(a) = %v, want %v", got, tt.equal)
			}
		})
	}
	var none *ProvenanceFile
	if !none.Equal(nil) {
		t.Error("two nil files must be equal")
	}
}
