// Package compile is the first stage of the pipeline: it turns agent and
// skill definitions (Claude Code and OpenCode agents, Agent Skills, and the
// .claude/ and .opencode/ layouts) into the compiled bundle: one OpenShell
// policy per agent, manifest.json and provenance.json.
//
// It owns discovery, strict frontmatter parsing that keeps the position of
// every value, the tool-rule grammar, capability derivation through the CUE
// catalog of package policycue, merging, tier caps, compile-time placeholder
// values, deterministic emission, the checks every emitted policy must pass
// (ValidateCheck, LintCheck, ExpectationsCheck), all-or-nothing atomic
// writing (Write), staleness (Diff) and Explain. Load reads a project into a
// Project, Compile turns it into an Output (policies as openshell.Policy,
// the manifest as bundle.Manifest), Write stores the bundle.
//
// compile links CUE (through policycue) and OPA (through lint), so only
// cmd/fullsend imports it: later stages read its output through package
// bundle, never through compile, and do not link the compiler. It never
// imports the build, signing or run side (image, sign, verify, runner,
// spawn, forge).
package compile
