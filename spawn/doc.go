// Package spawn is the subagent-spawning service: an orchestrator agent,
// inside its sandbox, asks for a subagent by name (POST /run-agent); the
// service checks the caller's bearer token and its compiled Agent(...) list,
// runs the subagent in a fresh sandbox through a Runner with its own minted
// forge token and tier, and returns the subagent's structured result.
//
// It runs beside the run stage (`fullsend serve agents`): the spawn lists
// and tiers come from the bundle's bundle.Manifest, tokens from the forge
// Registry it shares with the proxy, and each run goes through the Runner
// interface (CommandRunner starts `fullsend run` as a separate process). Of
// this module it imports only bundle, forge and handover. It must never import runner
// (the sandbox lifecycle stays behind Runner), compile, policycue or lint,
// nor link CUE or OPA.
package spawn
