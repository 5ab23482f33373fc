package policydiff

import (
	"fmt"
	"io/fs"
	"slices"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
)

// providers compares the provider profiles the agent's sandbox is composed
// with (the manifest's providers, `sandbox.providers` in the frontmatter).
// The sides' policies are the composed ones, so what a layer grants, and
// every change to a profile file's endpoints, is compared as any other
// network grant, under the layer's _provider_ key; these changes say which
// provider came or went.
func (d *differ) providers() {
	name := func(p bundle.ManifestProvider) string { return p.Name + " (profile " + p.Profile + ")" }
	bp, hp := d.b.Manifest.Providers, d.h.Manifest.Providers
	for _, p := range hp {
		if slices.ContainsFunc(bp, func(q bundle.ManifestProvider) bool { return q.Name == p.Name }) {
			continue
		}
		c := Change{Action: ActionAdd, Kind: "provider_profile", Policy: p.Layer, After: name(p), From: d.providerSource(d.h, p), order: "0e" + p.Name}
		c.apply(grade{RiskLow, "", "OpenShell composes the profile's endpoints under " + p.Layer + "; each is listed as its own change"})
		d.add(c)
	}
	for _, p := range bp {
		if slices.ContainsFunc(hp, func(q bundle.ManifestProvider) bool { return q.Name == p.Name }) {
			continue
		}
		d.add(Change{Action: ActionRemove, Kind: "provider_profile", Policy: p.Layer, Before: name(p), Risk: RiskInfo,
			From: d.providerSource(d.b, p), order: "0e" + p.Name})
	}
}

// providerSource is the profile file of a provider (or the agent's
// definition for a built-in profile).
func (d *differ) providerSource(a *Agent, p bundle.ManifestProvider) []bundle.Source {
	if p.File != "" {
		return []bundle.Source{{File: p.File, Reason: "provider profile " + p.Profile}}
	}
	return []bundle.Source{{File: a.Manifest.Source, Reason: "OpenShell built-in provider profile " + p.Profile}}
}

// ComposeProviders replaces the policy of every agent of a bundle side
// that names providers with the policy OpenShell enforces: its own
// composed with the layers of its provider profiles, in the manifest's
// order (profile.Compose, providers_v2_enabled on). Project profiles are
// read from root (the project directory the bundle was compiled from) and
// must match the sha256 the manifest pins; built-in profiles come from the
// embedded catalog at the side's OpenShell version. policies holds the
// bundle's manifest.
func ComposeProviders(s *Side, policies, root fs.FS) error {
	m, _, err := bundle.ReadManifest(policies)
	if err != nil {
		return err
	}
	for _, name := range m.AgentNames() {
		a := s.Agents[name]
		if a == nil || len(a.Manifest.Providers) == 0 {
			continue
		}
		atts := make([]profile.Attachment, 0, len(a.Manifest.Providers))
		for _, p := range a.Manifest.Providers {
			att, err := bundleAttachment(p, m, root)
			if err != nil {
				return fmt.Errorf("%s: agent %s: %w", s.Ref, name, err)
			}
			atts = append(atts, att)
		}
		comp := profile.Compose(a.Policy, atts, profile.Gateway{ProvidersV2Enabled: true})
		a.Policy = comp.Policy
		for k, v := range comp.Policy.Provenance() {
			if _, ok := a.Prov[k]; !ok {
				a.Prov[k] = v
			}
		}
	}
	return nil
}

// bundleAttachment resolves one manifest provider to its profile.
func bundleAttachment(p bundle.ManifestProvider, m *bundle.Manifest, root fs.FS) (profile.Attachment, error) {
	read := func(file string) ([]byte, error) {
		data, err := fs.ReadFile(root, file)
		if err != nil {
			return nil, fmt.Errorf("%w (compare the project directory, or a bundle inside it)", err)
		}
		if sum := bundle.SHA256Hex(data); sum != m.Profiles[file] {
			return nil, fmt.Errorf("%s has sha256 %s, the manifest pins %s: recompile the bundle", file, sum, m.Profiles[file])
		}
		return data, nil
	}
	ref := p.Name + "=" + p.Profile
	if !p.Builtin {
		ref = p.Name + "=" + p.File
	}
	return profile.Resolve(ref, read, m.OpenShellVersion)
}
