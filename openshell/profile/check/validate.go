package check

import (
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
)

// All validates provider profile files as one set, the way
// `openshell provider profile lint --from DIR` does at version: each file
// decoded (profile.Decode), then validate_profile_set over all of them (ids unique
// across the set, a built-in id refused unless the file is the built-in
// itself), then each profile's endpoints as the network policy its layer
// becomes in the composed policy (validate.File, findings mapped back
// to the profile's lines). Reports come in input order, diagnostics sorted
// by position.
func All(inputs []validate.Input, version string) []validate.FileReport {
	out := make([]validate.FileReport, len(inputs))
	var profiles []*profile.Profile
	idx := map[*profile.Profile]int{}
	for i, in := range inputs {
		var p *profile.Profile
		if out[i], p = decodeInput(in, version); p != nil {
			profiles = append(profiles, p)
			idx[p] = i
		}
	}
	v, _ := openshell.NormalizeVersion(version)
	byFile := setDiagnostics(profiles, idx, v)
	for i := range out {
		out[i].Diagnostics = append(out[i].Diagnostics, byFile[i]...)
		openshell.SortDiagnostics(out[i].Diagnostics)
	}
	return out
}

// decodeInput decodes one file and returns its report and the profile,
// nil when it does not deserialize: OpenShell stops there
// (parse_profile_yaml fails), with no set check and no layer. (An
// unsupported version fails every Decode.)
func decodeInput(in validate.Input, version string) (validate.FileReport, *profile.Profile) {
	p, diags := profile.Decode(in.File, in.Data, version)
	rep := validate.FileReport{File: in.File, Diagnostics: diags}
	if p == nil || openshell.HasErrors(diags) {
		return rep, nil
	}
	p.Builtin = profile.IsBuiltinProfile(p)
	return rep, p
}

// setDiagnostics runs validate_profile_set over profiles, then each
// profile's layer check, and returns the findings by input index (idx).
func setDiagnostics(profiles []*profile.Profile, idx map[*profile.Profile]int, version string) map[int][]openshell.Diagnostic {
	byFile := map[int][]openshell.Diagnostic{}
	for _, d := range profile.CheckSet(profiles, version) {
		for p, i := range idx {
			if p.File == d.File {
				byFile[i] = append(byFile[i], d)
			}
		}
	}
	for _, p := range profiles {
		i := idx[p]
		byFile[i] = append(byFile[i], layerDiagnostics(p, version, byFile[i])...)
	}
	return byFile
}

// File validates one profile file (see All).
func File(file string, data []byte, version string) []openshell.Diagnostic {
	return All([]validate.Input{{File: file, Data: data}}, version)[0].Diagnostics
}

// layerDiagnostics validates p's endpoints and binaries as the network
// policy they become under `_provider_<id>` in the composed policy, which
// the gateway and the supervisor check as any policy (validate_candidate_
// effective_policy, grpc/policy.rs:1155-1164 @ v0.0.111; the supervisor's
// load-time validation). Findings keep openshell's OSP codes and take the
// profile's positions; what would be an error there is a trap warning here,
// since the profile itself imports (Composed reports it as an error
// for a sandbox that attaches it). Left out: the reserved key itself (OSP020, the
// gateway's own), the static sections the base policy supplies, findings
// on an endpoint profile lint already refused, and, for a profile without
// endpoints (credentials only, bound by credential_binding), the empty
// layer (grpc/policy.rs:2300-2302 @ v0.0.111 tracks those apart).
func layerDiagnostics(p *profile.Profile, version string, prior []openshell.Diagnostic) []openshell.Diagnostic {
	key := profile.ProviderRuleName(p.ID)
	pol := &openshell.Policy{Version: 1, NetworkPolicies: map[string]openshell.NetworkPolicy{key: p.NetworkPolicy(key)}}
	refused := refusedItems(prior)
	var out []openshell.Diagnostic
	for _, d := range validate.Policy(pol, version) {
		rest, ok := cutKey(d.Path, "network_policies."+key)
		if !ok || omitted(d.Code, len(p.Endpoints) == 0) {
			continue
		}
		path := profilePath(rest)
		if i := strings.IndexByte(path, ']'); i > 0 && refused[path[:i+1]] {
			continue
		}
		out = append(out, layerFinding(d, p, path, key))
	}
	return out
}

// refusedItems returns the endpoints[i] and binaries[i] that have an error
// among prior findings.
func refusedItems(prior []openshell.Diagnostic) map[string]bool {
	refused := map[string]bool{}
	for _, d := range prior {
		if d.Severity == openshell.SeverityError && (strings.HasPrefix(d.Path, "endpoints[") || strings.HasPrefix(d.Path, "binaries[")) {
			refused[d.Path[:strings.IndexByte(d.Path, ']')+1]] = true
		}
	}
	return refused
}

// layerFinding moves d, a finding on p's layer under key, to path in p.
func layerFinding(d openshell.Diagnostic, p *profile.Profile, path, key string) openshell.Diagnostic {
	d.File = p.File
	d.Path = path
	d.Line, d.Column = p.Position(path)
	if d.Severity == openshell.SeverityError {
		// The profile imports (profile lint does not run this check);
		// a sandbox that attaches it fails: a trap for validate, an
		// error for Compose's callers (Composed).
		d.Severity, d.Trap = openshell.SeverityWarning, true
		d.Message += " (composed under " + key + ": the profile imports, but attaching it fails)"
	} else {
		d.Message += " (composed under " + key + ")"
	}
	return d
}

// omitted reports the findings that are no layer's: the reserved key (the
// gateway's own), the static sections the base policy supplies and, for a
// layer without endpoints (noEndpoints), its emptiness.
func omitted(code string, noEndpoints bool) bool {
	switch code {
	case validate.CodeReservedKey, validate.CodeStaticOmitted:
		return true
	case validate.CodeNoEndpoints, validate.CodeNoBinaries:
		return noEndpoints
	}
	return false
}

// cutKey returns the rest of path below prefix ("" for prefix itself).
func cutKey(path, prefix string) (string, bool) {
	if path == prefix {
		return "", true
	}
	return strings.CutPrefix(path, prefix+".")
}

// profilePath maps a path of the lowered layer to the profile field it came
// from (the nested json_rpc and mcp stanzas are flat in a profile).
func profilePath(path string) string {
	for _, r := range []struct{ from, to string }{
		{".json_rpc.max_body_bytes", ".json_rpc_max_body_bytes"},
		{".mcp.max_body_bytes", ".json_rpc_max_body_bytes"},
	} {
		path = strings.Replace(path, r.from, r.to, 1)
	}
	return path
}
