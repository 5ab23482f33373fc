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
	decoded, decodeErrs := decodePolicies(b, names)
	inputs := make([]Input, 0, len(m.Agents))
	for i, name := range names {
		a := m.Agents[name]
		if err := checkAgentPolicy(b, name, a, decodeErrs[i]); err != nil {
			return nil, err
		}
		all[name] = AgentInfo{Tier: a.Tier, Spawns: a.Spawns, Writes: Writes(decoded[i])}
		inputs = append(inputs, projectInput(dir, name, a, decoded[i], prov))
	}
	for i := range inputs {
		inputs[i].Context.Agents = all
	}
	return inputs, nil
}

// decodePolicies decodes the verified policies of the named agents
// concurrently, each with its error (the caller reports them in name
// order).
func decodePolicies(b *bundle.Bundle, names []string) ([]*openshell.Policy, []error) {
	decoded := make([]*openshell.Policy, len(names))
	errs := make([]error, len(names))
	forEach(len(names), func(i int) {
		if data, ok := b.Policies[names[i]]; ok {
			decoded[i], errs[i] = openshell.Unmarshal(data)
			errs[i] = openshell.DecodeError(errs[i])
		}
	})
	return decoded, errs
}

// checkAgentPolicy refuses an agent whose policy file lies outside the
// policies directory, was not verified against the manifest, or did not
// decode (decodeErr).
func checkAgentPolicy(b *bundle.Bundle, name string, a bundle.ManifestAgent, decodeErr error) error {
	if a.Policy != path.Base(a.Policy) {
		return fmt.Errorf("agent %s: policy %q is outside the policies directory", name, a.Policy)
	}
	if _, ok := b.Policies[name]; !ok {
		return fmt.Errorf("agent %s: policy %s was not verified against the manifest", name, a.Policy)
	}
	if decodeErr != nil {
		return fmt.Errorf("agent %s: %s: %w", name, a.Policy, decodeErr)
	}
	return nil
}

// projectInput is the input of agent name, with its context from the
// manifest entry a and the provenance file (nil when absent); an agent
// that declares no placeholders allows none.
func projectInput(dir, name string, a bundle.ManifestAgent, p *openshell.Policy, prov *bundle.ProvenanceFile) Input {
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
	return in
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
	for i := range inputs {
		dst, err := writeContextFile(dir, &inputs[i])
		if err != nil {
			return written, err
		}
		written = append(written, dst)
	}
	return written, nil
}

// writeContextFile writes one input's context file into dir and returns
// its path.
func writeContextFile(dir string, in *Input) (string, error) {
	name, err := contextFileName(in)
	if err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(contextDocument(in), "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding context of %s: %w", name, err)
	}
	dst := filepath.Join(dir, name+".context.json")
	if err := writeAtomic(dir, "."+name+".context.*.tmp", dst, append(data, '\n')); err != nil {
		return "", fmt.Errorf("writing %s: %w", dst, err)
	}
	return dst, nil
}

// contextFileName names an input's context file: its agent, else its
// policy file without the extension; a name that is not one plain file
// name is refused.
func contextFileName(in *Input) (string, error) {
	name := in.Name
	if name == "" {
		name = strings.TrimSuffix(path.Base(filepath.ToSlash(in.File)), path.Ext(in.File))
	}
	if name == "" || name != path.Base(name) || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("cannot name a context file for %q", in.label())
	}
	return name, nil
}

// contextDocument is an input's context data file, with the facts the
// engine computes, so conftest and opa see them too.
func contextDocument(in *Input) map[string]any {
	doc := in.Context.DataDocument()
	if in.Policy != nil {
		doc["fullsend"].(map[string]any)["facts"] = Facts(in.Policy)
	}
	return doc
}

// writeAtomic writes data to dst through a temporary file in dir named
// after pattern, renamed over dst once written and closed.
func writeAtomic(dir, pattern, dst string, data []byte) error {
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return errors.Join(werr, cerr)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
