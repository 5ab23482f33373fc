// Package prover models OpenShell's policy prover (crates/openshell-prover
// @ v0.0.111) over the project's policy model, openshell.Policy: the binary
// capability registry, the credential set, the four categorical queries
// (link_local_reach, l7_bypass_credentialed, credential_reach_expansion,
// capability_expansion) and the gateway's baseline delta (finding_delta,
// crates/openshell-server/src/grpc/policy.rs:592-673 @ v0.0.111).
//
// OpenShell encodes the policy as Z3 constants and asks one satisfiability
// question per (binary, endpoint) pair (model.rs:329-373 @ v0.0.111). Every
// variable in that model is asserted true or false from the policy, so the
// question is a boolean formula over known facts; this package evaluates the
// same formula directly. Findings carry OpenShell's category names and its
// evidence shape (ExfilPath, finding.rs:35-52 @ v0.0.111); like OpenShell's,
// they have no severity: callers that grade risk (policydiff) do so from
// their own table.
package prover
