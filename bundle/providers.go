package bundle

import (
	"fmt"
	"path"
	"strings"
)

// ManifestProvider is one OpenShell provider profile an agent's sandbox is
// composed with (Providers v2, `sandbox.providers` in its frontmatter), in
// attachment order: the runner creates a provider Name of type Profile,
// attaches it, and expects its layer under Layer in the effective policy.
type ManifestProvider struct {
	// Name is the provider (instance) name; it names the layer.
	Name string `json:"name"`
	// Profile is the profile id (`openshell provider create --type`).
	Profile string `json:"profile"`
	// Builtin marks a profile of OpenShell's built-in catalog at the
	// manifest's openshell_version; File is then empty.
	Builtin bool `json:"builtin,omitempty"`
	// File is the project profile the runner imports, relative to the
	// project root; Manifest.Profiles pins its sha256.
	File string `json:"file,omitempty"`
	// Layer is the network_policies key OpenShell composes the profile's
	// endpoints under (_provider_<name>).
	Layer string `json:"layer"`
}

// checkProviders checks that every agent's providers are well formed and
// that each project profile they name is pinned in m.Profiles, and that
// m.Profiles pins nothing else.
func (m *Manifest) checkProviders() error {
	used := map[string]bool{}
	for _, name := range m.AgentNames() {
		for i, p := range m.Agents[name].Providers {
			at := fmt.Sprintf("agents.%s.providers[%d]", name, i)
			switch {
			case p.Name == "" || p.Profile == "" || !strings.HasPrefix(p.Layer, "_provider_"):
				return fmt.Errorf("%w: %s: name, profile and a _provider_ layer are required", ErrManifest, at)
			case p.Builtin != (p.File == ""):
				return fmt.Errorf("%w: %s: a provider is built-in or names a project file, exactly one", ErrManifest, at)
			case p.File != "" && (!validRel(p.File) || m.Profiles[p.File] == ""):
				return fmt.Errorf("%w: %s: profile file %q is not pinned in profiles", ErrManifest, at, p.File)
			}
			used[p.File] = true
		}
	}
	for f := range m.Profiles {
		if !used[f] {
			return fmt.Errorf("%w: profiles: %q is named by no agent's providers", ErrManifest, f)
		}
	}
	return nil
}

// validRel reports whether p is a clean relative slash path inside the
// project.
func validRel(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && path.Clean(p) == p && p != ".." && !strings.HasPrefix(p, "../")
}
