package runner

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// Project is a compiled project as baked into the image: agents/, skills/
// and policies/ (with manifest.json) under one root, /opt/fullsend by default.
type Project struct {
	fsys     fs.FS
	policies fs.FS
	// Manifest is the decoded policies/manifest.json.
	Manifest *bundle.Manifest
	// ManifestSHA256 is the sha256 of manifest.json's exact bytes.
	ManifestSHA256 string
}

// LoadProject reads the manifest of a compiled project. When wantDigest is
// not empty (the policies digest `fullsend verify` read from the signed image
// annotation), the manifest's own sha256 must equal it: the files inside the
// running image are then exactly the ones that were signed.
func LoadProject(fsys fs.FS, wantDigest string) (*Project, error) {
	policies, err := fs.Sub(fsys, "policies")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPolicy, err)
	}
	m, sum, err := bundle.ReadManifest(policies)
	if err != nil {
		return nil, fmt.Errorf("%w: policies/%v", ErrPolicy, err)
	}
	if wantDigest != "" {
		want := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(wantDigest), "sha256:"))
		if len(want) != 64 || strings.Trim(want, "0123456789abcdef") != "" {
			return nil, fmt.Errorf("%w: policies digest %q is not a sha256 hex digest", ErrPolicy, wantDigest)
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(sum)) != 1 {
			return nil, fmt.Errorf("%w: policies/%s has sha256 %s, the signed image says %s: %w; the files in this image are not the ones that were verified",
				ErrPolicy, bundle.ManifestFile, sum, want, bundle.ErrDigestMismatch)
		}
	}
	return &Project{fsys: fsys, policies: policies, Manifest: m, ManifestSHA256: sum}, nil
}

// Agent is one agent of a verified project, ready to run.
type Agent struct {
	Name  string
	Entry bundle.ManifestAgent
	// PolicySHA256 is the digest of the compiled (unresolved) policy file.
	PolicySHA256 string
	// Policy is the decoded compiled policy, placeholders still open.
	Policy *openshell.Policy
	// Open lists the placeholders the policy needs at run time.
	Open []string
	// Files are the verified agent and skill files to install in the
	// sandbox, keyed by their path relative to the runtime's config dir
	// (agents/NAME.md, skills/SKILL/SKILL.md).
	Files map[string][]byte
}

// Agent verifies and loads one agent: its policy file against the manifest
// digest, the policy's strict decode, and every source file the manifest
// pins (the files later installed in the sandbox are these bytes).
func (p *Project) Agent(name string) (*Agent, error) {
	data, err := p.Manifest.VerifyPolicy(p.policies, name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	entry := p.Manifest.Agents[name]
	pol, err := openshell.Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("%w: policies/%s: %w", ErrPolicy, entry.Policy, err)
	}
	open, err := openshell.OpenPlaceholders(pol)
	if err != nil {
		return nil, fmt.Errorf("%w: policies/%s: %w", ErrPolicy, entry.Policy, err)
	}
	open = union(open, entry.Placeholders)
	switch entry.Runtime {
	case RuntimeClaude, RuntimeOpenCode:
	default:
		return nil, fmt.Errorf("%w: agent %s: runtime %q is not supported by the runner (want %s or %s)",
			ErrPolicy, name, entry.Runtime, RuntimeClaude, RuntimeOpenCode)
	}
	a := &Agent{Name: name, Entry: entry, PolicySHA256: entry.PolicySHA256, Policy: pol, Open: open, Files: map[string][]byte{}}
	sawSource := false
	for _, src := range entry.Sources {
		target, ok := installPath(src.Path, entry, name)
		if !ok {
			continue
		}
		b, err := p.verifySource(src)
		if err != nil {
			return nil, fmt.Errorf("%w: agent %s: %w", ErrPolicy, name, err)
		}
		a.Files[target] = b
		sawSource = sawSource || src.Path == entry.Source
	}
	if !sawSource {
		return nil, fmt.Errorf("%w: agent %s: manifest pins no digest for its source %s; refusing to install an unverified definition",
			ErrPolicy, name, entry.Source)
	}
	return a, nil
}

func (p *Project) verifySource(src bundle.SourceFile) ([]byte, error) {
	clean := path.Clean(src.Path)
	if !fs.ValidPath(clean) || clean != src.Path {
		return nil, fmt.Errorf("manifest names source %q outside the project", src.Path)
	}
	b, err := fs.ReadFile(p.fsys, clean)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", clean, err)
	}
	if got := bundle.SHA256Hex(b); got != src.SHA256 {
		return nil, fmt.Errorf("%s has sha256 %s, manifest says %s: %w", clean, got, src.SHA256, bundle.ErrDigestMismatch)
	}
	return b, nil
}

// installPath maps a pinned source file to where the runtime finds it:
// the agent definition to agents/NAME.md, a skill file to skills/SKILL/...
// Other sources (catalog overrides) are not installed.
func installPath(src string, entry bundle.ManifestAgent, name string) (string, bool) {
	if src == entry.Source {
		return "agents/" + name + ".md", true
	}
	for _, skill := range entry.Skills {
		marker := "skills/" + skill + "/"
		if i := strings.Index(src, marker); i >= 0 && (i == 0 || src[i-1] == '/') {
			return marker + src[i+len(marker):], true
		}
	}
	return "", false
}

// Resolve substitutes runtime values into a copy of the agent's policy and
// returns it encoded. Any placeholder left open is an error.
func (a *Agent) Resolve(v placeholder.Values) (*openshell.Policy, []byte, error) {
	pol := a.Policy.Clone()
	open, err := openshell.ApplyPlaceholders(pol, v)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: agent %s: %w", ErrPlaceholder, a.Name, err)
	}
	if len(open) > 0 {
		return nil, nil, fmt.Errorf("%w: agent %s: placeholders still open after substitution: %s",
			ErrPlaceholder, a.Name, strings.Join(open, ", "))
	}
	data, err := openshell.Marshal(pol, "")
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	return pol, data, nil
}

// providerRulePrefix marks the network policies OpenShell composes into
// the effective policy from attached providers (openshell-policy compose.rs).
// User policies may not use it, so these entries never come from us.
const providerRulePrefix = "_provider_"

// samePolicy compares the policy sent with the sandbox's active policy as
// parsed models: formatting, comments and key order do not matter, every
// value does. Provider layers OpenShell adds to the active policy are set
// aside first.
func samePolicy(want []byte, got []byte) (bool, error) {
	g, err := openshell.Unmarshal(got)
	if err != nil {
		return false, fmt.Errorf("active policy does not parse: %w", err)
	}
	for k := range g.NetworkPolicies {
		if strings.HasPrefix(k, providerRulePrefix) {
			delete(g.NetworkPolicies, k)
		}
	}
	if len(g.NetworkPolicies) == 0 {
		g.NetworkPolicies = nil
	}
	gb, err := openshell.Marshal(g, "")
	if err != nil {
		return false, err
	}
	w, err := openshell.Unmarshal(want)
	if err != nil {
		return false, err
	}
	wb, err := openshell.Marshal(w, "")
	if err != nil {
		return false, err
	}
	return bytes.Equal(gb, wb), nil
}

func union(a, b []string) []string {
	set := map[string]bool{}
	for _, s := range append(append([]string(nil), a...), b...) {
		set[s] = true
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
