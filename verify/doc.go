// Package verify is fullsend's verify-before-run step: the policy a CI job
// applies to the agent-sandbox image before running it. Checks run in a
// fixed order and fail closed: digest pinning, signer (public keys or a
// keyless identity), signed claims (digest, repository, required
// annotations, policy manifest digest), then attestations when asked.
// The cryptography lives in package sign; this package decides.
//
// In the pipeline it sits between publishing and the run: Verify turns
// Options into a Result whose Ref (repository@sha256) is what the next job
// runs and whose PoliciesDigest the runner checks the bundle against
// (FULLSEND_IMAGE, FULLSEND_POLICIES_DIGEST). Of this module it imports
// sign, cienv, handover and internal/atomicfile. It must never import cosign directly (sign
// owns it), nor image, compile, CUE or OPA.
package verify
