// Package policydiff compares what two revisions of a project grant: the
// compiled policy models (openshell.Policy) and manifests of a base and a
// head side, never their YAML text. It pairs grant units (endpoint, L7
// rule, binary, filesystem path, landlock and process settings, and the
// manifest's tier, spawns and outputs), names each difference add, remove,
// widen, narrow, change or move with the source line that caused it
// (provenance), grades it with a deterministic risk table in OpenShell's
// prover vocabulary, and attaches the prover's own delta (package prover).
//
// A side comes from a compiled bundle (ReadBundle) or from a compile the
// caller runs (NewSide): this package never imports the compiler, so a
// bundle can be diffed without CUE or OPA. Git revisions are read through
// gitrepo (gitrepo.Tree: `git ls-tree` and `git cat-file`) into an
// in-memory fs.FS for the caller to compile, no attribute applied.
package policydiff
