package compile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile/check"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// credentialBindingSince is the first OpenShell release whose sandbox
// proxy resolves a provider's static credential at its profile's endpoints
// only (commit 0120535ef, "bind static credentials to provider endpoints";
// first tagged in v0.0.103; docs/sandboxes/providers-v2.mdx:66 @ v0.0.111);
// the runner refuses providers before it.
const credentialBindingSince = "v0.0.103"

// ProfilesDir is where a project keeps its provider profiles: NAME in
// `sandbox.providers` is profiles/NAME.yaml when that file exists.
const ProfilesDir = "profiles"

// ProviderLayer is one provider profile an agent names in
// `sandbox.providers`: OpenShell composes its layer into the sandbox's
// effective policy at run time (Providers v2), under Key.
type ProviderLayer struct {
	// Name is the provider (instance) name the runner gives the provider; it
	// names the layer. fullsend names it after the profile id.
	Name string
	// Profile is the profile id (the provider's --type).
	Profile string
	// Builtin marks one of OpenShell's built-in profiles at the target
	// release; File is then empty.
	Builtin bool
	// File is the project profile (profiles/<id>.yaml), relative to the
	// project root.
	File string
	// Credentials are the job's environment variables that become the
	// provider's credentials (empty: the profile's env_vars).
	Credentials []string
	// Key is the network_policies key the layer takes in the composed
	// policy (_provider_<name>, suffixed on a collision as OpenShell does).
	Key string
	// Pos is where the agent (or one of its skills) named it.
	Pos agentdef.Pos

	// data is the project profile's bytes, copied into the bundle; prof
	// the decoded profile.
	data []byte
	prof *profile.Profile
}

// Effective returns the policy the compile checks (lint, policy tests):
// the agent's own policy composed with its provider layers as OpenShell
// composes them at run time, or the agent's own policy when it names no
// provider. The policy written to the bundle is always Policy.
func (c *Compiled) Effective() *openshell.Policy {
	if c.Composed != nil {
		return c.Composed
	}
	return c.Policy
}

// providerRefs lists the providers the agent and then its skills name, in
// that order, each once (the first naming wins).
func providerRefs(a *agentdef.Agent, skills []*agentdef.Skill) []agentdef.ProviderDecl {
	var refs []agentdef.ProviderDecl
	seen := map[string]bool{}
	add := func(sb *agentdef.Sandbox) {
		if sb == nil {
			return
		}
		for _, r := range sb.Providers {
			if !seen[r.Name] {
				seen[r.Name] = true
				refs = append(refs, r)
			}
		}
	}
	add(a.Sandbox)
	for _, s := range skills {
		add(s.Sandbox)
	}
	return refs
}

// providers resolves the agent's provider profiles, composes their layers
// onto pol as OpenShell does with providers_v2_enabled (profile.Compose),
// checks the composition as the gateway does when a provider is attached
// (profile.CheckComposed) and holds every layer to the agent's tier
// (leastPrivilege). It returns nil and no layer when the agent names no
// provider; errors go to b.diags.
func (b *builder) providers(refs []agentdef.ProviderDecl, pol *openshell.Policy, tier policycue.Tier, load fragmentLoader, projectProfiles []string) (*openshell.Policy, []ProviderLayer) {
	if len(refs) == 0 {
		return nil, nil
	}
	atts, layers, ok := b.resolveLayers(refs, load, projectProfiles)
	if !ok {
		return nil, nil
	}
	if openshell.CompareVersions(b.version, credentialBindingSince) < 0 {
		b.warnf(refs[0].Pos, "sandbox.providers", "target OpenShell "+credentialBindingSince+" or later",
			"OpenShell %s resolves a provider's credential at every host the sandbox may reach, not only its profile's endpoints (bound from %s): fullsend run refuses providers there", b.version, credentialBindingSince)
	}
	comp := profile.Compose(pol, atts, profile.Gateway{ProvidersV2Enabled: true})
	for i := range layers {
		layers[i].Key = comp.Layers[i].Key
	}
	b.checkComposed(comp)
	b.widerLayers(pol, comp.Policy, layers)
	for i := range atts {
		b.leastPrivilege(layers[i], comp.Policy.NetworkPolicies[layers[i].Key], tier)
	}
	return comp.Policy, layers
}

// resolveLayers resolves the profile of every provider ref names, in
// order, into its attachment and its layer; false when any of them does
// not resolve (resolveProvider reports why).
func (b *builder) resolveLayers(refs []agentdef.ProviderDecl, load fragmentLoader, projectProfiles []string) ([]profile.Attachment, []ProviderLayer, bool) {
	var atts []profile.Attachment
	var layers []ProviderLayer
	for _, ref := range refs {
		p, data, ok := b.resolveProvider(ref, load, projectProfiles)
		if !ok {
			continue
		}
		atts = append(atts, profile.Attachment{Provider: ref.Name, Profile: p})
		l := ProviderLayer{Name: ref.Name, Profile: p.ID, Builtin: p.Builtin, Credentials: ref.Credentials, Pos: ref.Pos, prof: p}
		if !p.Builtin {
			l.File, l.data = p.File, data
		}
		layers = append(layers, l)
	}
	return atts, layers, len(atts) == len(refs)
}

// checkComposed checks the composition as the gateway does when a provider
// is attached: what it refuses is an error at the profile's line.
func (b *builder) checkComposed(comp *profile.Composed) {
	for _, d := range check.Composed(comp, b.version) {
		if d.IsFatal() {
			b.errorf(agentdef.Pos{File: d.File, Line: d.Line, Column: d.Column}, d.Path,
				"OpenShell refuses to attach this provider to the agent's sandbox; fix the profile or name another",
				"[%s] %s", d.Code, d.Message)
		}
	}
}

// resolveProvider finds the profile ref names: the project's
// profiles/<name>.yaml when it exists, validated as OpenShell's loader and
// `openshell provider profile lint` validate it (its errors and traps are
// errors here, at the profile's lines), else the built-in profile of that
// id at the target release; else an error with the closest known id.
func (b *builder) resolveProvider(ref agentdef.ProviderDecl, load fragmentLoader, projectProfiles []string) (*profile.Profile, []byte, bool) {
	file := path.Join(ProfilesDir, ref.Profile+".yaml")
	data, err := load(file)
	switch {
	case err == nil:
		p, ok := b.projectProfile(ref, file, data)
		return p, data, ok
	case !errors.Is(err, fs.ErrNotExist):
		b.errorf(ref.Pos, "sandbox.providers", "a project profile must be a regular file inside the project", "provider profile %q: %v", ref.Profile, err)
		return nil, nil, false
	case profile.IsBuiltinID(ref.Profile, b.version):
		p, err := profile.Builtin(ref.Profile, b.version)
		if err != nil {
			b.errorf(ref.Pos, "sandbox.providers", "target OpenShell v0.0.83 or v0.0.111, or ship the profile as "+file, "provider profile %q: %v", ref.Profile, err)
			return nil, nil, false
		}
		return p, nil, true
	}
	known := append(append([]string{}, projectProfiles...), profile.BuiltinIDs(b.version)...)
	sort.Strings(known)
	b.errorf(ref.Pos, "sandbox.providers", agentdef.KnownHint("provider profiles (project "+ProfilesDir+"/*.yaml and OpenShell "+b.version+" built-ins)", ref.Profile, known),
		"no provider profile %q: neither %s nor a built-in profile of OpenShell %s", ref.Profile, file, b.version)
	return nil, nil, false
}

// projectProfile decodes and validates a project profile file; its id must
// be the name the agent used (the file's base name).
func (b *builder) projectProfile(ref agentdef.ProviderDecl, file string, data []byte) (*profile.Profile, bool) {
	bad := false
	for _, d := range check.File(file, data, b.version) {
		at := agentdef.Pos{File: file, Line: d.Line, Column: d.Column}
		msg := fmt.Sprintf("[%s] %s", d.Code, d.Message)
		if d.IsFatal() {
			bad = true
			b.errorf(at, d.Path, d.Hint, "%s", msg)
		} else {
			b.warnf(at, d.Path, d.Hint, "%s", msg)
		}
	}
	if bad {
		return nil, false
	}
	p, _ := profile.Decode(file, data, b.version)
	if p == nil {
		return nil, false
	}
	if id := strings.TrimSpace(p.ID); id != ref.Profile {
		b.errorf(agentdef.Pos{File: file, Line: idLine(data)}, "id", fmt.Sprintf("rename the file to %s/%s.yaml and name %q, or set id: %s", ProfilesDir, id, id, ref.Profile),
			"provider profile %s has id %q, not %q: the runner imports it under its id, so the agent's provider would not find it", file, id, ref.Profile)
		return nil, false
	}
	return p, true
}

// projectProfiles returns the ids (file base names) of the project's
// profiles/*.yaml, for did-you-mean hints, and the reader of a profile
// file: load, or, without a project file system, one that finds none.
func projectProfiles(fsys fs.FS, load fragmentLoader) ([]string, fragmentLoader) {
	if fsys == nil {
		return nil, func(string) ([]byte, error) { return nil, fs.ErrNotExist }
	}
	names, _ := fs.Glob(fsys, ProfilesDir+"/*.yaml")
	ids := make([]string, 0, len(names))
	for _, n := range names {
		ids = append(ids, strings.TrimSuffix(path.Base(n), ".yaml"))
	}
	return ids, load
}

// leastPrivilege holds one provider layer to the agent's tier, which its
// tools and sandbox declarations decide: a profile never raises the tier
// and never grants more than it. The layer needs tier network for any
// endpoint, and tier full for an endpoint that can write (access
// read-write or full, a rule allowing a method other than GET, HEAD or
// OPTIONS unless it is a GraphQL query or git's upload-pack POST, or an endpoint OpenShell does not
// inspect at L7, which passes any bytes), the same arithmetic as declared
// endpoints (needEndpoint). The agent's model channel is exempt, as the
// runtime baseline is: an endpoint whose host is, or as a wildcard covers,
// a model API host of the agent's runtime needs no tier; a wildcard that
// covers more than that host is a warning, since the layer then reaches
// every host it matches. One error per layer names its most demanding
// endpoint.
func (b *builder) leastPrivilege(l ProviderLayer, np openshell.NetworkPolicy, tier policycue.Tier) {
	worst, worstRank := -1, tier.Rank()
	var worstNeed policycue.Tier
	var worstWhat string
	for i, ep := range np.Endpoints {
		need, what := endpointNeed(ep)
		if model, exact := b.modelChannel(ep.Host); model {
			if !exact && need == policycue.TierFull {
				b.warnf(endpointPos(l, ep), "endpoints", "narrow the host to the model API (for Vertex AI, {{GCP_REGION}}-aiplatform.googleapis.com)",
					"provider %s: %s on %s covers the agent's model API and every other host it matches (layer %s)", l.Name, what, ep.Host, l.Key)
			}
			continue
		}
		if need.Rank() > worstRank {
			worst, worstRank, worstNeed, worstWhat = i, need.Rank(), need, what
		}
	}
	if worst < 0 {
		return
	}
	ep := np.Endpoints[worst]
	b.errorf(l.Pos, "sandbox.providers",
		fmt.Sprintf("name a narrower profile, or give the agent the tool that needs it: the tier follows the tools, never the profiles (the endpoint is at %s)", endpointPos(l, ep)),
		"provider %s grants %s on %s:%d, which needs tier %s; the agent's tools and declarations imply tier %s, and a provider profile never grants more (least privilege)",
		l.Name, worstWhat, ep.Host, endpointPort(ep), worstNeed, tier)
}

// layerOf returns the provider layer under the network policy key of the
// agent's composed policy (false for the agent's own keys).
func (c *Compiled) layerOf(key string) (ProviderLayer, bool) {
	if c == nil || !profile.IsProviderRuleName(key) {
		return ProviderLayer{}, false
	}
	for _, l := range c.Providers {
		if l.Key == key {
			return l, true
		}
	}
	return ProviderLayer{}, false
}

// cite is profile.Layer.Cite for this layer: the wording policy test and
// explain use too, with the deciding element's place in the profile.
func (l ProviderLayer) cite(eff *openshell.Policy, path string) string {
	pl := profile.Layer{Key: l.Key, Provider: l.Name, ProfileID: l.Profile, File: l.File, Builtin: l.Builtin}
	if l.prof != nil {
		pl.File = l.prof.File
	}
	return pl.Cite(eff, path)
}

// narrowHint is the advice for a grant of the layer the agent did not
// want: a project profile narrowing it, or dropping the provider.
func (l ProviderLayer) narrowHint() string {
	if l.Builtin {
		return fmt.Sprintf("write a narrower project profile %s/%s.yaml (it replaces the built-in %s), or drop the provider %s at %s",
			ProfilesDir, l.Profile, l.Profile, l.Name, l.Pos)
	}
	return fmt.Sprintf("narrow the profile %s, or drop the provider %s at %s", l.File, l.Name, l.Pos)
}

// endpointPos is where a layer endpoint is written: its profile line, or
// where the agent named the provider.
func endpointPos(l ProviderLayer, ep openshell.Endpoint) agentdef.Pos {
	if len(ep.From) > 0 && ep.From[0].Line > 0 {
		return agentdef.Pos{File: ep.From[0].File, Line: ep.From[0].Line, Column: ep.From[0].Column}
	}
	return l.Pos
}

// endpointNeed is the tier one layer endpoint needs, with what decided it.
func endpointNeed(ep openshell.Endpoint) (policycue.Tier, string) {
	switch {
	case ep.Protocol == "" || ep.Protocol == "tcp":
		return policycue.TierFull, "uninspected (L4) access"
	case ep.Access == openshell.AccessReadWrite || ep.Access == openshell.AccessFull:
		return policycue.TierFull, "access " + ep.Access
	}
	for _, r := range ep.Rules {
		if !ruleReads(r) && !gitFetch(r.Allow) {
			return policycue.TierFull, ruleLabel(r.Allow)
		}
	}
	return policycue.TierNetwork, "read access"
}

// gitFetch reports whether a REST rule allows git's smart-HTTP fetch,
// which POSTs to .../git-upload-pack and only reads (the catalog marks
// such rules Reads); a push is git-receive-pack.
func gitFetch(m openshell.Match) bool {
	return m.OperationType == "" && m.Method == "POST" && strings.HasSuffix(m.Path, "/git-upload-pack")
}

func endpointPort(ep openshell.Endpoint) int {
	if ep.Port == 0 && len(ep.Ports) > 0 {
		return ep.Ports[0]
	}
	return ep.Port
}

// modelChannel reports whether host is a model API host of the agent's
// runtime (exact), or a wildcard host that covers one.
func (b *builder) modelChannel(host string) (model, exact bool) {
	if b.modelAPIHost(host) {
		return true, true
	}
	suffix, deep, ok := wildcardSuffix(host)
	if !ok {
		return false, false
	}
	for _, h := range b.modelAPIHosts() {
		rest, under := strings.CutSuffix(h, "."+suffix)
		if under && rest != "" && (deep || !strings.Contains(rest, ".")) {
			return true, false
		}
	}
	return false, false
}

// wildcardSuffix splits a host with a leading wildcard label: "*.a.b" is
// any one label under a.b, "**.a.b" (deep) any number of them; false for
// a host without one.
func wildcardSuffix(host string) (suffix string, deep, ok bool) {
	if suffix, ok := strings.CutPrefix(host, "**."); ok {
		return suffix, true, true
	}
	suffix, ok = strings.CutPrefix(host, "*.")
	return suffix, false, ok
}

// modelAPIHosts lists the model API hosts of the agent's runtime (every
// provider), host-label placeholders given their example values.
func (b *builder) modelAPIHosts() []string {
	var hosts []string
	for _, prov := range b.cat.Runtimes[b.runtime].Providers {
		for _, name := range prov.Profiles {
			for _, ep := range b.cat.Profiles[name].Endpoints {
				h := ep.Host
				if strings.Contains(h, "{{") {
					out, _, err := placeholder.Expand(h, placeholder.FieldHostLabel, placeholder.Examples())
					if err != nil {
						continue
					}
					h = out
				}
				hosts = append(hosts, h)
			}
		}
	}
	return hosts
}

// providerSources adds the project profile files to an agent's sources:
// the manifest pins them and the image carries them for the runner to
// import.
func providerSources(sources []string, layers []ProviderLayer) []string {
	for _, l := range layers {
		if l.File != "" && !slices.Contains(sources, l.File) {
			sources = append(sources, l.File)
		}
	}
	sort.Strings(sources)
	return sources
}

// manifestProviders is the manifest's record of an agent's providers, in
// attachment order. A project profile's file is its copy in the bundle,
// profiles/<id>.yaml relative to the policies directory (bundleProfile).
func manifestProviders(layers []ProviderLayer) []bundle.ProviderRef {
	if len(layers) == 0 {
		return nil
	}
	out := make([]bundle.ProviderRef, 0, len(layers))
	for _, l := range layers {
		ref := bundle.ProviderRef{Name: l.Name, Profile: l.Profile, Builtin: l.Builtin, Credentials: l.Credentials}
		if !l.Builtin {
			ref.File = bundleProfile(l)
		}
		out = append(out, ref)
	}
	return out
}

// bundleProfile is where a project profile's copy goes in the bundle,
// relative to the policies directory: profiles/<id>.yaml, the layout
// bundle.Open and the runner read.
func bundleProfile(l ProviderLayer) string { return path.Join(ProfilesDir, l.Profile+".yaml") }

// pinProfiles copies the agent's project profiles into the bundle (files,
// relative to the policies directory) and pins them in the manifest's
// profiles, sorted by path: the runner imports exactly these bytes, and
// the manifest digest, which the image signature covers, pins them.
func pinProfiles(m *bundle.Manifest, layers []ProviderLayer, files map[string][]byte) {
	for _, l := range layers {
		if l.Builtin {
			continue
		}
		name := bundleProfile(l)
		if _, done := files[name]; done {
			continue
		}
		files[name] = l.data
		m.Profiles = append(m.Profiles, bundle.SourceFile{Path: name, SHA256: bundle.SHA256Hex(l.data)})
	}
	sort.Slice(m.Profiles, func(i, j int) bool { return m.Profiles[i].Path < m.Profiles[j].Path })
}

// idLine is the line of a profile's top-level id key (1 when not found).
func idLine(data []byte) int {
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "id:") {
			return i + 1
		}
	}
	return 1
}

// makeSubdirs creates the subdirectories of the output files (profiles/)
// inside root.
func makeSubdirs(root *os.Root, names []string) error {
	for _, n := range names {
		if d := path.Dir(n); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}

// staleProfiles lists the profile copies in the output's profiles/
// directory that out does not contain (an agent stopped naming the
// profile): the directory is the compiler's, like the policies beside it.
// Only regular files count.
func staleProfiles(root *os.Root, out *Output) []string {
	entries, err := fs.ReadDir(root.FS(), ProfilesDir)
	if err != nil {
		return nil // no profiles/ directory
	}
	var stale []string
	for _, e := range entries {
		n := path.Join(ProfilesDir, e.Name())
		if _, ok := out.Files[n]; !ok && e.Type().IsRegular() {
			stale = append(stale, n)
		}
	}
	return stale
}
