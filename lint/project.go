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

// ProjectInputs builds one input per agent of an opened bundle, from the
// policy bytes bundle.Open verified (never a second read of the files, so
// what is linted is what was checked against the manifest), with its context
// from the manifest: tier, spawns, declared placeholders, provenance from
// provenance.json in policies, and all agents (with whether their policies
// write) for privilege-lifting checks. dir prefixes file names in findings.
func ProjectInputs(policies fs.FS, dir string, b *bundle.Bundle) ([]Input, error) {
	m := b.Manifest
	prov, err := bundle.ReadProvenance(policies)
	if err != nil {
		return nil, err
	}
	all := map[string]AgentInfo{}
	names := m.AgentNames()
	// Decode the policies concurrently; errors are reported in name order.
	decoded := make([]*openshell.Policy, len(names))
	decodeErrs := make([]error, len(names))
	forEach(len(names), func(i int) {
		if data, ok := b.Policies[names[i]]; ok {
			decoded[i], decodeErrs[i] = openshell.Unmarshal(data)
			decodeErrs[i] = openshell.DecodeError(decodeErrs[i])
		}
	})
	inputs := make([]Input, 0, len(m.Agents))
	for i, name := range names {
		a := m.Agents[name]
		if a.Policy != path.Base(a.Policy) {
			return nil, fmt.Errorf("agent %s: policy %q is outside the policies directory", name, a.Policy)
		}
		if _, ok := b.Policies[name]; !ok {
			return nil, fmt.Errorf("agent %s: policy %s was not verified against the manifest", name, a.Policy)
		}
		p, err := decoded[i], decodeErrs[i]
		if err != nil {
			return nil, fmt.Errorf("agent %s: %s: %w", name, a.Policy, err)
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

// WriteContextFiles writes each input's context and facts (Facts) as a
// conftest/opa data file, DIR/<agent>.context.json ({"fullsend":
// {"context": ..., "facts": ...}}), so the same rules see the same context
// and facts under `conftest test --data` and `opa eval --data`. Files are written atomically (temp file and rename),
// into dir, created when missing.
func WriteContextFiles(dir string, inputs []Input) ([]string, error) {
	var written []string
	// The directory is created when missing, as `--write-context ctx/`
	// promises in its example.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	for _, in := range inputs {
		name := in.Name
		if name == "" {
			name = strings.TrimSuffix(path.Base(filepath.ToSlash(in.File)), path.Ext(in.File))
		}
		if name == "" || name != path.Base(name) || strings.HasPrefix(name, ".") {
			return written, fmt.Errorf("cannot name a context file for %q", in.label())
		}
		doc := in.Context.DataDocument()
		if in.Policy != nil {
			// The facts the engine computes, so conftest and opa see them too.
			doc["fullsend"].(map[string]any)["facts"] = Facts(in.Policy)
		}
		data, err := json.MarshalIndent(doc, "", "  ")
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
