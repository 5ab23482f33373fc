// Package decide answers whether OpenShell's proxy lets a request through a
// policy, as OpenShell's Rego and proxy decide it at a release: New
// prepares a Decider for a policy, Decider.Decide answers a Request
// (ParseRequest reads the `policy test` request grammar) with a Decision
// that names the policy, the endpoint or rule and the reason. Policy-test
// expectations (*.policytest.yaml: ParseExpectFile, FindExpectations,
// RunExpectations) run on it.
//
// It imports openshell, openshell/glob, placeholder and internal/didyoumean
// only, and never CUE, OPA or openshell/validate.
package decide
