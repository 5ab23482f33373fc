package runner

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes of `fullsend run`. The agent's own exit status is propagated
// unchanged; the runner's own failures use codes from the sysexits range so
// that a CI job can tell "the agent said no" from "the sandbox never started".
const (
	// ExitOK means the agent ran in a sandbox and exited 0.
	ExitOK = 0
	// ExitPreflight means OpenShell is missing, has the wrong version, or no
	// gateway is healthy (EX_UNAVAILABLE).
	ExitPreflight = 69
	// ExitSandbox means the sandbox could not be created, never became Ready,
	// or could not be deleted (EX_TEMPFAIL).
	ExitSandbox = 75
	// ExitPolicy means the compiled project does not verify: a digest
	// mismatch, a policy the supervisor does not load or the sandbox does
	// not confirm, uploads the policy's filesystem rules refuse, an
	// unresolved or invalid placeholder, a provider credential the job
	// does not set (EX_CONFIG).
	ExitPolicy = 78
	// ExitTimeout means --timeout elapsed (as timeout(1)).
	ExitTimeout = 124
	// ExitInterrupted means SIGINT or SIGTERM stopped the run (128+SIGINT).
	ExitInterrupted = 130
)

// ExitCodeDoc is one row of fullsend run's exit-code table.
type ExitCodeDoc struct {
	// Code is the exit code, "N" for the agent's own status.
	Code string
	// Meaning says when the run exits with it.
	Meaning string
}

// ExitCodes is fullsend run's exit-code table, the one place it is
// written: `fullsend run --help` prints it and a test holds the table of
// docs/runner.md equal to it.
func ExitCodes() []ExitCodeDoc {
	return []ExitCodeDoc{
		{"0", "the agent ran in a sandbox and exited 0 (an output it did not write is a warning: result.json's missing_outputs)"},
		{"N", "the agent's own non-zero exit status, propagated"},
		{"2", "bad command line"},
		{"69", "OpenShell unavailable: no `openshell`, wrong version, no `ssh`, a sandbox or supervisor image not pinned by digest, no healthy gateway and none can be started (no `openshell-gateway`, no `podman`) (EX_UNAVAILABLE)"},
		{"75", "sandbox failure: create, Ready, upload/download, delete (EX_TEMPFAIL)"},
		{"78", "verification or policy failure: no policies digest in CI, digest mismatch, policy does not load or is not confirmed (failed, still pending, still different), uploads its filesystem rules refuse, placeholder unresolved or invalid, a credential in the workspace, a provider credential the job does not set (EX_CONFIG)"},
		{"124", "`--timeout` elapsed"},
		{"130", "interrupted by SIGINT or SIGTERM"},
	}
}

// Sentinel errors; every error Run returns wraps at least one of them, or is
// an *AgentExitError. Causes are wrapped too (`%w: %w`), so an error may
// carry several sentinels; ExitCode decides by the most specific.
var (
	// ErrPreflight wraps OpenShell CLI and gateway availability failures.
	ErrPreflight = errors.New("openshell preflight failed")
	// ErrPolicy wraps manifest, digest, policy and placeholder failures.
	ErrPolicy = errors.New("policy check failed")
	// ErrPlaceholder wraps unresolved or invalid runtime placeholders; it
	// also matches ErrPolicy.
	ErrPlaceholder = fmt.Errorf("%w: placeholder", ErrPolicy)
	// ErrUnpinned reports a run in CI without a pinned policies digest: the
	// project could be anything, not the signed one the verify step checked.
	// It also matches ErrPolicy.
	ErrUnpinned = fmt.Errorf("%w: no policies digest pinned", ErrPolicy)
	// ErrCredential reports a provider whose credential the job does not
	// set (its variables unset or empty); the run stops before any
	// provider is created (EX_CONFIG, as a policy failure).
	ErrCredential = errors.New("provider credential missing")
	// ErrSandbox wraps sandbox lifecycle failures.
	ErrSandbox = errors.New("sandbox failed")
	// ErrTimeout reports that the run exceeded its timeout.
	ErrTimeout = errors.New("run timed out")
	// ErrInterrupted reports that the run was cancelled by a signal.
	ErrInterrupted = errors.New("run interrupted")
)

// AgentExitError reports that the agent ran inside the sandbox and exited
// with a non-zero status.
type AgentExitError struct {
	Agent string
	Code  int
}

func (e *AgentExitError) Error() string {
	return fmt.Sprintf("agent %s exited with status %d", e.Agent, e.Code)
}

// ExitCode maps an error returned by Run to the process exit code. An error
// may wrap several sentinels (a step cut short by --timeout wraps ErrSandbox
// and ErrTimeout; a failed sandbox delete is joined to the run's error), so
// the most specific is tested first: the agent's own exit status, then
// interruption and timeout (they explain any failure they cut short), then
// policy, preflight and sandbox failures.
func ExitCode(err error) int {
	var ae *AgentExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ae):
		return ae.Code
	}
	for _, s := range exitSentinels {
		if errors.Is(err, s.err) {
			return s.code
		}
	}
	return ExitSandbox // ErrSandbox, and any other failure
}

// exitSentinels are the sentinel errors with their exit codes, in the
// order ExitCode tests them.
var exitSentinels = []struct {
	err  error
	code int
}{
	{ErrInterrupted, ExitInterrupted},
	{ErrTimeout, ExitTimeout},
	{ErrPolicy, ExitPolicy},
	{ErrCredential, ExitPolicy},
	{ErrPreflight, ExitPreflight},
}

// ctxErr turns a finished context into ErrTimeout or ErrInterrupted, or
// returns nil while the context is live.
func ctxErr(ctx context.Context) error {
	switch {
	case ctx.Err() == nil:
		return nil
	case errors.Is(context.Cause(ctx), ErrTimeout), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ErrTimeout
	}
	return ErrInterrupted
}
