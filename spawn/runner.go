package spawn

import (
	"context"
	"time"
)

// Request is what the service asks a Runner to run: one subagent in one
// fresh sandbox.
type Request struct {
	// ID identifies this run in logs and audit entries.
	ID string
	// Agent is the subagent to run; it is in the policy manifest.
	Agent string
	// Prompt is the task the orchestrator gives the subagent.
	Prompt string
	// Parent is the agent that asked for this run.
	Parent string
	// Depth is the subagent's spawn depth (the orchestrator is 0).
	Depth int
	// Tier is the subagent's compiled tier (read-only, network, full).
	Tier string
	// Env is the complete set of variables the sandbox gets from the
	// service: the forge proxy URL, the subagent's own minted token and,
	// when it may spawn further, the spawn URL. It never holds the forge
	// token. Names are the Env* constants.
	Env map[string]string
	// Timeout is the run's deadline, also set on the context.
	Timeout time.Duration
}

// Result is a finished subagent run.
type Result struct {
	// ExitCode is the agent's exit status inside the sandbox.
	ExitCode int
	// Output is the agent's structured result, JSON. Anything else is
	// returned to the orchestrator as a JSON string.
	Output []byte
}

// Runner runs one subagent in a fresh sandbox. The contract: Run returns
// only after the sandbox is gone (also when ctx is cancelled or the run
// fails), never runs the agent unsandboxed, and passes the sandbox exactly
// req.Env from the service, nothing from its own environment's secrets.
type Runner interface {
	Run(ctx context.Context, req Request) (Result, error)
}

// Environment variables the service hands a spawned sandbox.
const (
	EnvAgent      = "FULLSEND_AGENT"
	EnvRunID      = "FULLSEND_RUN_ID"
	EnvForgeURL   = "FULLSEND_FORGE_URL"
	EnvAgentToken = "FULLSEND_AGENT_TOKEN"
	EnvSpawnURL   = "FULLSEND_SPAWN_URL"
)
