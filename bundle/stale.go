package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// ErrStale reports a compiled bundle whose manifest no longer matches the
// files it pins: a source was edited or removed since the compile, or a
// policy file was changed by hand.
var ErrStale = errors.New("compiled policies are stale")

// Staleness is what Freshness found: the files whose bytes no longer match
// the manifest's sha256, by path relative to the project root.
type Staleness struct {
	// PoliciesDir is the policies directory, relative to the project root.
	PoliciesDir string
	// Changed lists sources and policies whose bytes differ from the manifest.
	Changed []string
	// Missing lists the sources and policies the manifest pins that are gone.
	Missing []string
	// SourcesFound is set when at least one pinned source exists under the
	// root: without any, the root is not the project the bundle was
	// compiled from (a bundle copied elsewhere) and staleness cannot be told.
	SourcesFound bool
}

// Stale reports whether any pinned file changed or is missing.
func (s *Staleness) Stale() bool { return s != nil && len(s.Changed)+len(s.Missing) > 0 }

// String says what is stale in one line, naming at most three files.
func (s *Staleness) String() string {
	var parts []string
	if len(s.Changed) > 0 {
		parts = append(parts, "changed: "+firstFew(s.Changed))
	}
	if len(s.Missing) > 0 {
		parts = append(parts, "missing: "+firstFew(s.Missing))
	}
	return fmt.Sprintf("%s/%s does not match its files (%s)", s.PoliciesDir, ManifestFile, strings.Join(parts, "; "))
}

func firstFew(files []string) string {
	if len(files) <= 3 {
		return strings.Join(files, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(files[:3], ", "), len(files)-3)
}

// Freshness compares every policy and every source file the manifest of
// root/policiesDir pins with the files under root. It is the only
// staleness test of the project: the manifest's sha256 digests decide,
// never timestamps. A manifest that cannot be read is an error wrapping
// ErrManifest (nothing was compiled, or it was damaged); Freshness judges
// nothing else. Source paths outside root count as changed.
func Freshness(root fs.FS, policiesDir string) (*Staleness, error) {
	policies, err := fs.Sub(root, policiesDir)
	if err != nil {
		return nil, fmt.Errorf("policies directory %q: %w", policiesDir, err)
	}
	m, _, err := ReadManifest(policies)
	if err != nil {
		return nil, err
	}
	s := &Staleness{PoliciesDir: policiesDir}
	seen := map[string]bool{}
	check := func(fsys fs.FS, isSource bool, p, display, want string) {
		if seen[display] {
			return
		}
		seen[display] = true
		if !fs.ValidPath(p) || p == "." {
			s.Changed = append(s.Changed, display)
			return
		}
		data, err := fs.ReadFile(fsys, p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			s.Missing = append(s.Missing, display)
			return
		case err != nil || SHA256Hex(data) != want:
			s.Changed = append(s.Changed, display)
		}
		if isSource {
			s.SourcesFound = true
		}
	}
	for _, name := range m.AgentNames() {
		a := m.Agents[name]
		check(policies, false, a.Policy, path.Join(policiesDir, a.Policy), a.PolicySHA256)
		for _, src := range a.Sources {
			check(root, true, src.Path, src.Path, src.SHA256)
		}
	}
	sort.Strings(s.Changed)
	sort.Strings(s.Missing)
	return s, nil
}

// StaleRule is the one rule every command that reads a compiled bundle
// applies (image build, policy test, policy lint, policy explain): in CI a
// stale bundle is refused, an error wrapping ErrStale; elsewhere it is a
// warning, returned as one line for the caller to print before it goes on
// (image build then compiles again). compileCmd is the command that brings
// the bundle up to date, for the hint. A fresh bundle gives "", nil.
func StaleRule(s *Staleness, inCI bool, compileCmd string) (warning string, err error) {
	if !s.Stale() {
		return "", nil
	}
	if inCI {
		return "", fmt.Errorf("%w: %s (hint: run `%s` and commit %s/; in CI a stale bundle is refused)", ErrStale, s, compileCmd, s.PoliciesDir)
	}
	return fmt.Sprintf("warning: %v: %s (run `%s`; in CI this is an error)", ErrStale, s, compileCmd), nil
}
