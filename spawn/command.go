package spawn

import (
	"github.com/fullsend-ai/agent-sandbox/handover"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

// CommandRunner runs each subagent through an external command, typically
// the in-image runner (`fullsend run`), which creates the sandbox, runs the
// agent and deletes the sandbox before it exits. The command gets
// Args + [agent name] as argv, the prompt on stdin, and an environment made
// of only PassEnv (from the service's own environment) plus Request.Env:
// nothing else of the service's environment, so the forge token the service
// holds never reaches it; and PoliciesDigest as FULLSEND_POLICIES_DIGEST, so
// every child runs the same signed project the service was pinned to. Its
// stdout is the result; its exit status is the subagent's.
type CommandRunner struct {
	// Args is the command and its leading arguments, e.g. ["fullsend", "run"].
	Args []string
	// PoliciesDigest is the sha256 of the policy manifest the service was
	// pinned to (what `fullsend verify` exported). Every child gets it as
	// EnvPoliciesDigest, which wins over PassEnv and Request.Env; empty
	// sets nothing.
	PoliciesDigest string
	// PassEnv names variables copied from the service's environment
	// (default PATH, HOME, TMPDIR, LANG). Names that look like credentials
	// are refused by Validate.
	PassEnv []string
	// Stderr receives the command's stderr; nil discards it.
	Stderr io.Writer
	// MaxOutput bounds stdout (default 1 MiB); more is an error.
	MaxOutput int
	// GracePeriod is how long the command gets after SIGTERM to clean its
	// sandbox up before it is killed (default 30s).
	GracePeriod time.Duration
}

// EnvPoliciesDigest carries CommandRunner.PoliciesDigest to the runner
// command (`fullsend run` reads it as its --policies-digest default). It is
// for the runner, not the sandbox.
const EnvPoliciesDigest = handover.PoliciesDigest

// DefaultPassEnv returns what a CommandRunner passes from its own
// environment when PassEnv is empty: the basics, the run settings (the
// pinned sandbox and supervisor images, the gateway mode) and the verify
// step's image hand-over the runner needs (runner.Options.SandboxImage,
// SupervisorImage, GatewayMode, Verified).
func DefaultPassEnv() []string {
	return append([]string{"PATH", "HOME", "TMPDIR", "LANG",
		handover.Image, handover.VerifiedSandboxImage}, handover.RunSettings()...)
}

// Validate checks the runner configuration.
func (c *CommandRunner) Validate() error {
	if len(c.Args) == 0 || c.Args[0] == "" {
		return errors.New("command runner: no command")
	}
	for _, n := range c.PassEnv {
		u := strings.ToUpper(n)
		for _, bad := range []string{"TOKEN", "SECRET", "PASSWORD", "KEY", "CREDENTIAL", "AUTH"} {
			if strings.Contains(u, bad) {
				return fmt.Errorf("command runner: refusing to pass %s to sandboxes (looks like a credential)", n)
			}
		}
	}
	return nil
}

type limitedBuffer struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if l.buf.Len()+len(p) > l.limit {
		l.over = true
		p = p[:max(0, l.limit-l.buf.Len())]
	}
	l.buf.Write(p)
	return len(p), nil
}

// Run implements Runner. On ctx cancellation the command gets SIGTERM (so it
// can delete its sandbox) and, after GracePeriod, SIGKILL; Run returns only
// once the command has exited.
func (c *CommandRunner) Run(ctx context.Context, req Request) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	limit := c.MaxOutput
	if limit <= 0 {
		limit = 1 << 20
	}
	grace := c.GracePeriod
	if grace <= 0 {
		grace = 30 * time.Second
	}
	args := append(append([]string(nil), c.Args[1:]...), req.Agent)
	cmd := exec.CommandContext(ctx, c.Args[0], args...)
	cmd.Env = c.environ(req.Env)
	cmd.Stdin = strings.NewReader(req.Prompt)
	out := &limitedBuffer{limit: limit}
	cmd.Stdout = out
	cmd.Stderr = c.Stderr
	if cmd.Stderr == nil {
		cmd.Stderr = io.Discard
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = grace
	err := cmd.Run()
	if out.over {
		return Result{}, fmt.Errorf("subagent %s: output is larger than %d bytes", req.Agent, limit)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return Result{ExitCode: 0, Output: out.buf.Bytes()}, nil
	case ctx.Err() != nil:
		return Result{}, fmt.Errorf("subagent %s: %w", req.Agent, ctx.Err())
	case errors.As(err, &ee) && ee.Exited():
		return Result{ExitCode: ee.ExitCode(), Output: out.buf.Bytes()}, nil
	}
	return Result{}, fmt.Errorf("subagent %s: %w", req.Agent, err)
}

// environ builds the command environment: the pass-through variables, then
// the request's, then the pinned policies digest, sorted for
// reproducibility.
func (c *CommandRunner) environ(reqEnv map[string]string) []string {
	pass := c.PassEnv
	if len(pass) == 0 {
		pass = DefaultPassEnv()
	}
	m := map[string]string{}
	for _, n := range pass {
		if v, ok := os.LookupEnv(n); ok {
			m[n] = v
		}
	}
	for k, v := range reqEnv {
		m[k] = v
	}
	if c.PoliciesDigest != "" {
		m[EnvPoliciesDigest] = c.PoliciesDigest
	}
	env := make([]string, 0, len(m))
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}
