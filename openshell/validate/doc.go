// Package validate checks an OpenShell policy offline against what
// OpenShell at a release accepts and does: the closed schema of that
// release (a field table generated from policycue/schema/openshell), its
// load-time rejections, its gateway and supervisor checks, and the traps it
// accepts silently. File validates one document, Policy an in-memory
// model, All the files of `fullsend policy validate`; every finding is an
// openshell.Diagnostic (the vocabulary openshell/profile reports in too)
// with a position, a severity and a stable OSP code
// (docs/policy-validate.md).
//
// It imports openshell, openshell/glob and internal/didyoumean only, and never
// CUE, OPA or openshell/decide.
package validate
