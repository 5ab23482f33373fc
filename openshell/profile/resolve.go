package profile

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
)

// ErrInvalidProfile is returned when a named profile has error diagnostics.
var ErrInvalidProfile = errors.New("invalid provider profile")

// ErrComposition is returned when the composed policy is one OpenShell
// refuses (CheckComposed found an error).
var ErrComposition = errors.New("composed policy refused")

// Resolve turns one reference into an attachment. A reference is
// [PROVIDER=]PROFILE: PROVIDER names the provider (and so its layer key,
// default the profile id); PROFILE is a file (it contains a '/' or ends in
// .yaml, .yml or .json), read with read, or else the id of an OpenShell
// built-in profile at version. The profile is validated (Validate): an
// error diagnostic fails with ErrInvalidProfile and every error's
// file:line.
func Resolve(ref string, read func(name string) ([]byte, error), version string) (Attachment, error) {
	provider, target, named := strings.Cut(ref, "=")
	if !named || strings.Contains(provider, "/") {
		provider, target = "", ref
	}
	if named && strings.ContainsFunc(provider, isControl) {
		return Attachment{}, fmt.Errorf("provider name %q has control characters", provider)
	}
	target = strings.TrimSpace(target)
	if target == "" {
		return Attachment{}, fmt.Errorf("provider profile reference %q names no profile", ref)
	}
	v, err := openshell.NormalizeVersion(version)
	if err != nil {
		return Attachment{}, err
	}
	var name string
	var data []byte
	switch ext := path.Ext(target); {
	case strings.Contains(target, "/") || ext == ".yaml" || ext == ".yml" || ext == ".json":
		name = target
		if data, err = read(target); err != nil {
			return Attachment{}, fmt.Errorf("reading provider profile: %w", err)
		}
	default:
		if name, data, err = Builtin(target, v); err != nil {
			return Attachment{}, err
		}
	}
	p, diags := Decode(name, data, v)
	if p != nil {
		p.Builtin = !strings.Contains(target, "/") && path.Ext(target) == "" || isBuiltinBytes(strings.TrimSpace(p.ID), data)
		diags = append(diags, checkSet([]*Profile{p}, v)...)
	}
	if err := openshell.DiagnosticsError(diags); err != nil || p == nil {
		if err == nil {
			err = fmt.Errorf("%s: not a provider profile", name)
		}
		return Attachment{}, fmt.Errorf("%w %s: %w", ErrInvalidProfile, name, err)
	}
	return Attachment{Provider: provider, Profile: p}, nil
}

// CheckComposed validates the composed policy as the gateway does when a
// provider is attached (validate_candidate_effective_policy, grpc/policy.rs
// :1155-1164 @ v0.0.111: the endpoint ambiguity check over base and layers)
// and as the supervisor loads it, and returns the findings that concern a
// layer, at the profile's lines: here an error is an attachment OpenShell
// refuses. The reserved keys themselves are the gateway's (no OSP020).
func CheckComposed(c *Composed, version string) []openshell.Diagnostic {
	if len(c.Layers) == 0 {
		return nil
	}
	var out []openshell.Diagnostic
	for _, d := range validate.Policy(c.Policy, version) {
		if d.Code == validate.CodeReservedKey || d.Code == validate.CodeStaticOmitted {
			continue
		}
		layer, rest, ok := c.layerPath(d.Path)
		if !ok {
			// An ambiguity between the policy's own endpoint and a
			// layer's: report it at the layer's endpoint.
			if d.Code != validate.CodeAmbiguousEndpoints {
				continue
			}
			m := layerEndpointRE.FindStringSubmatch(d.Message)
			if m == nil {
				continue
			}
			var found bool
			if layer, found = c.LayerOf(m[1]); !found {
				continue
			}
			rest = "endpoints[" + m[2] + "]"
		}
		if (d.Code == validate.CodeNoEndpoints || d.Code == validate.CodeNoBinaries) && len(c.Policy.NetworkPolicies[layer.Key].Endpoints) == 0 {
			continue
		}
		d.File = layer.File
		d.Path = profilePath(rest)
		if layer.profile != nil {
			d.Line, d.Column = layer.profile.position(d.Path)
		}
		d.Message += " (layer " + layer.Key + ", provider " + escapeControls(layer.Provider) + ")"
		out = append(out, d)
	}
	sortDiagnostics(out)
	return out
}

// layerPath splits network_policies.<layer key>.rest.
func (c *Composed) layerPath(p string) (Layer, string, bool) {
	for _, l := range c.Layers {
		prefix := "network_policies." + l.Key
		if p == prefix {
			return l, "", true
		}
		if rest, ok := strings.CutPrefix(p, prefix+"."); ok {
			return l, rest, true
		}
	}
	return Layer{}, "", false
}

// layerEndpointRE finds "<layer key>.endpoints[N]" in an ambiguity message.
var layerEndpointRE = regexp.MustCompile(`(_provider_[a-z0-9_]+)\.endpoints\[(\d+)\]`)
