package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// Project is a compiled project as baked into the image: agents/, skills/
// and policies/ (with manifest.json) under one root, /opt/fullsend by default.
type Project struct {
	fsys fs.FS
	// Manifest is the decoded policies/manifest.json.
	Manifest *bundle.Manifest
	// ManifestSHA256 is the sha256 of manifest.json's exact bytes.
	ManifestSHA256 string
}

// policiesDir holds the compiled policies and manifest.json in a project.
const policiesDir = "policies"

// LoadProject reads the manifest of a compiled project. When wantDigest is
// not empty (the policies digest `fullsend verify` read from the signed image
// annotation), the manifest's own sha256 must equal it: the files inside the
// running image are then exactly the ones that were signed.
func LoadProject(fsys fs.FS, wantDigest string) (*Project, error) {
	b, err := bundle.Open(fsys, policiesDir, bundle.WithDigest(wantDigest), bundle.WithAgents())
	switch {
	case errors.Is(err, bundle.ErrDigestMismatch):
		return nil, fmt.Errorf("%w: %w; the files in this image are not the ones that were verified", ErrPolicy, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	return &Project{fsys: fsys, Manifest: b.Manifest, ManifestSHA256: b.ManifestSHA256}, nil
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
	// Profiles are the verified bytes of the project provider profiles the
	// agent attaches (Entry.Providers), keyed by their manifest path.
	Profiles map[string][]byte
}

// Agent verifies and loads one agent: its policy file against the manifest
// digest, the policy's strict decode, and every source file the manifest
// pins (the files later installed in the sandbox are these bytes).
func (p *Project) Agent(name string) (*Agent, error) {
	// The manifest is pinned to the one LoadProject read.
	b, err := bundle.Open(p.fsys, policiesDir, bundle.WithDigest(p.ManifestSHA256), bundle.WithAgents(name),
		bundle.WithSources(func(agent string, entry bundle.ManifestAgent, src bundle.SourceFile) bool {
			_, ok := installPath(src.Path, entry, agent)
			return ok
		}))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	entry := b.Manifest.Agents[name]
	pol, err := openshell.Unmarshal(b.Policies[name])
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
	if _, ok := b.Sources[entry.Source]; !ok {
		return nil, fmt.Errorf("%w: agent %s: manifest pins no digest for its source %s; refusing to install an unverified definition",
			ErrPolicy, name, entry.Source)
	}
	a := &Agent{Name: name, Entry: entry, PolicySHA256: entry.PolicySHA256, Policy: pol, Open: open, Files: map[string][]byte{}, Profiles: b.Profiles}
	for _, src := range entry.Sources {
		if data, ok := b.Sources[src.Path]; ok {
			target, _ := installPath(src.Path, entry, name)
			a.Files[target] = data
		}
	}
	return a, nil
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
