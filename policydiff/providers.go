package policydiff

import (
	"fmt"
	"slices"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/prover"
)

// providers compares the provider profiles the agent's sandbox is composed
// with (the manifest's providers, `sandbox.providers` in the frontmatter).
// The sides' policies are the composed ones, so what a layer grants, and
// every change to a profile file's endpoints, is compared as any other
// network grant, under the layer's _provider_ key; these changes say which
// provider came or went.
func (d *differ) providers() {
	name := func(p bundle.ProviderRef) string { return p.Name + " (profile " + p.Profile + ")" }
	bp, hp := d.b.Manifest.Providers, d.h.Manifest.Providers
	for _, p := range hp {
		if slices.ContainsFunc(bp, func(q bundle.ProviderRef) bool { return q.Name == p.Name }) {
			continue
		}
		layer := profile.ProviderRuleName(p.Name)
		c := Change{Action: ActionAdd, Kind: "provider_profile", Policy: layer, After: name(p), From: d.providerSource(d.h, p), order: "0e" + p.Name}
		c.apply(grade{RiskLow, "", "OpenShell composes the profile's endpoints under " + layer + "; each is listed as its own change"})
		d.add(c)
	}
	for _, p := range bp {
		if slices.ContainsFunc(hp, func(q bundle.ProviderRef) bool { return q.Name == p.Name }) {
			continue
		}
		d.add(Change{Action: ActionRemove, Kind: "provider_profile", Policy: profile.ProviderRuleName(p.Name), Before: name(p), Risk: RiskInfo,
			From: d.providerSource(d.b, p), order: "0e" + p.Name})
	}
}

// providerSource is the profile file of a provider, as the bundle names it
// (or the agent's definition for a built-in profile).
func (d *differ) providerSource(a *Agent, p bundle.ProviderRef) []bundle.Source {
	if p.File != "" {
		return []bundle.Source{{File: p.File, Reason: "provider profile " + p.Profile}}
	}
	return []bundle.Source{{File: a.Manifest.Source, Reason: "OpenShell built-in provider profile " + p.Profile}}
}

// composeProviders replaces the policy of every agent of a bundle side
// that names providers with the policy OpenShell enforces: its own
// composed with the layers of its provider profiles, in the manifest's
// order (profile.Compose, providers_v2_enabled on). Project profiles are
// the bundle's copies bundle.Open verified against the manifest; built-in
// profiles come from the embedded catalog at the side's OpenShell version.
// The layers' provenance names the profiles' lines.
func composeProviders(s *Side, b *bundle.Bundle) error {
	for _, name := range b.Manifest.AgentNames() {
		a := s.Agents[name]
		if a == nil || len(a.Manifest.Providers) == 0 {
			continue
		}
		atts, err := profile.Attachments(a.Manifest.Providers, b.Profiles, b.Manifest.OpenShellVersion)
		if err != nil {
			return fmt.Errorf("%s: agent %s: %w", s.Ref, name, err)
		}
		comp := profile.Compose(a.Policy, atts, profile.Gateway{ProvidersV2Enabled: true})
		a.Policy = comp.Policy
		a.Layers = providerLayers(a.Manifest.Providers, comp.Layers)
		for k, v := range comp.Policy.Provenance() {
			if _, ok := a.Prov[k]; !ok {
				a.Prov[k] = v
			}
		}
	}
	return nil
}

// compiledLayers sets the provider layers of a compiled agent, whose
// policy the compile already composed: the keys are those Compose assigns
// against the earlier layers alone, since the compile never writes a
// `_provider_` key of its own (compile/merge.go, policyKey).
func (a *Agent) compiledLayers(profiles map[string][]byte, version string) error {
	if len(a.Manifest.Providers) == 0 {
		return nil
	}
	atts, err := profile.Attachments(a.Manifest.Providers, profiles, version)
	if err != nil {
		return err
	}
	comp := profile.Compose(nil, atts, profile.Gateway{ProvidersV2Enabled: true})
	a.Layers = providerLayers(a.Manifest.Providers, comp.Layers)
	return nil
}

// providerLayers pairs the manifest's providers with their composed
// layers, in attachment order. A provider holds a credential when the job
// gives it one (ProviderRef.Credentials) or its profile declares
// credentials or signs (Layer.Credentialed, has_credentialed_endpoints).
func providerLayers(refs []bundle.ProviderRef, layers []profile.Layer) []prover.ProviderLayer {
	out := make([]prover.ProviderLayer, 0, len(layers))
	for i, l := range layers {
		cred := l.Credentialed
		if i < len(refs) {
			cred = cred || len(refs[i].Credentials) > 0
		}
		out = append(out, prover.ProviderLayer{Name: l.Provider, Key: l.Key, Credentialed: cred})
	}
	return out
}
