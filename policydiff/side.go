package policydiff

import (
	"fmt"
	"io/fs"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// Side is one compiled revision: every agent's policy model, manifest entry
// and provenance.
type Side struct {
	// Ref is the input as the user named it (git:REV, a directory,
	// bundle:DIR); Commit the resolved commit of a git input.
	Ref    string
	Commit string
	// ManifestSHA256 is the sha256 of the side's manifest.json bytes.
	ManifestSHA256   string
	OpenShellVersion string
	Agents           map[string]*Agent
}

// Agent is one agent of a side.
type Agent struct {
	Name     string
	Manifest bundle.ManifestAgent
	Policy   *openshell.Policy
	// Prov maps policy paths (openshell.Policy.Provenance's keys) to the
	// source lines that caused each element.
	Prov map[string][]bundle.Source
}

// NewSide builds a side from a manifest and the agents' policy models as a
// compile returns them; provenance is read from the models
// (openshell.Policy.Provenance).
func NewSide(ref, manifestSHA256 string, m *bundle.Manifest, policies map[string]*openshell.Policy) (*Side, error) {
	s := &Side{Ref: ref, ManifestSHA256: manifestSHA256, OpenShellVersion: m.OpenShellVersion, Agents: map[string]*Agent{}}
	for _, name := range m.AgentNames() {
		p, ok := policies[name]
		if !ok {
			return nil, fmt.Errorf("%s: agent %s is in the manifest but has no policy", ref, name)
		}
		s.Agents[name] = &Agent{Name: name, Manifest: m.Agents[name], Policy: p, Prov: p.Provenance()}
	}
	return s, nil
}

// ReadBundle reads a compiled bundle: policies holds manifest.json, the
// policies it names (each checked against its sha256 by bundle.Open) and,
// when present, provenance.json. Without provenance.json the changes carry
// no source lines.
func ReadBundle(ref string, policies fs.FS) (*Side, error) {
	b, err := bundle.Open(policies, ".")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	prov, err := bundle.ReadProvenance(policies)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	s := &Side{Ref: ref, ManifestSHA256: b.ManifestSHA256, OpenShellVersion: b.Manifest.OpenShellVersion, Agents: map[string]*Agent{}}
	for _, name := range b.Manifest.AgentNames() {
		a, err := bundleAgent(b, prov, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		s.Agents[name] = a
	}
	// What OpenShell enforces: the policies with their provider layers.
	if err := composeProviders(s, b); err != nil {
		return nil, err
	}
	return s, nil
}

// bundleAgent decodes the policy of agent name from a bundle, with its
// provenance when the bundle has some.
func bundleAgent(b *bundle.Bundle, prov *bundle.ProvenanceFile, name string) (*Agent, error) {
	entry := b.Manifest.Agents[name]
	p, err := openshell.Unmarshal(b.Policies[name])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", entry.Policy, err)
	}
	a := &Agent{Name: name, Manifest: entry, Policy: p, Prov: map[string][]bundle.Source{}}
	if prov != nil && prov.Agents[name] != nil {
		a.Prov = prov.Agents[name]
	}
	return a, nil
}
