package check

import (
	"errors"
	"regexp"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
)

// ErrComposition is returned when the composed policy is one OpenShell
// refuses (Composed found an error).
var ErrComposition = errors.New("composed policy refused")

// Composed validates the composed policy c as the gateway does when a
// provider is attached (validate_candidate_effective_policy, grpc/policy.rs
// :1155-1164 @ v0.0.111: the endpoint ambiguity check over base and layers)
// and as the supervisor loads it, and returns the findings that concern a
// layer, at the profile's lines: here an error is an attachment OpenShell
// refuses. The reserved keys themselves are the gateway's (no OSP020).
//
// From v0.0.110 it also reports the endpoints the gateway stamps
// provider_credentialed that would carry credentials uninspected (OPP033,
// uninspectedStamped), the policy's own endpoints included: those are
// refused even when no layer was composed.
func Composed(c *profile.Composed, version string) []openshell.Diagnostic {
	out := uninspectedStamped(c, version)
	if len(c.Layers) == 0 {
		openshell.SortDiagnostics(out)
		return out
	}
	for _, d := range validate.Policy(c.Policy, version) {
		layer, rest, ok := findingLayer(c, d)
		if !ok || omitted(d.Code, len(c.Policy.NetworkPolicies[layer.Key].Endpoints) == 0) {
			continue
		}
		d.File = layer.File
		d.Path = profilePath(rest)
		if p := layer.Profile(); p != nil {
			d.Line, d.Column = p.Position(d.Path)
		}
		d.Message += " (layer " + layer.Key + ", provider " + profile.EscapeControls(layer.Provider) + ")"
		out = append(out, d)
	}
	openshell.SortDiagnostics(out)
	return out
}

// findingLayer returns the layer d concerns and d's path within it. An
// ambiguity between the policy's own endpoint and a layer's is reported at
// the layer's endpoint.
func findingLayer(c *profile.Composed, d openshell.Diagnostic) (profile.Layer, string, bool) {
	if layer, rest, ok := layerPath(c, d.Path); ok {
		return layer, rest, true
	}
	if d.Code != validate.CodeAmbiguousEndpoints {
		return profile.Layer{}, "", false
	}
	m := layerEndpointRE.FindStringSubmatch(d.Message)
	if m == nil {
		return profile.Layer{}, "", false
	}
	layer, found := c.LayerOf(m[1])
	return layer, "endpoints[" + m[2] + "]", found
}

// layerPath splits network_policies.<layer key>.rest.
func layerPath(c *profile.Composed, p string) (profile.Layer, string, bool) {
	for _, l := range c.Layers {
		if rest, ok := cutKey(p, "network_policies."+l.Key); ok {
			return l, rest, true
		}
	}
	return profile.Layer{}, "", false
}

// layerEndpointRE finds "<layer key>.endpoints[N]" in an ambiguity message.
var layerEndpointRE = regexp.MustCompile(`(_provider_[a-z0-9_]+)\.endpoints\[(\d+)\]`)
