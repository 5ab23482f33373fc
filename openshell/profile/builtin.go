package profile

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"

	"golang.org/x/mod/semver"
)

// builtinFS holds OpenShell's providers/*.yaml at the two supported tags,
// copied byte for byte (builtin/README.md names repository and commit).
//
//go:embed builtin/v0.0.83/*.yaml builtin/v0.0.111/*.yaml
var builtinFS embed.FS

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

// embeddedTag picks the embedded catalog for version: its own tag when
// embedded, else none.
func embeddedTag(version string) string {
	for _, t := range []string{"v0.0.83", "v0.0.111"} {
		if semver.Compare(version, t) == 0 {
			return t
		}
	}
	return ""
}

// Builtin returns the built-in profile id of OpenShell at version (file
// name builtin/<tag>/<id>.yaml) and its bytes. Only the supported tags
// (v0.0.83, v0.0.111) carry the files; another version is an error.
func Builtin(id, version string) (name string, data []byte, err error) {
	tag := embeddedTag(version)
	if tag == "" {
		return "", nil, fmt.Errorf("built-in profiles are embedded for OpenShell v0.0.83 and v0.0.111, not %s", version)
	}
	name = path.Join("builtin", tag, id+".yaml")
	data, err = fs.ReadFile(builtinFS, name)
	if err != nil {
		return "", nil, fmt.Errorf("OpenShell %s has no built-in provider profile %q (have %v)", version, id, BuiltinIDs(version))
	}
	return "openshell:" + tag + "/providers/" + id + ".yaml", data, nil
}

// IsBuiltinBytes reports whether data is, byte for byte (line endings
// aside), the built-in profile id at version or at any embedded tag.
func IsBuiltinBytes(id string, data []byte) bool {
	norm := bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	tags, _ := fs.ReadDir(builtinFS, "builtin")
	names := make([]string, 0, len(tags))
	for _, t := range tags {
		names = append(names, t.Name())
	}
	sort.Strings(names)
	for _, t := range names {
		b, err := fs.ReadFile(builtinFS, path.Join("builtin", t, id+".yaml"))
		if err == nil && bytes.Equal(b, norm) {
			return true
		}
	}
	return false
}
