// Package glob holds OpenShell's glob matchers, so that a glob means the
// same in the decision engine, the validator, lint, compile and policydiff:
// globset as regorus's glob.match runs it in OpenShell's Rego (Compile,
// Match, CompileRego, RegoMatch), and the Rust glob crate's Pattern
// (ParseRust, MatchRust), which OpenShell uses for MCP method matchers and
// middleware host labels. It is a leaf: standard library only.
package glob
