package forge

import "github.com/fullsend-ai/agent-sandbox/secretscan"

// ScanSecrets returns the kind of the first credential found in s (a
// secretscan rule id: gitleaks' default rules and fullsend's supplement,
// fullsend agent tokens included), or "" when s looks clean. It never
// returns the match itself, so callers can log the result. Invisible
// characters are ignored, secrets split by white space are joined, and s
// is scanned as a forge's Markdown renderer could show it too
// (secretscan.Rendered: HTML comments and tags removed, character
// references decoded).
func ScanSecrets(s string) string {
	return secretscan.Default().FindRendered(s)
}
