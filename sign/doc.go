// Package sign is fullsend's signing layer and the only package that imports
// cosign: cosign v2 signatures and in-toto attestations (SPDX SBOM, SLSA
// provenance v1) over an image digest computed locally, stored the cosign way
// (the sha256-<hex>.sig and .att tags, or the cosign OCI-layout annotations),
// keyed (cosign key files, KMS) or keyless (Fulcio certificate from the CI's
// OIDC token, Rekor upload). It also holds the cryptographic half of
// verification (CheckSignatures, CheckAttestations); the verify package
// builds the verify-before-run policy on top of it.
//
// Keeping every cosign import here makes a move to cosign v3 an import-path
// change. Keys are loaded with sigstore/sigstore, never with
// cosign/v2/pkg/signature (which links Kubernetes client-go).
//
// In the pipeline it follows the build: a Signer signs a Subject (the
// go-containerregistry image or index and its repository) into Signed,
// which is written next to the image before any tag names it. Of this
// module it imports only cienv, handover and internal/atomicfile. It must never import image
// (it takes go-containerregistry types, so image does not link cosign), nor
// compile, CUE or OPA.
package sign
