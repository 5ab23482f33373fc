package lint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// ReadPolicy reads and strictly decodes one policy file.
func ReadPolicy(fsys fs.FS, name string) (*openshell.Policy, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("reading policy: %w", err)
	}
	p, err := openshell.Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// ProjectInputs reads every agent's policy of a compiled policies directory
// and builds its context from the manifest: tier, spawns, declared
// placeholders, provenance from provenance.json, and all agents (with
// whether their policies write) for privilege-lifting checks. dir prefixes
// file names in findings. It does not check the policies against the
// manifest's digests: callers open the bundle with bundle.Open first.
func ProjectInputs(policies fs.FS, dir string, m *bundle.Manifest) ([]Input, error) {
	prov, err := bundle.ReadProvenance(policies)
	if err != nil {
		return nil, err
	}
	all := map[string]AgentInfo{}
	inputs := make([]Input, 0, len(m.Agents))
	for _, name := range m.AgentNames() {
		a := m.Agents[name]
		if a.Policy != path.Base(a.Policy) {
			return nil, fmt.Errorf("agent %s: policy %q is outside the policies directory", name, a.Policy)
		}
		p, err := ReadPolicy(policies, a.Policy)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", name, err)
		}
		all[name] = AgentInfo{Tier: a.Tier, Spawns: a.Spawns, Writes: Writes(p)}
		placeholders := a.Placeholders
		if placeholders == nil {
			placeholders = []string{}
		}
		in := Input{Name: name, File: path.Join(dir, a.Policy), Policy: p, Context: Context{
			Agent: name, Tier: a.Tier, Spawns: a.Spawns, Skills: a.Skills, Placeholders: placeholders,
		}}
		if prov != nil {
			in.Context.Provenance = prov.Agents[name]
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
