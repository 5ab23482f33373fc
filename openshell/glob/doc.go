// Package glob holds OpenShell's pattern matchers, so that a pattern means
// the same in the decision engine, the validator, the profile checks, the
// prover, lint, compile and policydiff: globset as regorus's glob.match
// runs it in OpenShell's Rego (Compile, Match, CompileRego, RegoMatch); the
// Rust glob crate's Pattern (ParseRust, MatchRust), which OpenShell uses
// for MCP method matchers and endpoint paths; and host and path patterns
// with their matching and overlap, one type per semantics OpenShell has
// (Host and HostSelector, CredentialHost, ProfileHost, EndpointPath; the
// host dialects share one automaton over DNS labels, labels.go), and
// CharHost, the endpoint ambiguity check's reading on characters. It is a
// leaf: standard library only.
package glob
