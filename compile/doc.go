// Package compile turns a loaded agent system (an *agentdef.Project) into
// the compiled bundle: one OpenShell policy per agent, manifest.json and
// provenance.json.
//
// It owns capability derivation through the CUE catalog of package
// policycue, merging, tier caps, compile-time placeholder values,
// deterministic emission, the checks every emitted policy must pass
// (ValidateCheck and the expectations CompileDir adds; the lint check is
// injected), all-or-nothing atomic writing (Write), staleness (Diff) and
// Explain.
// agentdef.Load reads a project, Compile turns it into an Output (policies
// as openshell.Policy, the manifest as bundle.Manifest), Write stores the
// bundle; CompileDir does all three from a directory.
//
// The pipeline is concurrent and its output is not: files are parsed,
// agents compiled and marshalled, the checks run and the policies validated
// on GOMAXPROCS goroutines (Options.Workers), an injected check that is slow
// to prepare starts while the project loads (ProjectOptions.Lint, a
// StartCheck), and every result is gathered in a fixed order, so the bundle
// and the diagnostics are the same byte for byte whatever the scheduling
// (TestParallelMatchesSerial). Agents share only read-only data: the project
// and the catalog, which LoadCatalog decodes from CUE into Go structs once;
// no CUE value is used per agent.
//
// compile links CUE (through policycue) but no rule engine: the OPA lint
// check lives in compile/lintcheck and the CLI passes it in, so compile
// never imports lint or OPA. Only cmd/fullsend (and compile/lintcheck)
// import it: later stages read its output through package bundle, never
// through compile, and do not link the compiler. It never imports the
// build, signing or run side (image, sign, verify, runner, spawn, forge).
package compile
