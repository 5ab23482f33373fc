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
	v, verr := openshell.NormalizeVersion(version)
	var profiles []*profile.Profile
	idx := map[*profile.Profile]int{}
	for i, in := range inputs {
		p, diags := profile.Decode(in.File, in.Data, version)
		out[i] = validate.FileReport{File: in.File, Diagnostics: diags}
		// OpenShell stops at a profile that does not deserialize
		// (parse_profile_yaml fails): no set check, no layer.
		if p == nil || verr != nil || openshell.HasErrors(diags) {
			continue
		}
		p.Builtin = profile.IsBuiltinBytes(strings.TrimSpace(p.ID), in.Data)
		profiles = append(profiles, p)
		idx[p] = i
	}
	byFile := map[int][]openshell.Diagnostic{}
	for _, d := range profile.CheckSet(profiles, v) {
		for p, i := range idx {
			if p.File == d.File {
				byFile[i] = append(byFile[i], d)
			}
		}
	}
	for _, p := range profiles {
		i := idx[p]
		byFile[i] = append(byFile[i], layerDiagnostics(p, v, byFile[i])...)
	}
	for i := range out {
		out[i].Diagnostics = append(out[i].Diagnostics, byFile[i]...)
		openshell.SortDiagnostics(out[i].Diagnostics)
	}
	return out
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
	refused := map[string]bool{}
	for _, d := range prior {
		if d.Severity == openshell.SeverityError && (strings.HasPrefix(d.Path, "endpoints[") || strings.HasPrefix(d.Path, "binaries[")) {
			refused[d.Path[:strings.IndexByte(d.Path, ']')+1]] = true
		}
	}
	prefix := "network_policies." + key
	var out []openshell.Diagnostic
	for _, d := range validate.Policy(pol, version) {
		if d.Path != prefix && !strings.HasPrefix(d.Path, prefix+".") {
			continue
		}
		switch d.Code {
		case validate.CodeReservedKey, validate.CodeStaticOmitted:
			continue
		case validate.CodeNoEndpoints, validate.CodeNoBinaries:
			if len(p.Endpoints) == 0 {
				continue
			}
		}
		path := profilePath(strings.TrimPrefix(strings.TrimPrefix(d.Path, prefix), "."))
		if i := strings.IndexByte(path, ']'); i > 0 && refused[path[:i+1]] {
			continue
		}
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
		out = append(out, d)
	}
	return out
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
