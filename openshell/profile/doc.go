// Package profile owns OpenShell provider profiles (Providers v2): the
// profile model (Profile, mirroring ProviderTypeProfile,
// crates/openshell-providers/src/profiles.rs:380-411 @ v0.0.111), a strict
// decoder that keeps the position of every value, the offline checks of
// `openshell provider profile lint` and import (validate_profile_set,
// profiles.rs:1496 @ v0.0.111, plus the gateway's conflict check with the
// built-in catalog) with stable OPP codes, and composition: the effective
// policy OpenShell builds from a sandbox policy and the profiles of its
// attached providers, each under a reserved `_provider_<name>` key
// (crates/openshell-policy/src/compose.rs @ v0.0.111).
//
// OpenShell deserializes profiles with serde structs that do not deny
// unknown fields, so a misspelt or too-new key loads and is silently
// dropped; Validate reports it as a trap warning (an error under --strict).
// Endpoints are also checked the way the supervisor will see them, as a
// network policy of the composed policy (validate.File), and the
// findings are mapped back to the profile's lines.
//
// It imports openshell and bundle; it must never import CUE, OPA, compile,
// lint or policycue: the runner imports it inside the image.
package profile
