package profile

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// ErrInvalidProfile is returned when a named profile has error diagnostics.
var ErrInvalidProfile = errors.New("invalid provider profile")

// Resolve turns one reference into an attachment. A reference is
// [PROVIDER=]PROFILE: PROVIDER names the provider (and so its layer key,
// default the profile id); PROFILE is a file (it contains a '/' or ends in
// .yaml, .yml or .json), read with read, or else the id of an OpenShell
// built-in profile at version. The profile is decoded and checked as
// import checks it (Decode, CheckSet): an error diagnostic fails with
// ErrInvalidProfile and every error's file:line.
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
		p.Builtin = !strings.Contains(target, "/") && path.Ext(target) == "" || IsBuiltinBytes(strings.TrimSpace(p.ID), data)
		diags = append(diags, CheckSet([]*Profile{p}, v)...)
	}
	if err := openshell.DiagnosticsError(diags); err != nil || p == nil {
		if err == nil {
			err = fmt.Errorf("%s: not a provider profile", name)
		}
		return Attachment{}, fmt.Errorf("%w %s: %w", ErrInvalidProfile, name, err)
	}
	return Attachment{Provider: provider, Profile: p}, nil
}
