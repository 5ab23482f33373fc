package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
)

// versionStamping is the first release whose gateway stamps endpoints
// provider_credentialed (stamp_provider_credentialed_endpoints appears in
// grpc/policy.rs at v0.0.110).
const versionStamping = "v0.0.110"

// Stamp is one endpoint of the effective policy that the gateway marks
// provider_credentialed: network_policies[Key].endpoints[Index], in the
// scope Scope.
type Stamp struct {
	Key   string
	Index int
	Scope profile.Scope
}

// Stamped returns the endpoints of c's effective policy the gateway marks
// provider_credentialed at version (none before v0.0.110): every endpoint,
// of the policy's own rules and of the layers alike, whose host pattern
// overlaps a credentialed scope's and whose ports meet the scope's (either
// side without ports meets any), by key then index
// (stamp_provider_credentialed_endpoints and
// endpoint_matches_credentialed_scope, grpc/policy.rs:2360-2391 @ v0.0.111).
// The gateway first clears any mark the input carries (:2373-2379); the
// policy model has none to clear.
func Stamped(c *profile.Composed, version string) []Stamp {
	if semver.Compare(version, versionStamping) < 0 || len(c.Scopes) == 0 {
		return nil
	}
	var out []Stamp
	for _, key := range slices.Sorted(maps.Keys(c.Policy.NetworkPolicies)) {
		for i, e := range c.Policy.NetworkPolicies[key].Endpoints {
			for _, s := range c.Scopes {
				if inScope(e, s) {
					out = append(out, Stamp{Key: key, Index: i, Scope: s})
					break
				}
			}
		}
	}
	return out
}

// inScope is endpoint_matches_credentialed_scope: an invalid host pattern
// on either side is no overlap (unwrap_or(false)).
func inScope(e openshell.Endpoint, s profile.Scope) bool {
	if ok, err := glob.HostsOverlap(e.Host, s.Host); err != nil || !ok {
		return false
	}
	ports := e.Ports
	if len(ports) == 0 && e.Port > 0 {
		ports = []int{e.Port}
	}
	return len(ports) == 0 || len(s.Ports) == 0 || slices.ContainsFunc(ports, func(p int) bool { return slices.Contains(s.Ports, p) })
}

// uninspectedStamped reports the stamped endpoints OpenShell's admission
// refuses from v0.0.110: one without a protocol (L4-only) or with
// `tls: skip`, unless it sets allow_uninspected_credentials
// (find_uninspected_credentialed_endpoint and
// validate_uninspected_credentialed_endpoints, grpc/policy.rs:2407-2468 @
// v0.0.111, run on the effective policy at sandbox create and provider
// attach: validate_candidate_sandbox_credential_policy, :1594-1613). The
// endpoints of a credentialed profile's own layer are left out: profile
// validation reports them (OPP033). The gateway stops at the first; every
// one is reported here.
func uninspectedStamped(c *profile.Composed, version string) []openshell.Diagnostic {
	var out []openshell.Diagnostic
	for _, st := range Stamped(c, version) {
		e := c.Policy.NetworkPolicies[st.Key].Endpoints[st.Index]
		mode := uninspectedMode(e)
		layer, inLayer := c.LayerOf(st.Key)
		if mode == "" || inLayer && layer.Credentialed {
			continue
		}
		d := openshell.Diagnostic{Severity: openshell.SeverityError, Code: profile.CodeUninspected,
			Path: fmt.Sprintf("network_policies.%s.endpoints[%d]", st.Key, st.Index),
			Message: fmt.Sprintf("credentialed endpoint '%s:%d' in rule '%s' uses %s; configure L7 inspection or explicitly set allow_uninspected_credentials: true (the gateway stamps it provider_credentialed: its host is in the scope of provider %s's credentials, %s)",
				profile.EscapeControls(e.Host), e.Port, profile.EscapeControls(st.Key), mode, profile.EscapeControls(st.Scope.Provider), profile.EscapeControls(st.Scope.Host)),
			Hint: "give the endpoint a protocol (L7 inspection), set allow_uninspected_credentials: true, or do not attach both"}
		placeStamp(&d, e, layer, inLayer, st.Index)
		out = append(out, d)
	}
	return out
}

// uninspectedMode is the mode a stamped endpoint would lose inspection
// by ("" when it is inspected or opts out).
func uninspectedMode(e openshell.Endpoint) string {
	switch {
	case e.AllowUninspectedCredentials:
		return ""
	case strings.TrimSpace(e.Protocol) == "":
		return "L4-only"
	case strings.EqualFold(strings.TrimSpace(e.TLS), "skip"):
		return "tls: skip"
	}
	return ""
}

// placeStamp points d at the endpoint: a layer's at its profile's line, the
// policy's own at the line its provenance names.
func placeStamp(d *openshell.Diagnostic, e openshell.Endpoint, layer profile.Layer, inLayer bool, index int) {
	switch {
	case inLayer:
		d.File, d.Path = layer.File, fmt.Sprintf("endpoints[%d]", index)
		d.Line, d.Column = 1, 1
		if p := layer.Profile(); p != nil {
			d.Line, d.Column = p.Position(d.Path)
		}
	case len(e.From) > 0:
		d.File, d.Line, d.Column = e.From[0].File, e.From[0].Line, e.From[0].Column
	}
}
