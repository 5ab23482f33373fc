package main

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/lint"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile/check"
)

// providerFlags are policy test's provider composition flags.
type providerFlags struct {
	refs      []string
	v2Enabled bool
}

// source is a list of profile references and how to read their files.
type source struct {
	refs []string
	read func(string) ([]byte, error)
}

// compose returns the effective policy of p with the layers of the
// references added as OpenShell composes them (in order), after checking
// that OpenShell would accept the attachment; the composition says which
// key came from which provider.
func (f providerFlags) compose(p *openshell.Policy, version string, sources ...source) (*openshell.Policy, *profile.Composed, error) {
	var attached []profile.Attachment
	for _, s := range sources {
		for _, ref := range s.refs {
			a, err := profile.Resolve(ref, s.read, version)
			if err != nil {
				return nil, nil, err
			}
			attached = append(attached, a)
		}
	}
	if len(attached) == 0 {
		return p, nil, nil
	}
	c := profile.Compose(p, attached, profile.Gateway{ProvidersV2Enabled: f.v2Enabled})
	if c.Skipped != "" {
		return c.Policy, c, nil
	}
	if err := openshell.DiagnosticsError(check.Composed(c, version)); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", check.ErrComposition, err)
	}
	return c.Policy, c, nil
}

// readCwd reads a --provider-profile file relative to the working directory.
func readCwd(name string) ([]byte, error) { return os.ReadFile(name) }

// readIn reads a profile a test file names, inside fsys (the test
// directory): no absolute path, no "..".
func readIn(fsys fs.FS) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		clean := path.Clean(strings.TrimPrefix(name, "./"))
		if !fs.ValidPath(clean) {
			return nil, fmt.Errorf("%s: a test's providers: names files inside the test directory", name)
		}
		return fs.ReadFile(fsys, clean)
	}
}

// expectComposer composes each expectation file's providers: (files read
// inside fsys) and then the --provider-profile flags into its agent's
// policy.
// Each composition is kept in cites, by file, to cite the layer that
// decided.
func (f providerFlags) expectComposer(fsys fs.FS, version string, cites layerCites) decide.ComposeFunc {
	return func(ef *decide.ExpectFile, p *openshell.Policy) (*openshell.Policy, error) {
		out, c, err := f.compose(p, version, source{ef.Providers, readIn(fsys)}, source{f.refs, readCwd})
		cites.byFile[path.Clean(ef.File)] = c
		return out, err
	}
}

// layerCites holds the compositions an expectation run used: each bundle
// agent's provider layers, and the layers a test file (or the flags) added.
type layerCites struct {
	byAgent, byFile map[string]*profile.Composed
}

func newLayerCites() layerCites {
	return layerCites{byAgent: map[string]*profile.Composed{}, byFile: map[string]*profile.Composed{}}
}

// fill cites, in every result a provider layer decided, that layer
// (profile.Layer.Cite: the wording policy test, compile and explain share).
func (lc layerCites) fill(rep *decide.ExpectReport) {
	for i := range rep.Results {
		r := &rep.Results[i]
		r.Layer = cmp.Or(lc.byFile[r.File].Cite(r.Decision.Policy, r.Decision.Path),
			lc.byAgent[r.Agent].Cite(r.Decision.Policy, r.Decision.Path))
	}
}

// profileLintInput lints a provider profile as the network policy its layer
// becomes (profile.Profile.NetworkPolicy under _provider_<id>): the lint
// rules see an OpenShell policy, and the findings point at the profile's
// lines through the layer's provenance. A profile that does not decode is
// an error naming its first error diagnostic (policy validate lists all).
func profileLintInput(name string, raw []byte) (lint.Input, error) {
	p, diags := profile.Decode(name, raw, "")
	if err := openshell.DiagnosticsError(diags); err != nil || p == nil {
		if err == nil {
			err = fmt.Errorf("%s: not a provider profile", name)
		}
		return lint.Input{}, fmt.Errorf("%w (fullsend policy validate %s lists every finding)", err, name)
	}
	key := profile.ProviderRuleName(p.ID)
	pol := &openshell.Policy{Version: 1, NetworkPolicies: map[string]openshell.NetworkPolicy{key: p.NetworkPolicy(key)}}
	return lint.Input{File: name, Policy: pol, Context: lint.Context{Provenance: pol.Provenance()}}, nil
}

// splitProfiles sets the provider profiles among files apart as lint
// inputs and returns the other files.
func splitProfiles(files []string) ([]string, []lint.Input, error) {
	var rest []string
	var profiles []lint.Input
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		if !profile.IsProfile(raw) {
			rest = append(rest, f)
			continue
		}
		in, err := profileLintInput(f, raw)
		if err != nil {
			return nil, nil, err
		}
		profiles = append(profiles, in)
	}
	return rest, profiles, nil
}

// composeBundleProviders returns a compiled agent's policy composed with
// the provider layers its manifest entry lists (`sandbox.providers`), as
// OpenShell composes them with providers_v2_enabled: what the compile
// tested, and what the runner confirms. An agent without providers keeps
// its policy.
func composeBundleProviders(b *bundle.Bundle, agent string, p *openshell.Policy) (*openshell.Policy, error) {
	c, err := bundleComposition(b, agent, p)
	if err != nil || c == nil {
		return p, err
	}
	return c.Policy, nil
}

// bundleComposition is composeBundleProviders with the composition, which
// says which layer each key is (nil for an agent without providers).
func bundleComposition(b *bundle.Bundle, agent string, p *openshell.Policy) (*profile.Composed, error) {
	refs := b.Manifest.Agents[agent].Providers
	if len(refs) == 0 {
		return nil, nil
	}
	atts, err := profile.Attachments(refs, b.Profiles, b.Manifest.OpenShellVersion)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", agent, err)
	}
	return profile.Compose(p, atts, profile.Gateway{ProvidersV2Enabled: true}), nil
}

// composeLintInputs lints each bundle agent's composed policy, as the
// compile did: its policy with its provider layers, and what it writes
// (for the privilege-lifting rules) computed on the composed policy too.
func composeLintInputs(b *bundle.Bundle, ins []lint.Input) error {
	for i := range ins {
		p, err := composeBundleProviders(b, ins[i].Name, ins[i].Policy)
		if err != nil {
			return err
		}
		if p == ins[i].Policy {
			continue
		}
		ins[i].Policy = p
		if info, ok := ins[i].Context.Agents[ins[i].Name]; ok {
			info.Writes = lint.Writes(p)
			ins[i].Context.Agents[ins[i].Name] = info // the map all inputs share
		}
	}
	return nil
}
