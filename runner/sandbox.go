package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SandboxName returns a fresh sandbox name for an agent: "fs-", up to 8
// characters of the agent name and 6 random hex digits; at most 19
// characters, a DNS-1123 label without "--" (OpenShell v0.0.88+ rules).
func SandboxName(agent string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(agent) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		switch {
		case ok:
			b.WriteRune(c)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 8 {
			break
		}
	}
	stem := strings.Trim(b.String(), "-")
	if len(stem) > 8 {
		stem = strings.TrimRight(stem[:8], "-")
	}
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	if stem == "" {
		return "fs-" + hex.EncodeToString(rnd[:])
	}
	return "fs-" + stem + "-" + hex.EncodeToString(rnd[:])
}

// ValidSandboxName reports whether name obeys OpenShell's sandbox name rules.
func ValidSandboxName(name string) bool {
	return len(name) <= 19 && dnsLabel.MatchString(name) && !strings.Contains(name, "--")
}

// create creates the sandbox with the resolved policy and waits for Ready.
// A failed attempt is deleted and the next one uses a fresh name; a name
// that already exists belongs to someone else and is never deleted.
func (x *run) create(ctx context.Context) error {
	spec := createSpec{policy: x.policyFile, from: x.r.opts.SandboxImage, cpu: x.r.opts.CPU, memory: x.r.opts.Memory}
	for _, p := range x.r.opts.Providers {
		spec.providers = append(spec.providers, p.Name)
	}
	var last error
	for attempt := 1; attempt <= createAttempts; attempt++ {
		spec.name = SandboxName(x.agent.Name)
		x.res.Sandbox = spec.name
		x.created = true // a failed create may still leave a sandbox behind
		spec.labels = x.claim(spec.name)
		last = x.d.Create(ctx, spec)
		var ce *CallError
		if errors.As(last, &ce) && strings.Contains(strings.ToLower(ce.Stderr), "already exists") {
			x.created = false
			x.release(spec.name)
		} else if last == nil {
			if last = x.waitReady(ctx, spec.name); last == nil {
				x.logf("sandbox %s is Ready", spec.name)
				return nil
			}
		}
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		if errors.Is(last, errSandboxError) || attempt == createAttempts {
			break
		}
		x.logf("create attempt %d/%d failed: %v; retrying with a new name", attempt, createAttempts, last)
		if x.created {
			if err := x.deleteSandbox(ctx); err != nil {
				return fmt.Errorf("%w: sandbox %s: %w (after: %w)", ErrSandbox, spec.name, err, last)
			}
			x.created = false
		}
		if err := sleep(ctx, x.r.backoff(attempt)); err != nil {
			return err
		}
	}
	return fmt.Errorf("%w: sandbox %s: %w", ErrSandbox, x.res.Sandbox, last)
}

var errSandboxError = errors.New("sandbox phase is Error")

// waitReady polls the sandbox phase with backoff until Ready.
func (x *run) waitReady(ctx context.Context, name string) error {
	deadline := time.Now().Add(x.r.opts.ReadyTimeout)
	last := ""
	for i := 0; ; i++ {
		phase, err := x.d.Phase(ctx, name)
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		switch {
		case err != nil:
			last = err.Error()
		case strings.EqualFold(phase, "Ready"):
			return nil
		case strings.EqualFold(phase, "Error"):
			return errSandboxError
		default:
			last = phase
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not Ready after %s (last: %s)", x.r.opts.ReadyTimeout, last)
		}
		if err := sleep(ctx, x.r.backoff(i)); err != nil {
			return err
		}
	}
}

// confirmPolicy gates the agent on the policy: the sandbox's active policy
// must be the one sent (compared as parsed models, provider layers set
// aside) and its revision must be LOADED by the supervisor. A revision that
// stays Pending (OpenShell #2159/#2518) or an active policy that differs is
// pushed again with `policy set --wait`; a FAILED load stops the run.
func (x *run) confirmPolicy(ctx context.Context) error {
	name := x.res.Sandbox
	for attempt := 1; ; attempt++ {
		err := x.checkPolicy(ctx, name)
		if err == nil {
			return nil
		}
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		if errors.Is(err, errPolicyFailed) || attempt > policyAttempts {
			return fmt.Errorf("%w: sandbox %s: policy not confirmed: %w", ErrSandbox, name, err)
		}
		x.logf("policy check %d: %v; setting it again", attempt, err)
		code, serr := x.d.PolicySet(ctx, name, x.policyFile, 60*time.Second)
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		switch code {
		case 0:
		case 1:
			return fmt.Errorf("%w: sandbox %s: the policy failed to load: %w", ErrSandbox, name, serr)
		case 124:
			x.logf("policy revision still pending after 60s")
		default:
			return fmt.Errorf("%w: sandbox %s: policy set: %w", ErrSandbox, name, serr)
		}
		if err := sleep(ctx, x.r.backoff(attempt)); err != nil {
			return err
		}
	}
}

var errPolicyFailed = errors.New("the supervisor failed to load the policy")

// checkPolicy compares the active policy with the one sent, then waits
// (with backoff, up to the ready timeout) for its revision to be loaded.
func (x *run) checkPolicy(ctx context.Context, name string) error {
	active, err := x.d.ActivePolicy(ctx, name)
	if err != nil {
		return err
	}
	same, err := samePolicy(x.policy, active)
	if err != nil {
		return err
	}
	if !same {
		return errors.New("the active policy differs from the one sent")
	}
	deadline := time.Now().Add(x.r.opts.ReadyTimeout)
	for i := 0; ; i++ {
		rev, err := x.d.PolicyRevision(ctx, name)
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		switch {
		case err != nil:
		case rev.Status == "loaded":
			x.logf("sandbox %s enforces the compiled policy: revision %d loaded (resolved sha256 %s)", name, rev.Version, x.res.ResolvedSHA256)
			return nil
		case rev.Status == "failed":
			return fmt.Errorf("%w: revision %d: %s", errPolicyFailed, rev.Version, rev.LoadError)
		default:
			err = fmt.Errorf("policy revision %d is %s", rev.Version, rev.Status)
		}
		if time.Now().After(deadline) {
			return err
		}
		if err := sleep(ctx, x.r.backoff(i)); err != nil {
			return err
		}
	}
}

func (x *run) deleteSandbox(ctx context.Context) error {
	var err error
	for i := 0; i < 3; i++ {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		err = x.d.Delete(dctx, x.res.Sandbox)
		cancel()
		if err == nil || isNotFound(err) {
			x.logf("sandbox %s deleted", x.res.Sandbox)
			x.release(x.res.Sandbox)
			return nil
		}
		time.Sleep(x.r.backoff(i))
	}
	return fmt.Errorf("deleting sandbox %s: %w", x.res.Sandbox, err)
}
