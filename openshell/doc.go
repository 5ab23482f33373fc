// Package openshell encodes NVIDIA OpenShell's policy semantics, in one
// place for every stage that writes or reads a policy: the policy model
// (Policy, whose provenance never reaches the emitted document), the strict
// codec (Unmarshal rejects unknown fields as OpenShell's serde structs do,
// Marshal is deterministic), version gating (Feature, Supports,
// NormalizeVersion), the offline validator (Validate, Diagnostic and its
// stable OSP codes), placeholder substitution on the model
// (ApplyPlaceholders, OpenPlaceholders, Policy.Clone), the request-decision
// engine (Decider, Decide, ParseRequest, and GlobMatch: regorus's glob.match over
// globset semantics) and policy-test expectations
// (*.policytest.yaml: ParseExpectFile, RunExpectations).
//
// compile emits policies with it, lint reads them with it, policycue takes
// its version gates, and the runner parses, resolves and re-encodes them
// with it inside the image.
// Of this module it imports only bundle (the sources of provenance),
// placeholder and internal/suggest. It must never import CUE or OPA (the
// runner links this package and neither engine), nor compile, lint or
// policycue, which sit above it.
package openshell
