package profile

import "strings"

// CanonicalType is the profile id OpenShell looks a provider type up by:
// normalize_provider_type (openshell-providers lib.rs:186-205 @ v0.0.83,
// 188-207 @ v0.0.111), which first tries normalize_inference_provider_type
// (openshell-core inference.rs:219-231 at both tags). ok is false for a type
// OpenShell does not rewrite; it is then looked up as given.
func CanonicalType(t string) (id string, ok bool) {
	switch strings.ToLower(strings.TrimSpace(t)) {
	case "openai", "anthropic", "nvidia", "deepinfra", "aws-bedrock", "codex", "copilot",
		"opencode", "generic", "outlook", "gitlab", "github", "claude-code", "google-cloud", "google-vertex-ai":
		return strings.ToLower(strings.TrimSpace(t)), true
	case "vertex", "vertex-ai", "google-vertex", "gcp-vertex":
		return "google-vertex-ai", true
	case "claude", "claude_code":
		return "claude-code", true
	case "gcp":
		return "google-cloud", true
	case "glab":
		return "gitlab", true
	case "gh":
		return "github", true
	}
	return t, false
}

// IsAlias reports whether OpenShell rewrites id to another profile id
// (CanonicalType): a project profile with such an id is never the one a
// provider of that type composes.
func IsAlias(id string) bool {
	canon, ok := CanonicalType(id)
	return ok && canon != id
}
