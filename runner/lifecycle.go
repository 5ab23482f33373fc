package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/ciout"
	"github.com/fullsend-ai/agent-sandbox/runner/redact"
	"github.com/fullsend-ai/agent-sandbox/runner/resolve"
	"github.com/fullsend-ai/agent-sandbox/runner/stage"
)

// Sandbox paths. The sandbox user's home is /sandbox; runtimes read their
// user-level agent and skill directories from there.
const (
	sandboxHome = "/sandbox"
	// createAttempts bounds `sandbox create` retries.
	createAttempts = 3
	// policyAttempts bounds the pushes of `policy set --wait` used when the
	// active policy is not the one sent (never for a pending revision).
	policyAttempts = 3
	// egressRaceWindow: a run whose first egress got a transient 403
	// (OpenShell #1942) fails within this window and is retried once.
	egressRaceWindow = 30 * time.Second
	// cleanupTimeout bounds deletion, which runs on a fresh context.
	cleanupTimeout = 2 * time.Minute
)

var (
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	envName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// run is the state of one Run call.
type run struct {
	r          *Runner
	req        Request
	res        *Result
	d          *driver
	rep        ciout.Reporter
	mask       *redact.Masker
	log        *runLog // the only writer of the runner's own lines
	tmp        string
	gatewayLog string
	children   []child // helpers the run started (podman service, gateway)
	policyFile string
	policy     []byte
	// sandboxImage is what every sandbox is created from, chosen and
	// checked in preflight (chooseSandboxImage).
	sandboxImage string
	agent        *Agent
	envVars      [][2]string // from ExtraEnvFiles, validated once
	staged       *stage.Workspace
	created      bool
	// ocsfJSON: the run turned on OpenShell's OCSF JSONL log.
	ocsfJSON bool
	// policyConfirmed: the sandbox enforces the compiled policy, so the
	// runner may exec in it (collectEvidence too).
	policyConfirmed bool
	// root is where the runner's files and the workspace land in the
	// sandbox (stageRoot); empty means sandboxHome.
	root string
	// composed is set when the agent attaches provider profiles
	// (providers.go): the attachments the effective policy must compose.
	composed *composition
}

// logf writes one line of the runner's log: format is the runner's own
// text, every argument is untrusted and escaped for the CI (runLog).
func (x *run) logf(format string, args ...any) {
	x.log.Printf(format, args...)
}

// step runs fn inside a collapsible log group and records its duration.
// The step's error is not printed here: finish reports it once, with its
// next step.
func (x *run) step(title string, fn func() error) error {
	end := x.rep.Group(title)
	start := time.Now()
	err := fn()
	took := time.Since(start)
	x.res.Steps = append(x.res.Steps, StepTiming{Name: strings.TrimPrefix(title, "fullsend: "), MS: float64(took.Microseconds()) / 1000, Failed: err != nil})
	outcome := "done"
	if err != nil {
		outcome = "failed"
	}
	x.logf("%s in %s", outcome, took.Round(time.Millisecond))
	_ = x.log.Flush()
	end()
	return err
}

// Run runs one agent in a fresh sandbox and returns only after the sandbox
// is deleted. The error wraps one of the package's sentinel errors or is an
// *AgentExitError; ExitCode maps it to the process exit code.
func (r *Runner) Run(ctx context.Context, req Request) (res Result, err error) {
	start := time.Now()
	ci := r.opts.Env.CI()
	res = Result{Agent: req.Agent, CI: ci.Kind(), ManifestSHA256: r.project.ManifestSHA256}
	mask := &redact.Masker{}
	x := &run{r: r, req: req, res: &res, mask: mask, log: newRunLog(res.CI, mask, r.opts.Log)}
	x.rep = r.opts.Reporter
	if x.rep == nil {
		x.rep = ciout.NewReporter(res.CI, r.opts.Log, ci.StepSummary())
	}
	x.d = &driver{env: r.childEnv(), mask: mask}
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, req.Timeout, ErrTimeout)
		defer cancel()
	}
	x.tmp, err = os.MkdirTemp(r.opts.TempDir, "fullsend-run-")
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrSandbox, err)
	}
	defer os.RemoveAll(x.tmp)

	defer func() {
		res.ExitCode = ExitCode(err)
		if err != nil {
			res.Error = mask.String(err.Error())
		}
		res.Calls = x.d.Calls()
		res.InOpenShell = x.d.TimeInCalls()
		res.Duration = time.Since(start)
		x.finish(err)
	}()

	stopGateway := func() {}
	defer func() { stopGateway() }()
	if err = x.step("fullsend: verify "+req.Agent, func() error { return x.prepare(ctx) }); err != nil {
		return res, err
	}
	// The workspace is staged (and refused when it carries a credential)
	// before any sandbox exists.
	if req.Workspace != "" {
		if err = x.step("fullsend: stage workspace", x.stageWorkspace); err != nil {
			return res, err
		}
	}
	if err = x.step("fullsend: openshell preflight", func() error {
		var perr error
		stopGateway, perr = r.preflight(ctx, x)
		return perr
	}); err != nil {
		return res, err
	}
	x.reap(ctx) // sandboxes that killed runs left
	x.enableOCSFJSON(ctx)
	if err = x.step("fullsend: credential providers", func() error { return x.providers(ctx) }); err != nil {
		return res, err
	}
	err = x.inSandbox(ctx)
	return res, err
}

// inSandbox creates the sandbox, confirms its policy, installs and runs the
// agent and collects its outputs; the sandbox is cleaned up (evidence
// kept, deleted) whatever happens, before it returns.
func (x *run) inSandbox(ctx context.Context) (err error) {
	defer func() { err = x.cleanup(ctx, err) }()
	if err = x.step("fullsend: create sandbox", func() error { return x.create(ctx) }); err != nil {
		return err
	}
	if err = x.step("fullsend: confirm policy", func() error { return x.confirmPolicy(ctx) }); err != nil {
		return err
	}
	x.policyConfirmed = true
	if err = x.step("fullsend: install agent", func() error { return x.bootstrap(ctx) }); err != nil {
		return err
	}
	if err = x.execAgent(ctx); err != nil {
		return err
	}
	return x.step("fullsend: collect outputs", func() error { return x.download(ctx) })
}

// prepare collects the secrets, verifies the agent, resolves placeholders
// and writes the policy.
func (x *run) prepare(ctx context.Context) error {
	// Every secret is collected (masked and announced to the CI) before
	// anything is logged: the lines below print placeholder values, and a
	// value given with --set or read from the CI may be, or hold, a secret.
	if err := x.collectSecrets(); err != nil {
		return err
	}
	a, err := x.r.project.Agent(x.req.Agent)
	if err != nil {
		return err
	}
	x.agent = a
	x.maskProviderSecrets()
	x.res.PolicySHA256 = a.PolicySHA256
	x.logf("agent %s: runtime %s, tier %s, policy %s (sha256 %s) matches manifest %s",
		a.Name, a.Entry.Runtime, a.Entry.Tier, a.Entry.Policy, a.PolicySHA256, x.r.project.ManifestSHA256)
	if x.r.opts.PoliciesDigest == "" {
		x.logf("warning: policies digest not pinned: manifest %s is used as found, not checked against a signed image (refused in CI)", x.r.project.ManifestSHA256)
	}
	resolution, err := x.r.opts.Env.Resolve(ctx, a.Open, x.req.Values)
	if resolution != nil {
		x.recordPlaceholders(resolution)
	}
	if err != nil {
		return err
	}
	_, data, err := a.Resolve(resolution.Values)
	if err != nil {
		return err
	}
	return x.writePolicy(data)
}

// recordPlaceholders logs the resolved placeholder values and keeps them
// in the result, which (printed with -o json, rendered in the job summary,
// kept in the bundle) holds the values masked too.
func (x *run) recordPlaceholders(resolution *resolve.Resolution) {
	x.res.Placeholders, x.res.PlaceholderFrom = map[string]string{}, resolution.From
	for k, v := range resolution.Values {
		x.res.Placeholders[k] = x.mask.String(v)
		x.logf("{{%s}} = %s (from %s)", k, v, resolution.From[k])
	}
}

// writePolicy keeps the resolved policy, its digest, and writes it for
// the CLI.
func (x *run) writePolicy(data []byte) error {
	x.policy = data
	x.res.ResolvedSHA256 = bundle.SHA256Hex(data)
	x.policyFile = filepath.Join(x.tmp, "policy.yaml")
	if err := os.WriteFile(x.policyFile, data, 0o600); err != nil {
		return fmt.Errorf("%w: writing resolved policy: %w", ErrPolicy, err)
	}
	return nil
}

// collectSecrets masks, and announces to the CI, every value of a
// provider's credential variables, an env file and Request.Env; it keeps
// the env file and Request pairs for the sandbox.
func (x *run) collectSecrets() error {
	for _, p := range x.r.opts.Providers {
		x.maskCredentialEnv(p)
	}
	for _, f := range x.req.ExtraEnvFiles {
		kvs, err := readEnvFile(f)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrPolicy, err)
		}
		for _, kv := range kvs {
			x.mask.Add(kv[1])
			x.rep.Mask(kv[1])
		}
		x.envVars = append(x.envVars, kvs...)
	}
	return x.collectEnv()
}

// maskCredentialEnv masks, and announces to the CI, the values of a
// provider's credential variables that are set.
func (x *run) maskCredentialEnv(p Provider) {
	for _, k := range p.CredentialEnv {
		if v, ok := x.r.opts.Env.Getenv(k); ok && v != "" {
			x.mask.Add(v)
			x.rep.Mask(v)
		}
	}
}

// readEnvFile parses a KEY=VALUE file (blank lines and # comments allowed).
// Values are taken literally: no quotes are removed, nothing is expanded.
func readEnvFile(name string) ([][2]string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("env file: %w", err)
	}
	return ParseEnvFile(name, data)
}

// ParseEnvFile parses KEY=VALUE lines; name is used in errors only.
func ParseEnvFile(name string, data []byte) ([][2]string, error) {
	var kvs [][2]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !envName.MatchString(k) {
			return nil, fmt.Errorf("env file %s:%d: want KEY=VALUE with KEY a variable name", name, n)
		}
		if strings.ContainsRune(v, '\r') {
			return nil, fmt.Errorf("env file %s:%d: %s: carriage return in value", name, n, k)
		}
		kvs = append(kvs, [2]string{k, v})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("env file %s: %w", name, err)
	}
	return kvs, nil
}

// providers creates the typed credential providers from the environment.
func (x *run) providers(ctx context.Context) error {
	if len(x.agent.Entry.Providers) > 0 {
		return x.profileProviders(ctx)
	}
	if len(x.r.opts.Providers) == 0 {
		x.logf("no credential providers")
		return nil
	}
	for _, p := range x.r.opts.Providers {
		if p.Type == "" {
			x.logf("provider %s: attached as configured on the gateway", p.Name)
			continue
		}
		vals, err := x.credentialValues(p)
		if err != nil {
			return err
		}
		if err := x.d.ProviderCreate(ctx, p, vals); err != nil {
			return fmt.Errorf("%w: provider %s: %w", ErrSandbox, p.Name, errOr(ctxErr(ctx), err))
		}
		x.logf("provider %s (%s): credentials from %s", p.Name, p.Type, strings.Join(p.CredentialEnv, ", "))
	}
	return nil
}

// credentialValues are the KEY=VALUE pairs of a provider's credential
// variables, every one of which must be set.
func (x *run) credentialValues(p Provider) ([]string, error) {
	var vals []string
	for _, k := range p.CredentialEnv {
		v, ok := x.r.opts.Env.Getenv(k)
		if !ok || v == "" {
			return nil, fmt.Errorf("%w: provider %s: credential variable %s is not set", ErrPreflight, p.Name, k)
		}
		vals = append(vals, k+"="+v)
	}
	return vals, nil
}

// cleanup always runs once a sandbox may exist: it keeps the sandbox's logs
// as the run's evidence (on success and failure, evidence.go), then deletes
// the sandbox on a fresh context so that a timeout or a signal cannot skip
// it.
func (x *run) cleanup(ctx context.Context, runErr error) error {
	if !x.created {
		return runErr
	}
	_ = x.step("fullsend: keep OpenShell logs", func() error { x.collectEvidence(ctx); return nil })
	if err := x.deleteSandbox(ctx); err != nil {
		x.rep.Annotate("error", "sandbox not deleted", x.mask.String(err.Error()))
		return errors.Join(runErr, fmt.Errorf("%w: %w", ErrSandbox, err))
	}
	x.res.Deleted = true
	return runErr
}
