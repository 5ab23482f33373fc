// Package suggest is the suggester behind `fullsend policy suggest`: it reads
// the denials an OpenShell sandbox logged (the sandbox's shorthand log file,
// its OCSF JSONL file, or `openshell logs` output) and classifies each with
// package denial (its kind table is the contract, shared with the runner's
// result.json), decides per kind what to do (kindPlans), and maps the ones
// a grant can fix to the smallest change of the agent's frontmatter
// `sandbox:` block: exact
// hosts, methods and paths, placeholders put back ({{OWNER}}...), never a
// wildcard host, `**`, or allowed_ips. Every suggestion is checked through
// the decision engine (decide.Decider) on the recompiled project before
// it is printed: the denied request is allowed, nearby requests stay denied.
//
// Log lines are the sandboxed agent's bytes: a prompt-injected agent chooses
// what it is denied. Suggestions are evidence for a human; the package never
// writes a file in CI (Apply refuses), and hosts, paths and binaries that are
// not plain DNS names, paths or absolute executables are refused as invalid.
//
// It imports denial, openshell, placeholder, bundle and cienv, never
// compile: the caller (cmd/fullsend) passes a Compiler that compiles a project file
// system exactly as `policy compile` would.
package suggest
