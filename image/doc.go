// Package image builds the agent-sandbox image without a container daemon:
// a base image (by digest) plus deterministic layers holding the fullsend
// binary for each platform and the project's agents, skills, templates and
// compiled policies under /opt/fullsend. Two builds of the same inputs give
// the same digest. The result can be pushed (by digest first, tags last),
// written as an OCI layout, or as a tarball; signing happens on the locally
// computed digest in between.
//
// In the pipeline it follows compile: Build reads the bundle through
// package bundle (the manifest, every policy and source file re-hashed
// against it; a stale bundle is refused) and returns a Result whose Digest
// is what gets signed and whose PoliciesDigest (the sha256 of
// manifest.json) becomes the dev.fullsend.policies.digest annotation. Of
// this module it imports only bundle, handover (the policies-digest
// annotation) and internal/atomicfile. It must never
// import compile, CUE or OPA, nor sign: composing build, signatures and
// tags is its caller's job, so image does not link cosign.
package image
