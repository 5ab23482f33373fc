// Package check validates OpenShell provider profiles the way `fullsend
// policy validate` and `policy test` need: File and All run profile lint
// (profile.Decode, profile.CheckSet) and then validate each profile's
// endpoints and binaries as the network policy its layer becomes in the
// composed policy (validate.Policy), findings mapped back to the profile's
// lines; Composed validates a composed policy as the gateway does when a
// provider is attached, findings at the layers' profiles. It is apart from
// openshell/profile so that the runner, which composes, does not link the
// validator.
//
// It imports openshell, openshell/profile and openshell/validate only, and
// never openshell/decide, CUE or OPA.
package check
