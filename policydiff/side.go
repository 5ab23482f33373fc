package policydiff

import (
	"fmt"
	"io/fs"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/prover"
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

	// catalog holds the org catalog's .cue files the side was compiled
	// with, by their path relative to the project directory.
	catalog map[string][]byte
	// pin is the side's VersionFile.
	pin pin
}

// Agent is one agent of a side.
type Agent struct {
	Name     string
	Manifest bundle.ManifestAgent
	Policy   *openshell.Policy
	// Prov maps policy paths (openshell.Policy.Provenance's keys) to the
	// source lines that caused each element.
	Prov map[string][]bundle.Source
	// Layers are the provider layers Policy is composed with, in
	// attachment order, with whether each provider holds a credential.
	Layers []prover.ProviderLayer
	// TierWhy are the source lines that raised the agent to its tier (empty
	// when unknown, as for a bundle).
	TierWhy []bundle.Source
}

// Compiled is what a compile gives of one agent beyond its manifest entry.
type Compiled struct {
	// Policy is the policy OpenShell enforces: the agent's own composed
	// with its provider layers.
	Policy *openshell.Policy
	// TierWhy are the lines that need the agent's tier, highest tier first.
	TierWhy []bundle.Source
}

// NewSide builds a side from a manifest and the agents as a compile
// returns them; provenance is read from the models
// (openshell.Policy.Provenance). profiles holds the project profiles the
// manifest's providers name (by ProviderRef.File, as the compile's output
// files do), read to learn which providers hold credentials.
func NewSide(ref, manifestSHA256 string, m *bundle.Manifest, agents map[string]Compiled, profiles map[string][]byte) (*Side, error) {
	s := &Side{Ref: ref, ManifestSHA256: manifestSHA256, OpenShellVersion: m.OpenShellVersion, Agents: map[string]*Agent{}}
	for _, name := range m.AgentNames() {
		c, ok := agents[name]
		if !ok || c.Policy == nil {
			return nil, fmt.Errorf("%s: agent %s is in the manifest but has no policy", ref, name)
		}
		a := &Agent{Name: name, Manifest: m.Agents[name], Policy: c.Policy, Prov: c.Policy.Provenance(), TierWhy: c.TierWhy}
		if err := a.compiledLayers(profiles, m.OpenShellVersion); err != nil {
			return nil, fmt.Errorf("%s: agent %s: %w", ref, name, err)
		}
		s.Agents[name] = a
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
