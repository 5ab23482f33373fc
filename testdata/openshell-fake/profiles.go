package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"gopkg.in/yaml.v3"
)

// Providers v2 as NVIDIA/OpenShell has them at v0.0.83 and v0.0.111 (both
// tags have every command below; what only v0.0.111 has is noted):
//
//   - `provider profile import (-f FILE | --from DIR) [--global]`
//     (main.rs:957-967 @ v0.0.83, :1039-1052 @ v0.0.111; --global, the
//     platform scope, only at v0.0.111). The CLI reads *.yaml, *.yml and
//     *.json files of DIR, sorted (profile_source_paths, run.rs:4380-4407
//     @ v0.0.111), and the gateway imports all of them or none
//     (handle_import_provider_profiles, grpc/provider.rs:1251 @ v0.0.83,
//     :2393-2450 @ v0.0.111): an id of the built-in catalog is refused ("is
//     built-in and cannot be overwritten", provider.rs:1635-1643 @ v0.0.83;
//     "is managed by source 'builtin' and cannot be overwritten",
//     provider.rs:2936-2946 @ v0.0.111, provider_profile_sources.rs:27), as
//     is one already imported ("custom provider profile '<id>' already
//     exists", provider.rs:1645-1657 @ v0.0.83, :2948-2960 @ v0.0.111). The
//     CLI prints the diagnostics ("  error SOURCE profile=ID field=F MSG",
//     print_profile_diagnostics, run.rs:4458-4481 @ v0.0.111) and fails
//     with "provider profile import failed".
//   - `provider list-profiles -o json`: the catalog and imported profiles as
//     a JSON array (provider_list_profiles, run.rs:5055-5081 @ v0.0.83,
//     :3889-3921 @ v0.0.111; --global only at v0.0.111).
//   - `provider create --name N --type T --credential KEY[=VALUE]...`: KEY
//     alone reads the value from the CLI's environment (parse_credential_
//     pairs, run.rs:4062-4096 @ v0.0.83, commands/common.rs:930-964 @
//     v0.0.111); T is normalize_provider_type's alias (openshell-providers
//     lib.rs:186 @ v0.0.83, :188-207 @ v0.0.111; inference.rs:219-231) or
//     else a profile id the gateway holds ("unsupported provider type or
//     profile: T", run.rs:3438-3462 @ v0.0.111); --global-profile only at
//     v0.0.111.
//   - `sandbox provider attach|detach NAME PROVIDER` (main.rs:1522-1545 @
//     v0.0.83, :1679-1700 @ v0.0.111) and `sandbox create --provider`, in
//     order (ensure_required_providers, run.rs:2608-2616 @ v0.0.111).
//   - Composition (effective_policy_for_source, grpc/policy.rs:1009-1033 @
//     v0.0.83, :1096-1136 @ v0.0.111): only when the global setting
//     providers_v2_enabled is true and no global policy is set; each
//     attached provider whose type has a profile (normalize_provider_type
//     first; none: skipped, policy.rs:2285-2294 @ v0.0.111) adds its
//     profile's endpoints and binaries under provider_rule_name(provider
//     name), suffixed _2, _3... when taken (openshell-policy compose.rs
//     :21-41,58-90, the same file at both tags); one port of ports renders
//     as port (openshell-policy lib.rs:868-873 @ v0.0.111).
//
// This is the fake's own reading of those sources, not package profile's:
// it decodes profiles loosely with yaml.v3 and renders layers through
// openshell.Unmarshal; it takes only the built-in files' bytes from
// package profile. OPENSHELL_FAKE_FAIL=compose-extra makes the gateway
// compose one endpoint more than the profile has; global-policy makes it
// serve a global policy (policy_source "global", nothing composed).

// customProfilesDir holds the imported profiles, STATE/profiles/<id>.json.
func (f *fake) customProfilesDir() string { return filepath.Join(f.state, "profiles") }

// providerAliases is normalize_provider_type with
// normalize_inference_provider_type (see above).
var providerAliases = map[string]string{
	"openai": "openai", "anthropic": "anthropic", "nvidia": "nvidia", "deepinfra": "deepinfra", "aws-bedrock": "aws-bedrock",
	"google-vertex-ai": "google-vertex-ai", "vertex": "google-vertex-ai", "vertex-ai": "google-vertex-ai",
	"google-vertex": "google-vertex-ai", "gcp-vertex": "google-vertex-ai",
	"claude": "claude-code", "claude-code": "claude-code", "claude_code": "claude-code", "codex": "codex", "copilot": "copilot",
	"opencode": "opencode", "gcp": "google-cloud", "google-cloud": "google-cloud", "generic": "generic",
	"gitlab": "gitlab", "glab": "gitlab", "github": "github", "gh": "github", "outlook": "outlook",
}

func (f *fake) tag() string { return "v" + f.versionString() }

// builtinProfile returns the built-in profile id at the fake's version,
// decoded loosely; nil when the catalog has none.
func (f *fake) builtinProfile(id string) map[string]any {
	if !profile.IsBuiltinID(id, f.tag()) {
		return nil
	}
	p, err := profile.Builtin(id, f.tag())
	if err != nil {
		return nil
	}
	// The catalog's facts, in the keys of a profile file: binaries are
	// paths, discovery holds credentials.
	data, err := json.Marshal(p)
	var m map[string]any
	if err != nil || json.Unmarshal(data, &m) != nil {
		return nil
	}
	delete(m, "file")
	delete(m, "builtin")
	bins := []any{}
	for _, b := range p.Binaries {
		bins = append(bins, b.Path)
	}
	m["binaries"] = bins
	if d, ok := m["discovery"]; ok {
		m["discovery"] = map[string]any{"credentials": d}
	}
	return m
}

func (f *fake) customProfile(id string) map[string]any {
	b, err := os.ReadFile(filepath.Join(f.customProfilesDir(), id+".json"))
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// lookupProfile is the gateway's catalog: built-ins, then imported ones.
func (f *fake) lookupProfile(id string) map[string]any {
	if p := f.builtinProfile(id); p != nil {
		return p
	}
	return f.customProfile(id)
}

// profileCmd is `provider profile import` and `provider list-profiles`.
func (f *fake) profileCmd(args []string) int {
	if len(args) > 0 && args[0] == "list-profiles" {
		return f.listProfiles(args[1:])
	}
	if len(args) < 2 || args[0] != "profile" || args[1] != "import" {
		return fail(2, "openshell-fake implements `provider profile import` and `provider list-profiles` only")
	}
	spec := map[string]bool{"-f": true, "--file": true, "--from": true}
	if f.atLeast(0, 0, 111) {
		spec["--global"] = false
	}
	fl, code := parseFlags(args[2:], spec, 0)
	if code != 0 {
		return code
	}
	file, dir := fl.value("-f", "--file"), fl.value("--from")
	if (file == "") == (dir == "") {
		return fail(2, "the following required arguments were not provided: <--file <FILE>|--from <FROM>>")
	}
	paths := []string{file}
	if dir != "" {
		paths = profileFiles(dir)
	}
	if len(paths) == 0 {
		return fail(1, "no provider profile files found")
	}
	return f.importProfiles(paths)
}

// profileFiles lists the *.yaml, *.yml and *.json files of dir, sorted.
func profileFiles(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		switch filepath.Ext(e.Name()) {
		case ".yaml", ".yml", ".json":
			if e.Type().IsRegular() {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	sort.Strings(out)
	return out
}

// importProfiles imports every file or none.
func (f *fake) importProfiles(paths []string) int {
	var diags []string
	loaded := map[string]map[string]any{}
	for _, p := range paths {
		id, m, diag := f.importProfile(p, loaded)
		if diag != "" {
			diags = append(diags, diag)
			continue
		}
		loaded[id] = m
	}
	if len(diags) > 0 {
		fmt.Fprintln(os.Stderr, "Provider profile diagnostics:")
		fmt.Fprintln(os.Stderr, strings.Join(diags, "\n"))
		return fail(1, "provider profile import failed")
	}
	os.MkdirAll(f.customProfilesDir(), 0o700)
	for id, m := range loaded {
		b, _ := json.Marshal(m)
		os.WriteFile(filepath.Join(f.customProfilesDir(), id+".json"), b, 0o600)
	}
	s := "s"
	if len(loaded) == 1 {
		s = ""
	}
	fmt.Printf("Imported %d provider profile%s.\n", len(loaded), s)
	return 0
}

// importProfile reads the profile file p for import: its id and content,
// or the diagnostic line refusing it (unparsable, no id, a built-in id,
// an id already imported or loaded).
func (f *fake) importProfile(p string, loaded map[string]map[string]any) (string, map[string]any, string) {
	data, err := os.ReadFile(p)
	var m map[string]any
	if err == nil {
		err = yaml.Unmarshal(data, &m)
	}
	id, _ := m["id"].(string)
	switch {
	case err != nil || m == nil:
		return "", nil, fmt.Sprintf("  error %s profile=- field=file failed to parse provider profile: %v", p, err)
	case id == "":
		return "", nil, fmt.Sprintf("  error %s profile=- field=id provider profile id is required", p)
	case profile.IsBuiltinID(id, f.tag()) && !f.atLeast(0, 0, 111):
		return "", nil, fmt.Sprintf("  error %s profile=%s field=id provider profile '%s' is built-in and cannot be overwritten", p, id, id)
	case profile.IsBuiltinID(id, f.tag()):
		return "", nil, fmt.Sprintf("  error %s profile=%s field=id provider profile '%s' is managed by source 'builtin' and cannot be overwritten", p, id, id)
	case f.customProfile(id) != nil || loaded[id] != nil:
		return "", nil, fmt.Sprintf("  error %s profile=%s field=id custom provider profile '%s' already exists", p, id, id)
	}
	return id, m, ""
}

// listProfiles prints the catalog and the imported profiles.
func (f *fake) listProfiles(args []string) int {
	spec := map[string]bool{"-o": true, "--output": true}
	if f.atLeast(0, 0, 111) {
		spec["--global"] = false
	}
	fl, code := parseFlags(args, spec, 0)
	if code != 0 {
		return code
	}
	all := []any{}
	for _, id := range profile.BuiltinIDs(f.tag()) {
		if p := f.builtinProfile(id); p != nil {
			all = append(all, p)
		}
	}
	ents, _ := os.ReadDir(f.customProfilesDir())
	for _, e := range ents {
		if p := f.customProfile(strings.TrimSuffix(e.Name(), ".json")); p != nil {
			all = append(all, p)
		}
	}
	if fl.value("-o", "--output") != "json" {
		for _, p := range all {
			fmt.Println(p.(map[string]any)["id"])
		}
		return 0
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return fail(1, "%v", err)
	}
	fmt.Println(string(b))
	return 0
}

// resolveType is the CLI's type resolution for `provider create`.
func (f *fake) resolveType(t string) (string, bool) {
	if canon, ok := providerAliases[strings.ToLower(strings.TrimSpace(t))]; ok {
		return canon, true
	}
	id := strings.TrimSpace(t)
	return id, id != "" && f.lookupProfile(id) != nil
}

// providerRecord is a created provider: STATE/provider-NAME.
type providerRecord struct {
	Type        string   `json:"type"`
	Credentials []string `json:"credentials"` // keys only
}

func (f *fake) providerRecord(name string) (providerRecord, bool) {
	var r providerRecord
	b, err := os.ReadFile(filepath.Join(f.state, "provider-"+name))
	if err != nil || json.Unmarshal(b, &r) != nil {
		return r, false
	}
	return r, true
}

// sandboxProvider is `sandbox provider attach|detach NAME PROVIDER`.
func (f *fake) sandboxProvider(args []string) int {
	if len(args) == 0 || args[0] != "attach" && args[0] != "detach" {
		return fail(2, "openshell-fake implements `sandbox provider attach|detach` only")
	}
	fl, code := parseFlags(args[1:], map[string]bool{}, 2)
	if code != 0 {
		return code
	}
	if len(fl.pos) != 2 {
		return fail(2, "the following required arguments were not provided: <NAME> <PROVIDER>")
	}
	s, code := f.load(fl.pos[0])
	if code != 0 {
		return code
	}
	if args[0] == "attach" {
		return f.attachProvider(s, fl.pos[1])
	}
	return f.detachProvider(s, fl.pos[1])
}

// providerIndex is the index of the last prov among the sandbox's
// providers; -1 when it has none.
func providerIndex(s *sandbox, prov string) int {
	i := -1
	for j, p := range s.Providers {
		if p == prov {
			i = j
		}
	}
	return i
}

// attachProvider is `sandbox provider attach`: the provider must exist
// and not be attached yet.
func (f *fake) attachProvider(s *sandbox, prov string) int {
	if providerIndex(s, prov) >= 0 {
		return fail(1, "provider '%s' is already attached to sandbox '%s'", prov, s.Name)
	}
	if _, ok := f.providerRecord(prov); !ok {
		return fail(1, "provider '%s' not found", prov)
	}
	s.Providers = append(s.Providers, prov)
	f.save(s)
	fmt.Printf("✓ Attached provider %s to sandbox %s\n", prov, s.Name)
	return 0
}

// detachProvider is `sandbox provider detach`: the provider must be
// attached.
func (f *fake) detachProvider(s *sandbox, prov string) int {
	i := providerIndex(s, prov)
	if i < 0 {
		return fail(1, "provider '%s' is not attached to sandbox '%s'", prov, s.Name)
	}
	s.Providers = append(s.Providers[:i], s.Providers[i+1:]...)
	f.save(s)
	fmt.Printf("✓ Detached provider %s from sandbox %s\n", prov, s.Name)
	return 0
}

// ruleName is provider_rule_name (crates/openshell-policy/src/compose.rs:22-41,
// the same lines at v0.0.83 and v0.0.111).
func ruleName(provider string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(provider) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if s := strings.Trim(b.String(), "_"); s != "" {
		return "_provider_" + s
	}
	return "_provider_unnamed"
}

// compose adds the attached providers' layers to p as the gateway does
// (compose_effective_policy, compose.rs:59-75 @ v0.0.83 and v0.0.111).
func (f *fake) compose(p *openshell.Policy, s *sandbox) (*openshell.Policy, int) {
	if f.globalSettings()["providers_v2_enabled"] != "true" || len(s.Providers) == 0 {
		return p, 0
	}
	if _, ok := f.fails["global-policy"]; ok {
		return p, 0
	}
	cp := *p
	cp.NetworkPolicies = map[string]openshell.NetworkPolicy{}
	for k, v := range p.NetworkPolicies {
		cp.NetworkPolicies[k] = v
	}
	for _, name := range s.Providers {
		rec, ok := f.providerRecord(name)
		if !ok {
			return nil, fail(1, "status: FailedPrecondition, message: \"provider '%s' not found\"", name)
		}
		id := rec.Type
		if canon, ok := providerAliases[strings.ToLower(id)]; ok {
			id = canon
		}
		prof := f.lookupProfile(id)
		if prof == nil {
			continue // "provider type has no profile; skipping provider policy layer"
		}
		rule := ruleName(name)
		key := freeKey(cp.NetworkPolicies, rule)
		layer, err := renderLayer(rule, prof)
		if err != nil {
			return nil, fail(1, "provider '%s': profile '%s' does not render: %v (openshell-fake)", name, id, err)
		}
		if _, ok := f.fails["compose-extra"]; ok {
			layer.Endpoints = append(layer.Endpoints, openshell.Endpoint{Host: "unexpected.example.com", Port: 443})
		}
		cp.NetworkPolicies[key] = layer
	}
	return &cp, 0
}

// freeKey is rule, or rule_N with the smallest N from 2 not yet a key
// of policies (unique_provider_rule_key, compose.rs:77-90 @ v0.0.83 and
// v0.0.111).
func freeKey(policies map[string]openshell.NetworkPolicy, rule string) string {
	key := rule
	for n := 2; ; n++ {
		if _, taken := policies[key]; !taken {
			return key
		}
		key = fmt.Sprintf("%s_%d", rule, n)
	}
}

// renderLayer is network_policy_rule(rule) rendered as policy YAML: the
// profile's endpoints (one port of ports becomes port) and binaries.
func renderLayer(rule string, prof map[string]any) (openshell.NetworkPolicy, error) {
	eps := []any{}
	if list, ok := prof["endpoints"].([]any); ok {
		for _, e := range list {
			m, _ := e.(map[string]any)
			cp := map[string]any{}
			for k, v := range m {
				cp[k] = v
			}
			if ports, ok := cp["ports"].([]any); ok && len(ports) == 1 {
				cp["port"] = ports[0]
				delete(cp, "ports")
			}
			eps = append(eps, cp)
		}
	}
	bins := []any{}
	if list, ok := prof["binaries"].([]any); ok {
		for _, b := range list {
			bins = append(bins, map[string]any{"path": b})
		}
	}
	doc := map[string]any{"version": 1, "network_policies": map[string]any{rule: map[string]any{"name": rule, "endpoints": eps, "binaries": bins}}}
	b, err := json.Marshal(doc)
	if err != nil {
		return openshell.NetworkPolicy{}, err
	}
	p, err := openshell.Unmarshal(b)
	if err != nil {
		return openshell.NetworkPolicy{}, err
	}
	return p.NetworkPolicies[rule], nil
}
