package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/policycue"
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
	Schema string                                   `json:"schema"`
	Agents map[string]map[string][]policycue.Source `json:"agents"`
}

// NewProvenanceFile collects Provenance() of each agent's policy.
func NewProvenanceFile(policies map[string]*policycue.Policy) *ProvenanceFile {
	pf := &ProvenanceFile{Schema: ProvenanceSchema, Agents: map[string]map[string][]policycue.Source{}}
	for name, p := range policies {
		pf.Agents[name] = p.Provenance()
	}
	return pf
}

// Encode renders the sidecar deterministically (sorted keys, two-space indent).
func (pf *ProvenanceFile) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(pf); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", ProvenanceFileName, err)
	}
	return buf.Bytes(), nil
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
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var pf ProvenanceFile
	if err := dec.Decode(&pf); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", ProvenanceFileName, err)
	}
	if pf.Schema != ProvenanceSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q", ProvenanceFileName, pf.Schema, ProvenanceSchema)
	}
	return &pf, nil
}

// ReadPolicy reads and strictly decodes one policy file.
func ReadPolicy(fsys fs.FS, name string) (*policycue.Policy, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("reading policy: %w", err)
	}
	p, err := policycue.Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// AgentEntry is what lint needs from one manifest entry (compile.ManifestAgent).
type AgentEntry struct {
	Name         string
	Policy       string // file name in the policies directory
	Tier         string
	Spawns       []string
	Skills       []string
	Placeholders []string
}

// ProjectInputs reads every agent's policy from a compiled policies
// directory and builds its context: tier, spawns, declared placeholders,
// provenance from provenance.json, and all agents (with whether their
// policies write) for privilege-lifting checks. dir prefixes file names in
// findings.
func ProjectInputs(policies fs.FS, dir string, agents []AgentEntry) ([]Input, error) {
	prov, err := ReadProvenance(policies)
	if err != nil {
		return nil, err
	}
	sort.Slice(agents, func(i, j int) bool { return agents[i].Name < agents[j].Name })
	all := map[string]AgentInfo{}
	inputs := make([]Input, 0, len(agents))
	for _, a := range agents {
		if a.Policy != path.Base(a.Policy) {
			return nil, fmt.Errorf("agent %s: policy %q is outside the policies directory", a.Name, a.Policy)
		}
		p, err := ReadPolicy(policies, a.Policy)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", a.Name, err)
		}
		all[a.Name] = AgentInfo{Tier: a.Tier, Spawns: a.Spawns, Writes: Writes(p)}
		placeholders := a.Placeholders
		if placeholders == nil {
			placeholders = []string{}
		}
		in := Input{Name: a.Name, File: path.Join(dir, a.Policy), Policy: p, Context: Context{
			Agent: a.Name, Tier: a.Tier, Spawns: a.Spawns, Skills: a.Skills, Placeholders: placeholders,
		}}
		if prov != nil {
			in.Context.Provenance = prov.Agents[a.Name]
		}
		inputs = append(inputs, in)
	}
	for i := range inputs {
		inputs[i].Context.Agents = all
	}
	return inputs, nil
}

// WriteContextFiles writes each input's context as a conftest/opa data file,
// DIR/<agent>.context.json ({"fullsend": {"context": ...}}), so the same
// rules see the same context under `conftest test --data` and
// `opa eval --data`. Files are written atomically (temp file and rename).
func WriteContextFiles(dir string, inputs []Input) ([]string, error) {
	var written []string
	for _, in := range inputs {
		name := in.Name
		if name == "" {
			name = strings.TrimSuffix(path.Base(filepath.ToSlash(in.File)), path.Ext(in.File))
		}
		if name == "" || name != path.Base(name) || strings.HasPrefix(name, ".") {
			return written, fmt.Errorf("cannot name a context file for %q", in.label())
		}
		data, err := json.MarshalIndent(in.Context.DataDocument(), "", "  ")
		if err != nil {
			return written, fmt.Errorf("encoding context of %s: %w", name, err)
		}
		dst := filepath.Join(dir, name+".context.json")
		tmp, err := os.CreateTemp(dir, "."+name+".context.*.tmp")
		if err != nil {
			return written, fmt.Errorf("writing %s: %w", dst, err)
		}
		_, werr := tmp.Write(append(data, '\n'))
		cerr := tmp.Close()
		if werr != nil || cerr != nil {
			os.Remove(tmp.Name())
			return written, fmt.Errorf("writing %s: %w", dst, errors.Join(werr, cerr))
		}
		if err := os.Rename(tmp.Name(), dst); err != nil {
			os.Remove(tmp.Name())
			return written, fmt.Errorf("writing %s: %w", dst, err)
		}
		written = append(written, dst)
	}
	return written, nil
}
