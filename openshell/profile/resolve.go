package profile

import (
	"errors"
	"fmt"
	"path"
	"slices"
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
	provider, target, err := splitRef(ref)
	if err != nil {
		return Attachment{}, err
	}
	v, err := openshell.NormalizeVersion(version)
	if err != nil {
		return Attachment{}, err
	}
	var p *Profile
	if isFileRef(target) {
		p, err = loadFile(target, read, v)
	} else {
		p, err = builtinChecked(target, v)
	}
	if errors.Is(err, ErrNoProfile) {
		return Attachment{}, fmt.Errorf("provider %s: %w; OpenShell would skip its layer with a warning (grpc/policy.rs:2284-2296 @ v0.0.111), fullsend refuses it (name a built-in id or a profile file)",
			orDefault(provider, target), err)
	}
	if err != nil {
		return Attachment{}, err
	}
	return Attachment{Provider: provider, Profile: p}, nil
}

// splitRef splits [PROVIDER=]PROFILE; a '/' before the '=' makes the whole
// reference the profile (a path).
func splitRef(ref string) (provider, target string, err error) {
	provider, target, named := strings.Cut(ref, "=")
	if !named || strings.Contains(provider, "/") {
		provider, target = "", ref
	}
	if strings.ContainsFunc(provider, isControl) {
		return "", "", fmt.Errorf("provider name %q has control characters", provider)
	}
	if target = strings.TrimSpace(target); target == "" {
		return "", "", fmt.Errorf("provider profile reference %q names no profile", ref)
	}
	return provider, target, nil
}

// isFileRef reports a profile reference that names a file: it contains a
// '/' or ends in .yaml, .yml or .json.
func isFileRef(target string) bool {
	return strings.Contains(target, "/") || slices.Contains([]string{".yaml", ".yml", ".json"}, path.Ext(target))
}

// loadFile reads the profile file target with read, decodes it and checks
// it as import does.
func loadFile(target string, read func(name string) ([]byte, error), version string) (*Profile, error) {
	data, err := read(target)
	if err != nil {
		return nil, fmt.Errorf("reading provider profile: %w", err)
	}
	return decodeChecked(target, data, version)
}

// builtinChecked returns the built-in profile id at version, checked as the
// gateway's catalog is (validate_profile_set); a catalog entry that failed
// would be a defect of the catalog, reported as ErrInvalidProfile.
func builtinChecked(id, version string) (*Profile, error) {
	p, err := Builtin(id, version)
	if err != nil {
		return nil, err
	}
	if err := openshell.DiagnosticsError(CheckSet([]*Profile{p}, version)); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrInvalidProfile, p.File, err)
	}
	return p, nil
}

// decodeChecked decodes the profile name (data) and checks it as import
// does; a file stating a built-in profile's facts is marked Builtin (it is
// OpenShell's own file). An error diagnostic, or a document that is not a
// profile, is ErrInvalidProfile.
func decodeChecked(name string, data []byte, version string) (*Profile, error) {
	p, diags := Decode(name, data, version)
	if p != nil {
		p.Builtin = IsBuiltinProfile(p)
		diags = append(diags, CheckSet([]*Profile{p}, version)...)
	}
	err := openshell.DiagnosticsError(diags)
	if err == nil && p == nil {
		err = fmt.Errorf("%s: not a provider profile", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrInvalidProfile, name, err)
	}
	return p, nil
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
