// Package lint checks OpenShell policies with OPA: an embedded,
// conftest-shaped Rego rule set (BuiltinRules) plus user rule directories,
// data files, conftest exceptions and fullsend waivers, evaluated in one
// query prepared once per run. Engine.Lint turns []Input (an
// openshell.Policy with the fullsend Context rules may use: tier,
// subagents, placeholders, provenance) into a report.Report; ProjectInputs
// builds the inputs from a compiled bundle.
//
// compile runs it on every policy it emits (a deny finding fails the
// compile), and `fullsend policy lint` on files. The same rule files run
// unchanged under conftest and opa. Rendering is package report's job;
// request decisions and expectations are package openshell's. lint must
// never import CUE, policycue or compile (compile imports lint), nor
// anything of the build or run side: OPA stays out of image, runner and
// spawn.
package lint
