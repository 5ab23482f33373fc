package bundle

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
)

// profilesDir is the subdirectory of the policies directory that holds the
// project provider profiles.
const profilesDir = "profiles"

// verifyProviders checks the provider references of one agent and records
// the bytes of the project profiles they name in b: every reference has a
// name and a profile id and is either built in or names a file that
// Manifest.Profiles pins, directly under profiles/ with an extension
// OpenShell imports (.yaml, .yml, .json); provider names are unique.
func (b *Bundle) verifyProviders(policies fs.FS, agent string) error {
	seen := map[string]bool{}
	for i, ref := range b.Manifest.Agents[agent].Providers {
		where := fmt.Sprintf("agent %q: providers[%d]", agent, i)
		switch {
		case ref.Name == "" || ref.Profile == "":
			return fmt.Errorf("%w: %s: name and profile are required", ErrManifest, where)
		case seen[ref.Name]:
			return fmt.Errorf("%w: %s: provider name %q is attached twice", ErrManifest, where, ref.Name)
		case ref.Builtin == (ref.File != ""):
			return fmt.Errorf("%w: %s: provider %q: want exactly one of builtin and file", ErrManifest, where, ref.Name)
		}
		seen[ref.Name] = true
		if ref.Builtin {
			continue
		}
		data, err := b.Manifest.verifyProfile(policies, ref.File)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		b.Profiles[ref.File] = data
	}
	return nil
}

// verifyProfile checks one project profile file against its pin in
// Manifest.Profiles and returns its bytes.
func (m *Manifest) verifyProfile(policies fs.FS, file string) ([]byte, error) {
	if !fs.ValidPath(file) || path.Dir(file) != profilesDir || !slices.Contains([]string{".yaml", ".yml", ".json"}, path.Ext(file)) {
		return nil, fmt.Errorf("manifest names provider profile %q, not a .yaml, .yml or .json file directly in %s/ of the policies directory: %w",
			file, profilesDir, ErrUnsafePath)
	}
	i := slices.IndexFunc(m.Profiles, func(s SourceFile) bool { return s.Path == file })
	if i < 0 {
		return nil, fmt.Errorf("%w: provider profile %s is not pinned in the manifest's profiles", ErrManifest, file)
	}
	data, err := fs.ReadFile(policies, file)
	if err != nil {
		return nil, fmt.Errorf("provider profile %s: %w", file, err)
	}
	if got := SHA256Hex(data); got != m.Profiles[i].SHA256 {
		return nil, fmt.Errorf("provider profile %s has sha256 %s, manifest says %s: %w", file, got, m.Profiles[i].SHA256, ErrDigestMismatch)
	}
	return data, nil
}
