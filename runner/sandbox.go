package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fullsend-ai/agent-sandbox/runner/childproc"
)

// SandboxName returns a fresh sandbox name for an agent: "fs-", up to 8
// characters of the agent name and 6 random hex digits; at most 19
// characters, a DNS-1123 label without "--" (OpenShell v0.0.88+ rules).
func SandboxName(agent string) string {
	stem := nameStem(agent)
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	if stem == "" {
		return "fs-" + hex.EncodeToString(rnd[:])
	}
	return "fs-" + stem + "-" + hex.EncodeToString(rnd[:])
}

// nameStem is up to 8 characters of the agent name: lower-case letters and
// digits, any run of other characters one "-", none at either end.
func nameStem(agent string) string {
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
	return stem
}

// ValidSandboxName reports whether name obeys OpenShell's sandbox name rules.
func ValidSandboxName(name string) bool {
	return len(name) <= 19 && dnsLabel.MatchString(name) && !strings.Contains(name, "--")
}

// create creates the sandbox from the pinned sandbox image with the
// resolved policy; the CLI blocks until Ready (crates/openshell-cli/src/
// run.rs sandbox_create v0.0.83:2019-2185, v0.0.111:652-835) and its
// progress lines are streamed to the log. An attempt is retried, with a
// fresh name and after deleting what it left, only for what can pass on
// its own: a name another run took, a gateway that did not answer, a
// sandbox that was not Ready in time. A name that already exists belongs to
// someone else and is never deleted.
func (x *run) create(ctx context.Context) error {
	spec, err := x.createSpec()
	if err != nil {
		return err
	}
	progress := childproc.NewLineFunc(func(line string) { x.logf("openshell: %s", line) })
	defer progress.Close()
	spec.progress = progress
	var last error
	for attempt := 1; attempt <= createAttempts; attempt++ {
		var taken bool
		if taken, last = x.createAttempt(ctx, &spec, progress); last == nil {
			return nil
		}
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		if !taken && !transient(last) || attempt == createAttempts {
			break
		}
		x.logf("create attempt %d/%d failed: %v; retrying with a new name", attempt, createAttempts, last)
		if err := x.discardAttempt(ctx, spec.name, last); err != nil {
			return err
		}
		if err := sleep(ctx, x.r.backoff(attempt)); err != nil {
			return err
		}
	}
	return fmt.Errorf("%w: sandbox %s: %w", ErrSandbox, x.res.Sandbox, last)
}

// createSpec is what every create attempt sends: the policy, the pinned
// sandbox image, the resources and the providers to attach.
func (x *run) createSpec() (createSpec, error) {
	spec := createSpec{policy: x.policyFile, from: x.sandboxImage, cpu: x.r.opts.CPU, memory: x.r.opts.Memory}
	if !PinnedImage(spec.from) { // preflight refused it already; never create from the default image
		return spec, fmt.Errorf("%w: sandbox image %q is not pinned by digest", ErrPreflight, spec.from)
	}
	x.res.SandboxImage = spec.from
	for _, p := range x.r.opts.Providers {
		spec.providers = append(spec.providers, p.Name)
	}
	if x.composed != nil { // attached in the order the layers were composed
		spec.providers = append(spec.providers, x.composed.names()...)
	}
	return spec, nil
}

// createAttempt creates a sandbox under a fresh name and waits until it
// is Ready. taken reports that the name already existed: it belongs to
// someone else, so it is released, never deleted.
func (x *run) createAttempt(ctx context.Context, spec *createSpec, progress *childproc.LineFunc) (taken bool, err error) {
	spec.name = SandboxName(x.agent.Name)
	x.res.Sandbox = spec.name
	x.created = true // a failed create may still leave a sandbox behind
	spec.labels = x.claim(spec.name)
	err = x.d.Create(ctx, *spec)
	progress.Flush()
	var ce *CallError
	if errors.As(err, &ce) && strings.Contains(strings.ToLower(ce.Stderr), "already exists") {
		x.created = false
		x.release(spec.name)
		return true, err
	}
	if err != nil {
		return false, err
	}
	if err := x.waitReady(ctx, spec.name); err != nil {
		return false, err
	}
	x.logf("sandbox %s is Ready (image %s)", spec.name, spec.from)
	return false, nil
}

// discardAttempt deletes what a failed attempt (which failed with last)
// left behind before the next one.
func (x *run) discardAttempt(ctx context.Context, name string, last error) error {
	if !x.created {
		return nil
	}
	if err := x.deleteSandbox(ctx); err != nil {
		return fmt.Errorf("%w: sandbox %s: %w (after: %w)", ErrSandbox, name, err, last)
	}
	x.created = false
	return nil
}

// transient reports a create failure that may pass on a second attempt: the
// gateway did not answer, or the sandbox was not Ready in time. A usage
// error, an invalid policy or image, or phase Error fails at once.
func transient(err error) bool {
	if err == nil || errors.Is(err, errSandboxError) {
		return false
	}
	var ce *CallError
	if !errors.As(err, &ce) {
		return errors.Is(err, errNotReady)
	}
	if ce.Code == 2 {
		return false
	}
	msg := strings.ToLower(ce.Stderr)
	for _, s := range []string{"connection refused", "transport error", "unavailable", "timed out", "deadline", "did not become ready", "reset by peer"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

var errNotReady = errors.New("not Ready in time")

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
			return fmt.Errorf("%w: not Ready after %s (last: %s)", errNotReady, x.r.opts.ReadyTimeout, last)
		}
		if err := sleep(ctx, x.r.backoff(i)); err != nil {
			return err
		}
	}
}

// confirmPolicy gates the agent on the policy: the sandbox's active policy
// must be the one sent (compared as parsed models, provider layers set
// aside) and its revision must be LOADED by the supervisor, within one
// bounded wait (ReadyTimeout). Only the races the reference names are
// retried: an active policy that differs (the supervisor may sync back an
// enriched policy as a new revision) is pushed again with `policy set
// --wait`, at most policyAttempts times; a revision stuck Pending
// (OpenShell #2159/#2518) is waited for, never re-pushed, because the
// gateway de-duplicates an identical policy by hash ("Policy unchanged", no
// new revision: crates/openshell-server/src/grpc/policy.rs v0.0.83:1552,
// v0.0.111:2728; crates/openshell-cli/src/run.rs v0.0.83:6742,
// v0.0.111:5944). Every policy failure is ErrPolicy (exit 78).
func (x *run) confirmPolicy(ctx context.Context) error {
	name := x.res.Sandbox
	deadline := time.Now().Add(x.r.opts.ReadyTimeout)
	pushes := 0
	last := ""
	for i := 0; ; i++ {
		state, err := x.policyState(ctx, name)
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		switch {
		case err != nil:
			if errors.Is(err, ErrPolicy) {
				return fmt.Errorf("sandbox %s: %w", name, err)
			}
			last = err.Error()
		case state == policyLoaded:
			return nil
		case state == policyDiffers:
			if pushes == policyAttempts {
				return fmt.Errorf("%w: sandbox %s: the active policy still differs from the one sent after %d pushes", ErrPolicy, name, pushes)
			}
			pushes++
			if err := x.pushPolicy(ctx, name, deadline, pushes); err != nil {
				return err
			}
			continue
		default:
			last = string(state)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: sandbox %s: policy not confirmed within %s (last: %s; OpenShell #2159/#2518 leave revisions pending)",
				ErrPolicy, name, x.r.opts.ReadyTimeout, last)
		}
		if err := sleep(ctx, x.r.backoff(i)); err != nil {
			return err
		}
	}
}

// pushPolicy sends the policy again with `policy set --wait` (push number
// pushes), waiting until the deadline but at least a second. A load that
// is still pending is looked at again by the caller.
func (x *run) pushPolicy(ctx context.Context, name string, deadline time.Time, pushes int) error {
	x.logf("the active policy differs from the one sent: pushing it (%d/%d)", pushes, policyAttempts)
	wait := max(time.Until(deadline), time.Second)
	code, serr := x.d.PolicySet(ctx, name, x.policyFile, wait)
	if cerr := ctxErr(ctx); cerr != nil {
		return cerr
	}
	switch code {
	case 0, 124: // loaded, or pending: looked at again
		return nil
	case 1:
		return fmt.Errorf("%w: sandbox %s: the supervisor failed to load the policy: %w", ErrPolicy, name, serr)
	}
	return fmt.Errorf("%w: sandbox %s: policy set: %w", ErrSandbox, name, serr)
}

// policyState is what one look at the sandbox's policy found.
type policyState string

const (
	policyLoaded  policyState = "loaded"
	policyDiffers policyState = "differs"
)

// policyState compares the active policy with the one sent, then reads the
// load status of its revision. A failed load is ErrPolicy; a pending one is
// returned as its status.
func (x *run) policyState(ctx context.Context, name string) (policyState, error) {
	if err := x.checkPolicySource(ctx, name); err != nil {
		return "", err
	}
	active, err := x.d.ActivePolicy(ctx, name)
	if err != nil {
		return "", err
	}
	same, err := samePolicy(x.policy, active)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	rev, err := x.d.PolicyRevision(ctx, name)
	if err != nil {
		return "", err
	}
	if !same {
		return differingState(rev)
	}
	if err := x.confirmComposed(name, active); err != nil {
		return "", err
	}
	switch rev.Status {
	case "loaded":
		x.logf("sandbox %s enforces the compiled policy: revision %d loaded (resolved sha256 %s)", name, rev.Version, x.res.ResolvedSHA256)
		return policyLoaded, nil
	case "failed":
		return "", fmt.Errorf("%w: the supervisor failed to load policy revision %d: %s", ErrPolicy, rev.Version, rev.LoadError)
	}
	return policyState(fmt.Sprintf("revision %d is %s", rev.Version, rev.Status)), nil
}

// differingState is the state of a sandbox whose active policy differs
// from the one sent, by the status of the latest revision.
func differingState(rev policyRevision) (policyState, error) {
	switch rev.Status {
	case "pending":
		// The policy pushed is not active yet: wait for it; pushing it
		// again would be "Policy unchanged".
		return policyState(fmt.Sprintf("revision %d is pending; the active policy is still the previous one", rev.Version)), nil
	case "failed":
		return "", fmt.Errorf("%w: the supervisor failed to load policy revision %d: %s", ErrPolicy, rev.Version, rev.LoadError)
	}
	return policyDiffers, nil
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
