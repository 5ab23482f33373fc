package bundle

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Sentinel errors of Open, for callers that branch on the kind of failure.
// Every error Open returns wraps at most one of them and keeps its cause
// (an fs error, a JSON error) reachable through errors.Is and errors.As.
var (
	// ErrManifest reports a manifest.json that cannot be read or decoded, or
	// has another schema.
	ErrManifest = errors.New("reading policy manifest")
	// ErrDigestMismatch reports a policy or source file whose bytes do not
	// match the manifest, or a manifest that does not match its pinned
	// digest.
	ErrDigestMismatch = errors.New("digest mismatch")
	// ErrInvalidDigest reports a pinned manifest digest that is not a sha256
	// hex digest.
	ErrInvalidDigest = errors.New("not a sha256 hex digest")
	// ErrUnknownAgent reports an agent the manifest does not list.
	ErrUnknownAgent = errors.New("not in the policy manifest")
	// ErrUnsafePath reports a manifest that names a policy outside the
	// policies directory or a source outside the project.
	ErrUnsafePath = errors.New("path outside the bundle")
)

// Bundle is a compiled bundle whose files were checked against its manifest
// by Open. Only the bytes Open verified are here: callers use them and never
// read the files again.
type Bundle struct {
	// Manifest is the decoded manifest.json.
	Manifest *Manifest
	// ManifestSHA256 is the lowercase hex sha256 of manifest.json's exact
	// bytes: the dev.fullsend.policies.digest image annotation.
	ManifestSHA256 string
	// Policies holds the verified policy bytes of every checked agent.
	Policies map[string][]byte
	// Sources holds the verified bytes of every checked source file, keyed
	// by its path relative to the project root.
	Sources map[string][]byte
	// Profiles holds the verified bytes of the project provider profiles the
	// checked agents attach, keyed by their path relative to the policies
	// directory (Manifest.Profiles).
	Profiles map[string][]byte
}

// Option selects what Open checks beyond reading the manifest.
type Option func(*openConfig)

type openConfig struct {
	digest    string
	agents    []string
	agentsSet bool
	sources   func(agent string, entry ManifestAgent, src SourceFile) bool
}

// WithDigest pins the manifest: the sha256 of manifest.json's bytes must
// equal want (lowercase or uppercase hex, optionally "sha256:"-prefixed),
// such as the policies digest read from a signed image annotation.
func WithDigest(want string) Option {
	return func(c *openConfig) { c.digest = want }
}

// WithAgents restricts the policy and source checks to the named agents, in
// the order given; without it every agent of the manifest is checked, in
// sorted order. WithAgents() with no names checks the manifest only.
func WithAgents(names ...string) Option {
	return func(c *openConfig) { c.agents, c.agentsSet = names, true }
}

// WithSources also checks the source files the manifest pins for each
// checked agent, those keep returns true for (nil keep: all of them). Source
// paths are relative to the root Open was given.
func WithSources(keep func(agent string, entry ManifestAgent, src SourceFile) bool) Option {
	return func(c *openConfig) {
		c.sources = keep
		if keep == nil {
			c.sources = func(string, ManifestAgent, SourceFile) bool { return true }
		}
	}
}

// Open answers "these policy files match this manifest and these sources":
// it reads policiesDir/manifest.json from root, checks its digest when one is
// pinned (WithDigest), then checks every selected agent's policy file
// (WithAgents; default all), the project provider profiles those agents
// attach and the selected source files (WithSources; default none) against
// the manifest's sha256 digests, and returns the verified bytes. Paths the manifest names must stay inside policiesDir
// (policies) and root (sources).
func Open(root fs.FS, policiesDir string, opts ...Option) (*Bundle, error) {
	var c openConfig
	for _, o := range opts {
		o(&c)
	}
	policies, err := fs.Sub(root, policiesDir)
	if err != nil {
		return nil, fmt.Errorf("policies directory %q: %w", policiesDir, err)
	}
	m, sum, err := ReadManifest(policies)
	if err != nil {
		return nil, err
	}
	if c.digest != "" {
		if err := checkDigest(path.Join(policiesDir, ManifestFile), sum, c.digest); err != nil {
			return nil, err
		}
	}
	b := &Bundle{Manifest: m, ManifestSHA256: sum, Policies: map[string][]byte{}, Sources: map[string][]byte{}, Profiles: map[string][]byte{}}
	agents := c.agents
	if !c.agentsSet {
		agents = m.AgentNames()
	}
	for _, name := range agents {
		if err := c.verifyAgent(b, root, policies, name); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// verifyAgent checks one agent's policy and its selected sources and records
// their bytes in b.
func (c *openConfig) verifyAgent(b *Bundle, root, policies fs.FS, name string) error {
	data, err := b.Manifest.verifyPolicy(policies, name)
	if err != nil {
		return err
	}
	b.Policies[name] = data
	if err := b.verifyProviders(policies, name); err != nil {
		return err
	}
	if c.sources == nil {
		return nil
	}
	entry := b.Manifest.Agents[name]
	for _, src := range entry.Sources {
		if !c.sources(name, entry, src) {
			continue
		}
		data, err := verifySource(root, src)
		if err != nil {
			return fmt.Errorf("agent %q: %w", name, err)
		}
		b.Sources[src.Path] = data
	}
	return nil
}

// checkDigest compares the manifest's sha256 with a pinned digest, in
// constant time.
func checkDigest(file, sum, pinned string) error {
	want := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(pinned), "sha256:"))
	if len(want) != 64 || strings.Trim(want, "0123456789abcdef") != "" {
		return fmt.Errorf("policies digest %q is %w", pinned, ErrInvalidDigest)
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(sum)) != 1 {
		return fmt.Errorf("%s has sha256 %s, the pinned digest is %s: %w", file, sum, want, ErrDigestMismatch)
	}
	return nil
}

// verifyPolicy checks that the named agent's policy file in policies matches
// the manifest digest and returns its bytes.
func (m *Manifest) verifyPolicy(policies fs.FS, agent string) ([]byte, error) {
	entry, ok := m.Agents[agent]
	if !ok {
		return nil, fmt.Errorf("agent %q is %w (have %v)", agent, ErrUnknownAgent, m.AgentNames())
	}
	if entry.Policy != path.Base(entry.Policy) || !fs.ValidPath(entry.Policy) {
		return nil, fmt.Errorf("agent %q: manifest names policy %q outside the policies directory: %w", agent, entry.Policy, ErrUnsafePath)
	}
	data, err := fs.ReadFile(policies, entry.Policy)
	if err != nil {
		return nil, fmt.Errorf("agent %q: %w", agent, err)
	}
	if got := SHA256Hex(data); got != entry.PolicySHA256 {
		return nil, fmt.Errorf("agent %q: policy %s has sha256 %s, manifest says %s: %w",
			agent, entry.Policy, got, entry.PolicySHA256, ErrDigestMismatch)
	}
	return data, nil
}

// verifySource checks one pinned source file under root and returns its
// bytes.
func verifySource(root fs.FS, src SourceFile) ([]byte, error) {
	if !fs.ValidPath(src.Path) || src.Path == "." {
		return nil, fmt.Errorf("manifest names source %q outside the project: %w", src.Path, ErrUnsafePath)
	}
	data, err := fs.ReadFile(root, src.Path)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", src.Path, err)
	}
	if got := SHA256Hex(data); got != src.SHA256 {
		return nil, fmt.Errorf("source %s has sha256 %s, manifest says %s: %w", src.Path, got, src.SHA256, ErrDigestMismatch)
	}
	return data, nil
}
