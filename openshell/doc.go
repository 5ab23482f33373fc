// Package openshell is NVIDIA OpenShell's policy model, in one place for
// every stage that writes or reads a policy: the model (Policy, whose
// provenance never reaches the emitted document), the strict codec
// (Unmarshal rejects unknown fields as OpenShell's serde structs do,
// Marshal is deterministic, Difference compares two policies), version
// gating (Feature, Supports, NormalizeVersion), placeholder substitution on
// the model (ApplyPlaceholders, OpenPlaceholders, Policy.Clone) and the
// facts of OpenShell's proxy the checks share (AlwaysBlockedIP,
// ControlPlanePort, IsHostGatewayAlias, ParseAllowedIP), and the
// diagnostic vocabulary the validator and the provider profile decoder
// both report in (Diagnostic, Severity, HasErrors, DiagnosticsError), and
// the serde_yml scalar rules both apply (SerdeUint, SerdeInt, SerdePlainType
// and their kin).
//
// The offline validator is openshell/validate, the request-decision engine
// and policy-test expectations are openshell/decide, and OpenShell's glob
// matchers are openshell/glob. compile emits policies with this package,
// lint reads them with it, policycue takes its version gates, and the
// runner parses, resolves and re-encodes them with it inside the image.
// Of this module it imports only bundle (the sources of provenance) and
// placeholder. It must never import CUE or OPA (the runner links this
// package and neither engine), nor openshell/validate, openshell/decide,
// compile, lint or policycue, which sit above it.
package openshell
