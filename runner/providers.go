package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
)

// Providers v2 (docs/providers.md): an agent whose manifest entry lists
// providers gets them as OpenShell provider profiles. Before the sandbox
// exists the runner imports the bundle's project profiles, turns on the
// gateway setting providers_v2_enabled, and creates each provider from the
// job's secrets; `sandbox create --provider` attaches them in order; after
// creation the effective policy must equal the compiled policy plus exactly
// the `_provider_*` layers profile.Compose derives (confirmComposed).

// versionCredentialBinding is the first OpenShell release whose sandbox
// proxy resolves a provider's static credential only at its profile's
// endpoints (commit 0120535ef, "bind static credentials to provider
// endpoints" #2510; docs/sandboxes/providers-v2.mdx:68-70 @ v0.0.111). Before
// it a credential placeholder resolves at every endpoint the effective
// policy allows, so a job's secret given to one profile would reach the
// hosts of every other layer: the runner refuses to create providers there.
const versionCredentialBinding = "v0.0.103"

// settingProvidersV2 is PROVIDERS_V2_ENABLED_KEY, a global bool setting,
// false when unset (openshell-core settings.rs:77,114 @ v0.0.83 and
// v0.0.111; bool_setting_enabled, grpc/policy.rs:1018-1020 @ v0.0.83,
// 1112-1124 @ v0.0.111).
const settingProvidersV2 = "providers_v2_enabled"

// composition is what the providers step prepared for the sandbox: the
// attachments in order and the effective policy they must yield.
type composition struct {
	refs     []bundle.ProviderRef
	attached []profile.Attachment
}

// names returns the provider names in attachment order.
func (c *composition) names() []string {
	out := make([]string, 0, len(c.refs))
	for _, r := range c.refs {
		out = append(out, r.Name)
	}
	return out
}

// profileProviders prepares the agent's providers on the gateway: it checks
// that the gateway can bind their credentials, resolves every profile
// offline, imports the project profiles, turns providers_v2_enabled on and
// creates each provider from the job's secrets.
func (x *run) profileProviders(ctx context.Context) error {
	refs := x.agent.Entry.Providers
	if len(x.r.opts.Providers) > 0 {
		return fmt.Errorf("%w: agent %s attaches provider profiles (%s); --provider cannot be added to it: the layers of those providers could not be confirmed",
			ErrPreflight, x.agent.Name, strings.Join((&composition{refs: refs}).names(), ", "))
	}
	if !x.d.supports(versionCredentialBinding) {
		return fmt.Errorf("%w: OpenShell %s does not bind a provider's credentials to its profile endpoints (from %s); refusing to give the job's secrets to providers %s",
			ErrPreflight, x.d.version, versionCredentialBinding, strings.Join((&composition{refs: refs}).names(), ", "))
	}
	c, err := x.resolveProviders(refs)
	if err != nil {
		return err
	}
	// Every credential is checked before the gateway is changed.
	for i, ref := range c.refs {
		if err := x.checkCredential(ref, c.attached[i].Profile); err != nil {
			return err
		}
	}
	if err := x.importProfiles(ctx, c); err != nil {
		return err
	}
	if err := x.d.SettingSetGlobal(ctx, settingProvidersV2, "true"); err != nil {
		return fmt.Errorf("%w: setting %s on the gateway (without it OpenShell composes no provider layer): %w",
			ErrPreflight, settingProvidersV2, errOr(ctxErr(ctx), err))
	}
	x.logf("gateway setting %s=true: provider layers are composed", settingProvidersV2)
	for i, ref := range c.refs {
		if err := x.createProfileProvider(ctx, ref, c.attached[i].Profile); err != nil {
			return err
		}
	}
	x.composed = c
	return nil
}

// maskProviderSecrets masks, and announces to the CI, the values of every
// variable a provider of the agent may take its credentials from (the
// manifest's lists and the env_vars of its profiles' credentials), before
// the first line that could print one (a placeholder value).
func (x *run) maskProviderSecrets() {
	version := x.r.project.Manifest.OpenShellVersion
	var names []string
	for _, ref := range x.agent.Entry.Providers {
		names = append(names, ref.Credentials...)
		var p *profile.Profile
		if ref.Builtin {
			p, _ = profile.Builtin(ref.Profile, version)
		} else if data, ok := x.agent.Profiles[ref.File]; ok {
			p, _ = profile.Decode(ref.File, data, version)
		}
		if p != nil {
			for _, cr := range p.Credentials {
				names = append(names, cr.EnvVars...)
			}
		}
	}
	for _, k := range names {
		if v, ok := x.r.opts.Env.Getenv(k); ok && v != "" {
			x.mask.Add(v)
			x.rep.Mask(v)
		}
	}
}

// resolveProviders decodes and validates every referenced profile at the
// gateway's version: built-ins from OpenShell's embedded catalog, project
// profiles from the bytes the manifest pins. A project profile whose id is a
// built-in (or an alias OpenShell rewrites) is refused, as the gateway
// refuses its import.
func (x *run) resolveProviders(refs []bundle.ProviderRef) (*composition, error) {
	c := &composition{refs: refs}
	for _, ref := range refs {
		a, err := x.resolveProvider(ref)
		if err != nil {
			return nil, err
		}
		c.attached = append(c.attached, a)
	}
	return c, nil
}

// resolveProvider decodes and validates the profile of one provider
// reference; a project profile's id is checked before and after decoding.
func (x *run) resolveProvider(ref bundle.ProviderRef) (profile.Attachment, error) {
	if !dnsLabel.MatchString(ref.Name) {
		return profile.Attachment{}, fmt.Errorf("%w: provider %q: name must be lower-case letters, digits and '-'", ErrPolicy, ref.Name)
	}
	target := ref.Profile
	if !ref.Builtin {
		if err := checkImportable(ref.Profile, ref.File, x.d.version); err != nil {
			return profile.Attachment{}, err
		}
		target = path.Join("policies", ref.File)
	}
	a, err := profile.Resolve(ref.Name+"="+target, x.profileBytes, x.d.version)
	if err != nil {
		return profile.Attachment{}, fmt.Errorf("%w: provider %s: %w", ErrPolicy, ref.Name, err)
	}
	if a.Profile.ID != ref.Profile {
		return profile.Attachment{}, fmt.Errorf("%w: provider %s: profile %s has id %q, the manifest says %q", ErrPolicy, ref.Name, target, a.Profile.ID, ref.Profile)
	}
	if !ref.Builtin {
		if err := checkImportable(a.Profile.ID, ref.File, x.d.version); err != nil {
			return profile.Attachment{}, err
		}
	}
	return a, nil
}

// profileBytes reads a project profile from the bytes the manifest pins
// (name is policies/FILE), never from the file system.
func (x *run) profileBytes(name string) ([]byte, error) {
	if data, ok := x.agent.Profiles[strings.TrimPrefix(name, "policies/")]; ok {
		return data, nil
	}
	return nil, fmt.Errorf("%s: %w", name, os.ErrNotExist)
}

// checkImportable refuses a project profile id the gateway would refuse to
// import (a built-in: profile_conflict_diagnostics, grpc/provider.rs
// :1626-1643 @ v0.0.83, :2925-2946 @ v0.0.111) or never compose (an alias).
func checkImportable(id, file, version string) error {
	switch {
	case profile.IsBuiltinID(id, version):
		return fmt.Errorf("%w: provider profile %s: id %q is an OpenShell built-in profile at %s; the gateway refuses to import it (rename the profile, or attach the built-in)",
			ErrPolicy, file, id, version)
	case profile.IsAlias(id):
		return fmt.Errorf("%w: provider profile %s: id %q is an alias OpenShell rewrites to a built-in type; its layer would come from that built-in (rename the profile)",
			ErrPolicy, file, id)
	}
	return nil
}

// importProfiles imports the project profiles the gateway does not hold
// yet, from a directory holding exactly the verified bytes (`provider
// profile import --from DIR`). One the gateway already holds (an earlier run
// imported it) must be the same profile: the gateway refuses to import it
// again ("custom provider profile '<id>' already exists", a whole batch
// refused at once).
func (x *run) importProfiles(ctx context.Context, c *composition) error {
	todo := c.customProfiles()
	if len(todo) == 0 {
		return nil
	}
	var want []string
	for _, i := range todo {
		want = append(want, c.refs[i].Profile)
	}
	held, err := x.d.ProviderProfiles(ctx, x.d.version, want)
	if err != nil {
		return fmt.Errorf("%w: listing the gateway's provider profiles: %w", ErrPreflight, errOr(ctxErr(ctx), err))
	}
	dir := filepath.Join(x.tmp, "profiles")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%w: %w", ErrSandbox, err)
	}
	ids, err := x.stageProfiles(dir, c, todo, held)
	if err != nil || len(ids) == 0 {
		return err
	}
	if err := x.d.ProfileImport(ctx, dir); err != nil {
		return fmt.Errorf("%w: importing provider profiles %s: %w", ErrPolicy, strings.Join(ids, ", "), errOr(ctxErr(ctx), err))
	}
	x.logf("imported provider profiles %s", strings.Join(ids, ", "))
	return nil
}

// customProfiles returns the indexes of the project (not built-in)
// profiles the composition attaches, the first attachment of each.
func (c *composition) customProfiles() []int {
	var todo []int
	for i, ref := range c.refs {
		if !ref.Builtin && !slices.ContainsFunc(todo, func(j int) bool { return c.refs[j].Profile == ref.Profile }) {
			todo = append(todo, i)
		}
	}
	return todo
}

// stageProfiles writes into dir the verified bytes of the profiles todo
// the gateway does not hold (held), and returns their ids. One it holds
// must be the same profile.
func (x *run) stageProfiles(dir string, c *composition, todo []int, held map[string]*profile.Profile) ([]string, error) {
	var ids []string
	for _, i := range todo {
		ref, want := c.refs[i], c.attached[i].Profile
		if have, ok := held[ref.Profile]; ok {
			if d := profileDifference(want, have); d != "" {
				return nil, fmt.Errorf("%w: the gateway already holds a provider profile %s that differs from the bundle's %s at %s; the runner does not overwrite it",
					ErrPolicy, ref.Profile, ref.File, d)
			}
			x.logf("provider profile %s: already on the gateway, the same as %s", ref.Profile, ref.File)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, path.Base(ref.File)), x.agent.Profiles[ref.File], 0o600); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSandbox, err)
		}
		ids = append(ids, ref.Profile)
	}
	return ids, nil
}

// profileDifference compares two profiles as what a provider of their type
// gets: the layer they compose into and their credentials. It returns the
// first differing path, "" when none.
func profileDifference(a, b *profile.Profile) string {
	layer := func(p *profile.Profile) *openshell.Policy {
		return &openshell.Policy{NetworkPolicies: map[string]openshell.NetworkPolicy{"layer": p.NetworkPolicy("layer")}}
	}
	if d := openshell.Difference(layer(a), layer(b)); d != "" {
		return strings.Replace(d, "network_policies.layer.", "", 1)
	}
	ca, _ := json.Marshal(a.Credentials)
	cb, _ := json.Marshal(b.Credentials)
	if string(ca) != string(cb) {
		return "credentials"
	}
	return ""
}

// checkCredential fails when the job sets no credential the provider of
// ref (profile p) can take.
func (x *run) checkCredential(ref bundle.ProviderRef, p *profile.Profile) error {
	if _, err := credentialEnv(ref, p, x.r.opts.Env.Getenv); err != nil {
		return x.credentialError(ref, err)
	}
	return nil
}

// credentialError is ErrCredential for the provider of ref, naming the
// agent that attaches it.
func (x *run) credentialError(ref bundle.ProviderRef, err error) error {
	return fmt.Errorf("%w: provider %s of agent %s (sandbox.providers in %s): %w", ErrCredential, ref.Name, x.agent.Name, x.agent.Entry.Source, err)
}

// createProfileProvider creates one provider of the profile's type from the
// job's secrets: every value reaches openshell in its environment, named by
// a bare `--credential KEY` (parse_credential_pairs reads it from the
// environment: run.rs:4062-4096 @ v0.0.83, commands/common.rs:930-964 @
// v0.0.111), never in argv.
func (x *run) createProfileProvider(ctx context.Context, ref bundle.ProviderRef, p *profile.Profile) error {
	keys, err := credentialEnv(ref, p, x.r.opts.Env.Getenv)
	if err != nil {
		return x.credentialError(ref, err)
	}
	vals := make([]string, 0, len(keys))
	for _, k := range keys {
		v, _ := x.r.opts.Env.Getenv(k)
		x.mask.Add(v)
		x.rep.Mask(v)
		vals = append(vals, k+"="+v)
	}
	if err := x.d.ProviderCreate(ctx, Provider{Name: ref.Name, Type: ref.Profile, CredentialEnv: keys}, vals); err != nil {
		return fmt.Errorf("%w: provider %s: %w", ErrSandbox, ref.Name, errOr(ctxErr(ctx), err))
	}
	x.logf("provider %s (profile %s): credentials from %s", ref.Name, ref.Profile, strings.Join(keys, ", "))
	return nil
}

// credentialEnv picks the environment variables that hold a provider's
// credentials: the manifest's list (every one must be set), else, for each
// credential of the profile, the first of its env_vars that is set (a
// required credential with none set is an error). OpenShell's CLI refuses a
// provider without credentials (missing_credentials_error, run.rs:3351,
// 3512-3521 @ v0.0.111), so none at all is an error here too.
func credentialEnv(ref bundle.ProviderRef, p *profile.Profile, getenv Getenv) ([]string, error) {
	set := func(k string) bool { v, ok := getenv(k); return ok && v != "" }
	if len(ref.Credentials) > 0 {
		return namedCredentials(ref.Credentials, set)
	}
	keys, err := profileCredentials(p, set)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, noCredential(p)
	}
	return keys, nil
}

// noCredential is the error of a profile none of whose credentials is
// set: each credential, the variables that would hold it and its line.
func noCredential(p *profile.Profile) error {
	if len(p.Credentials) == 0 {
		return fmt.Errorf("profile %s (%s) declares no credential and the manifest names none; OpenShell refuses a provider without one", p.ID, p.File)
	}
	var want []string
	for i, cr := range p.Credentials {
		want = append(want, credentialWhere(p, i, cr))
	}
	return fmt.Errorf("no credential is set: %s", strings.Join(want, "; "))
}

// credentialWhere names the variables that hold credential i of p and
// where the profile declares them: "set GH_TOKEN (credential token of
// profile p, profiles/p.yaml:4:15)".
func credentialWhere(p *profile.Profile, i int, cr profile.Credential) string {
	line, col := p.Position(fmt.Sprintf("credentials[%d].env_vars", i))
	vars := strings.Join(cr.EnvVars, " or ")
	if vars == "" {
		vars = "a variable (the profile names none)"
	}
	return fmt.Sprintf("set %s (credential %s of profile %s, %s:%d:%d)", vars, cr.Name, p.ID, p.File, line, col)
}

// namedCredentials checks the manifest's credential variables: names,
// every one set.
func namedCredentials(names []string, set func(string) bool) ([]string, error) {
	var keys []string
	for _, k := range names {
		if !envName.MatchString(k) {
			return nil, fmt.Errorf("credential %q is not an environment variable name", k)
		}
		if !set(k) {
			return nil, fmt.Errorf("credential variable %s is not set: set %s (the provider's credentials in the manifest)", k, k)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// profileCredentials picks, for each credential of the profile, the first
// of its env_vars that is set; a required one with none set is an error.
func profileCredentials(p *profile.Profile, set func(string) bool) ([]string, error) {
	var keys []string
	for n, cr := range p.Credentials {
		i := slices.IndexFunc(cr.EnvVars, set)
		switch {
		case i >= 0:
			keys = append(keys, cr.EnvVars[i])
		case cr.Required:
			return nil, fmt.Errorf("a required credential is not set: %s", credentialWhere(p, n, cr))
		}
	}
	return keys, nil
}

// checkPolicySource refuses, when the agent attaches provider profiles, a
// sandbox whose effective policy is the gateway's global policy
// (policy_source "global"): OpenShell then composes no provider layer
// (grpc/policy.rs:1020 @ v0.0.83, :1122-1124 @ v0.0.111) and the sandbox
// does not run the compiled policy.
func (x *run) checkPolicySource(ctx context.Context, name string) error {
	if x.composed == nil {
		return nil
	}
	src, err := x.d.PolicySource(ctx, name)
	if err != nil {
		return err
	}
	if src == "global" {
		return fmt.Errorf("%w: the sandbox enforces the gateway's global policy, under which OpenShell composes no provider layer; refusing to run without the compiled policy", ErrPolicy)
	}
	return nil
}

// confirmComposed checks, when the agent attaches provider profiles, the
// sandbox's effective policy against the compiled policy plus exactly the
// expected provider layers, computed with profile.Compose from the same
// attachments in the same order. active is the effective policy (`sandbox
// get --policy-only` prints the gateway's effective policy, composed layers
// included: run.rs:1256-1303 @ v0.0.111; the YAML drops
// provider_credentialed, openshell-policy lib.rs:3874 @ v0.0.111). Any
// difference is ErrPolicy, naming its first path.
func (x *run) confirmComposed(name string, active []byte) error {
	if x.composed == nil {
		return nil
	}
	got, err := openshell.Unmarshal(active)
	if err != nil {
		return fmt.Errorf("%w: active policy does not parse: %w", ErrPolicy, err)
	}
	base, err := openshell.Unmarshal(x.policy)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	want := profile.Compose(base, x.composed.attached, profile.Gateway{ProvidersV2Enabled: true})
	if d := openshell.Difference(want.Policy, got); d != "" {
		return fmt.Errorf("%w: the effective policy is not the compiled policy plus the provider layers %s: first difference at %s",
			ErrPolicy, layerKeys(want), d)
	}
	x.logf("sandbox %s: the effective policy is the compiled policy plus provider layers %s", name, layerKeys(want))
	return nil
}

func layerKeys(c *profile.Composed) string {
	keys := make([]string, 0, len(c.Layers))
	for _, l := range c.Layers {
		keys = append(keys, l.Key)
	}
	return strings.Join(keys, ", ")
}

// ProviderProfiles lists the gateway's provider profiles by id: `provider
// list-profiles -o json`, a JSON array of profiles (profiles_to_json,
// openshell-providers profiles.rs:996 @ v0.0.83, :1404 @ v0.0.111;
// provider_list_profiles, run.rs:5055-5081 @ v0.0.83, :3889-3921 @
// v0.0.111). Those whose id is in want are decoded as profiles at version
// (one that does not decode is an error); the others are left alone.
func (d *driver) ProviderProfiles(ctx context.Context, version string, want []string) (map[string]*profile.Profile, error) {
	res, err := d.run(ctx, callOpts{}, "provider", "list-profiles", "-o", "json")
	if err != nil {
		return nil, err
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(res.stdout, &raw); err != nil {
		return nil, fmt.Errorf("decoding `openshell provider list-profiles -o json`: %w", err)
	}
	out := map[string]*profile.Profile{}
	for _, r := range raw {
		var head struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(r, &head) != nil || !slices.Contains(want, head.ID) {
			continue
		}
		p, _ := profile.Decode("gateway profile "+head.ID, r, version)
		if p == nil {
			return nil, fmt.Errorf("`openshell provider list-profiles -o json`: profile %s does not decode", head.ID)
		}
		out[p.ID] = p
	}
	return out, nil
}

// ProfileImport imports every profile file of dir: `provider profile
// import --from DIR` (main.rs:959-967 @ v0.0.83, :1040-1052 @ v0.0.111;
// provider_profile_import, run.rs:5146-5185 @ v0.0.83, :3994-4037 @
// v0.0.111: *.yaml, *.yml and *.json files, all or none imported).
func (d *driver) ProfileImport(ctx context.Context, dir string) error {
	_, err := d.run(ctx, callOpts{}, "provider", "profile", "import", "--from", dir)
	return err
}

// PolicySource reports where the sandbox's effective policy comes from:
// "sandbox" or "global" (policy_source of `policy get NAME -o json`, the
// effective view: run.rs:7160-7190 @ v0.0.83, :6369-6400 @ v0.0.111).
func (d *driver) PolicySource(ctx context.Context, name string) (string, error) {
	res, err := d.run(ctx, callOpts{}, "policy", "get", name, "-o", "json")
	if err != nil {
		return "", err
	}
	var v struct {
		PolicySource string `json:"policy_source"`
	}
	if err := json.Unmarshal(res.stdout, &v); err != nil {
		return "", fmt.Errorf("decoding `openshell policy get -o json`: %w", err)
	}
	if v.PolicySource == "" {
		return "", errors.New("`openshell policy get -o json` has no policy_source")
	}
	return v.PolicySource, nil
}
