// Package profile owns OpenShell provider profiles (Providers v2): the
// profile model (Profile, mirroring ProviderTypeProfile,
// crates/openshell-providers/src/profiles.rs:380-411 @ v0.0.111), a strict
// decoder that keeps the position of every value, the offline checks of
// `openshell provider profile lint` and import (CheckSet:
// validate_profile_set, profiles.rs:1496 @ v0.0.111, plus the gateway's
// conflict check with the built-in catalog) with stable OPP codes, the
// built-in catalog, Resolve, and composition: the effective policy
// OpenShell builds from a sandbox policy and the profiles of its attached
// providers, each under a reserved `_provider_<name>` key
// (crates/openshell-policy/src/compose.rs @ v0.0.111).
//
// OpenShell deserializes profiles with serde structs that do not deny
// unknown fields, so a misspelt or too-new key loads and is silently
// dropped; Decode reports it as a trap warning (an error under --strict).
// Findings are openshell.Diagnostics. The checks that need the policy
// validator (a profile's endpoints as the composed policy carries them,
// the composed policy itself) are openshell/profile/check.
//
// It imports openshell, bundle and internal/didyoumean only; it must never
// import openshell/validate, openshell/decide, CUE, OPA, compile, lint or
// policycue: the runner and the OpenShell fake import it.
package profile
