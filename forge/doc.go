// Package forge is the credential-holding forge proxy: a small host-side
// REST server that holds the GitHub or GitLab token, exposes the few
// GitHub-shaped endpoints sandboxed agents need, and forwards each allowed
// call to the forge API with the token added. Agents never see the token;
// each sandbox authenticates with its own minted bearer token, and the proxy
// applies that agent's tier and the configured repository, issue and label
// scope on top of the sandbox's L7 policy (defense in depth).
//
// It runs beside the run stage (`fullsend serve forge`), and package spawn
// shares its token Registry. It holds a credential, so its code stays small (the process does
// not: `fullsend serve forge` is the one binary): of
// this module it imports only internal/version and secretscan (the leaf
// holding the secret rules its body scan and audit redaction apply), and
// takes an agent's tier as the manifest's string (TierFromManifest). It must never import the policy
// side (compile, policycue, lint, CUE, OPA), the image or signing side, or
// runner.
package forge
