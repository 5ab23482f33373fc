package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
)

// builtinIDs lists the ids of the built-in catalog by the first tag that
// ships each set (BUILT_IN_PROFILE_YAMLS in profiles.rs, read at every tag
// v0.0.37..v0.0.111; the set changes at these tags only).
var builtinIDs = []struct {
	since string
	ids   []string
}{
	{"v0.0.37", []string{"anthropic", "claude", "codex", "copilot", "github", "gitlab", "nvidia", "openai", "opencode", "outlook"}},
	{"v0.0.44", []string{"claude-code", "github", "nvidia"}},
	{"v0.0.55", []string{"claude-code", "codex", "copilot", "cursor", "github", "google-vertex-ai", "nvidia", "pypi"}},
	{"v0.0.65", []string{"claude-code", "codex", "copilot", "cursor", "deepinfra", "github", "google-vertex-ai", "nvidia", "pypi"}},
	{"v0.0.69", []string{"aws-bedrock", "claude-code", "codex", "copilot", "cursor", "deepinfra", "github", "google-cloud", "google-vertex-ai", "nvidia", "pypi"}},
	{"v0.0.86", []string{"aws", "aws-bedrock", "aws-s3", "claude-code", "codex", "copilot", "cursor", "deepinfra", "github", "google-cloud", "google-vertex-ai", "nvidia", "pypi"}},
}

// BuiltinIDs returns the ids of OpenShell's built-in profiles at version
// (canonical), sorted; nil before provider profiles exist.
func BuiltinIDs(version string) []string {
	var ids []string
	for _, s := range builtinIDs {
		if semver.Compare(version, s.since) >= 0 {
			ids = s.ids
		}
	}
	return slices.Clone(ids)
}

// IsBuiltinID reports whether id names a built-in profile at version.
func IsBuiltinID(id, version string) bool {
	return slices.Contains(BuiltinIDs(version), id)
}

// embeddedTag picks the catalog tag for version: its own tag when the
// catalog holds it, else none.
func embeddedTag(version string) string {
	for _, t := range catalogTags() {
		if semver.Compare(version, t) == 0 {
			return t
		}
	}
	return ""
}

// Builtin returns the facts of OpenShell's built-in profile id at version
// from the catalog (catalog.go), a fresh copy named after the upstream
// file (openshell:<tag>/providers/<id>.yaml) and marked Builtin. Only the
// catalog's tags (v0.0.83, v0.0.111) are held; another version, or an id
// the release does not ship, is an error.
func Builtin(id, version string) (*Profile, error) {
	tag := embeddedTag(version)
	if tag == "" {
		return nil, fmt.Errorf("the built-in provider catalog holds OpenShell v0.0.83 and v0.0.111, not %s", version)
	}
	if IsBuiltinID(id, tag) {
		for _, e := range catalog() {
			if e.id == id {
				p := e.facts(tag)
				p.File, p.Builtin = "openshell:"+tag+"/providers/"+id+".yaml", true
				return &p, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: OpenShell %s has no built-in provider profile %q (have %v)", ErrNoProfile, version, id, BuiltinIDs(version))
}

// ErrNoProfile is a provider whose type has no profile. OpenShell skips
// such a provider with a warning and composes the sandbox without its layer
// (provider_policy_context_with_catalog, grpc/policy.rs:2284-2296 @
// v0.0.111; profile_provider_policy_layers, grpc/policy.rs:1362-1385 @
// v0.0.83): the sandbox would run a policy other than the one compiled and
// tested, without the access the agent declared. fullsend fails closed
// instead: the reference is refused, naming the provider.
var ErrNoProfile = errors.New("provider type has no profile")

// IsBuiltinProfile reports whether p states the same facts as the built-in
// profile of its id at a catalog tag: a decoded copy of OpenShell's own
// providers/<id>.yaml (its prose aside), which the gateway loads as its
// catalog, not as an import.
func IsBuiltinProfile(p *Profile) bool {
	if p == nil {
		return false
	}
	id := strings.TrimSpace(p.ID)
	for _, tag := range catalogTags() {
		if b, err := Builtin(id, tag); err == nil && SameFacts(p, b) {
			return true
		}
	}
	return false
}

// SameFacts reports whether a and b state the same profile: every field
// but the file, the positions and the prose (descriptions), with an empty
// list the same as none.
func SameFacts(a, b *Profile) bool {
	ja, errA := json.Marshal(factsOf(a))
	jb, errB := json.Marshal(factsOf(b))
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// facts is a profile's comparable content: the JSON of its fields without
// file and prose, plus the rules-present flags JSON leaves out.
type facts struct {
	Profile  Profile
	RulesSet [][2]bool
}

// factsOf returns p's facts (p is not modified).
func factsOf(p *Profile) facts {
	c := *p
	c.File, c.Builtin, c.Description, c.pos = "", false, "", nil
	c.Credentials = slices.Clone(c.Credentials)
	for i := range c.Credentials {
		c.Credentials[i].Description = ""
		if r := c.Credentials[i].Refresh; r != nil {
			rc := *r
			rc.Material = slices.Clone(r.Material)
			for j := range rc.Material {
				rc.Material[j].Description = ""
			}
			c.Credentials[i].Refresh = &rc
		}
	}
	f := facts{Profile: c}
	for _, e := range c.Endpoints {
		f.RulesSet = append(f.RulesSet, [2]bool{e.RulesSet, e.DenyRulesSet})
	}
	return f
}

// BuiltinTags returns the OpenShell tags whose built-in profiles the
// catalog holds, oldest first.
func BuiltinTags() []string { return catalogTags() }
