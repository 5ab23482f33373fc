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
// The pipeline is concurrent and its output is not: files are parsed,
// agents compiled and marshalled, the checks run and the policies validated
// on GOMAXPROCS goroutines (Options.Workers), the lint rules compile while
// the project loads (CompileDir), and every result is gathered in a fixed
// order, so the bundle and the diagnostics are the same byte for byte
// whatever the scheduling (TestParallelMatchesSerial). Agents share only
// read-only data: the project and the catalog, which LoadCatalog decodes
// from CUE into Go structs once; no CUE value is used per agent.
//
// compile links CUE (through policycue) and OPA (through lint), so only
// cmd/fullsend imports it: later stages read its output through package
// bundle, never through compile, and do not link the compiler. It never
// imports the build, signing or run side (image, sign, verify, runner,
// spawn, forge).
package compile
