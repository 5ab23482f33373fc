package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
)

// ProvenanceFileName is the sidecar the compiler writes next to manifest.json.
const ProvenanceFileName = "provenance.json"

// ProvenanceSchema identifies the provenance sidecar format.
const ProvenanceSchema = "https://fullsend.dev/schemas/policy-provenance/v1"

// ProvenanceFile is policies/provenance.json: for every agent, the sources of
// every element of its policy, keyed by policy path as Policy.Provenance()
// returns them. It lets `fullsend policy lint` point findings at the agent
// or skill line without recompiling.
type ProvenanceFile struct {
	Schema string                         `json:"schema"`
	Agents map[string]map[string][]Source `json:"agents"`
}

// Encode renders the sidecar deterministically (sorted keys, two-space indent).
func (pf *ProvenanceFile) Encode() ([]byte, error) {
	data, err := encodeIndented(pf)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", ProvenanceFileName, err)
	}
	return data, nil
}

// Equal reports whether pf and other hold the same schema and the same
// sources for every agent and path, in the same order. A nil and an empty
// map or list are equal: they mean the same to every reader. Two nil files
// are equal; a nil file equals no other.
func (pf *ProvenanceFile) Equal(other *ProvenanceFile) bool {
	if pf == nil || other == nil {
		return pf == other
	}
	return pf.Schema == other.Schema && maps.EqualFunc(pf.Agents, other.Agents, func(a, b map[string][]Source) bool {
		return maps.EqualFunc(a, b, slices.Equal)
	})
}

// ReadProvenance reads provenance.json from a policies directory; a missing
// file yields nil and no error.
func ReadProvenance(policies fs.FS) (*ProvenanceFile, error) {
	data, err := fs.ReadFile(policies, ProvenanceFileName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ProvenanceFileName, err)
	}
	return DecodeProvenance(data)
}

// DecodeProvenance decodes provenance.json's bytes strictly: unknown fields,
// trailing content and another schema are errors.
func DecodeProvenance(data []byte) (*ProvenanceFile, error) {
	var pf ProvenanceFile
	if err := decodeStrict(data, &pf); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", ProvenanceFileName, err)
	}
	if pf.Schema != ProvenanceSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q", ProvenanceFileName, pf.Schema, ProvenanceSchema)
	}
	return &pf, nil
}

// Source is the provenance of one emitted element: the file and position the
// author wrote, and why it produced the element (a tool rule, a sandbox
// declaration, a profile, a runtime baseline).
type Source struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Reason string `json:"reason"`
}

// String renders the source as file:line:column (reason).
func (s Source) String() string {
	pos := s.File
	if s.Line > 0 {
		pos = fmt.Sprintf("%s:%d", pos, s.Line)
		if s.Column > 0 {
			pos = fmt.Sprintf("%s:%d", pos, s.Column)
		}
	}
	if s.Reason == "" {
		return pos
	}
	return pos + " (" + s.Reason + ")"
}

// LookupSources returns the sources recorded for a policy path, walking up to
// the nearest ancestor that has provenance (a host field inherits its
// endpoint's sources).
func LookupSources(prov map[string][]Source, path string) []Source {
	for p := path; p != ""; {
		if s, ok := prov[p]; ok {
			return s
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return nil
}
