package runner

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/fullsend-ai/agent-sandbox/compile"
)

// Sandbox paths. The sandbox user's home is /sandbox; runtimes read their
// user-level agent and skill directories from there.
const (
	sandboxHome = "/sandbox"
	// createAttempts bounds `sandbox create` retries.
	createAttempts = 3
	// policyAttempts bounds the rounds of `policy set --wait` used when the
	// active policy is not the one sent (revisions stuck Pending).
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
	rep        Reporter
	mask       *masker
	log        *maskWriter
	tmp        string
	gatewayLog string
	policyFile string
	policy     []byte
	agent      *Agent
	envVars    [][2]string // from ExtraEnvFiles, validated once
	created    bool
}

func (x *run) logf(format string, args ...any) {
	fmt.Fprintf(x.log, format+"\n", args...)
}

// step runs fn inside a collapsible log group.
func (x *run) step(title string, fn func() error) error {
	end := x.rep.Group(title)
	err := fn()
	if err != nil {
		x.logf("error: %v", err)
	}
	_ = x.log.Flush()
	end()
	return err
}

// Run runs one agent in a fresh sandbox and returns only after the sandbox
// is deleted. The error wraps one of the package's sentinel errors or is an
// *AgentExitError; ExitCode maps it to the process exit code.
func (r *Runner) Run(ctx context.Context, req Request) (res Result, err error) {
	start := time.Now()
	res = Result{Agent: req.Agent, CI: DetectCI(r.opts.Env.Getenv), ManifestSHA256: r.project.ManifestSHA256}
	mask := &masker{}
	x := &run{r: r, req: req, res: &res, mask: mask, log: &maskWriter{m: mask, w: r.opts.Log}}
	x.rep = r.opts.Reporter
	if x.rep == nil {
		summary, _ := r.opts.Env.Getenv("GITHUB_STEP_SUMMARY")
		x.rep = NewReporter(res.CI, r.opts.Log, summary)
	}
	x.d = &driver{env: r.childEnv(), mask: mask}
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, req.Timeout, ErrTimeout)
		defer cancel()
	}
	x.tmp, err = os.MkdirTemp(r.opts.TempDir, "fullsend-run-")
	if err != nil {
		return res, fmt.Errorf("%w: %v", ErrSandbox, err)
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
	if err = x.step("fullsend: openshell preflight", func() error {
		var perr error
		stopGateway, perr = r.preflight(ctx, x)
		return perr
	}); err != nil {
		return res, err
	}
	if err = x.step("fullsend: credential providers", func() error { return x.providers(ctx) }); err != nil {
		return res, err
	}
	defer func() { err = x.cleanup(ctx, err) }()
	if err = x.step("fullsend: create sandbox", func() error { return x.create(ctx) }); err != nil {
		return res, err
	}
	if err = x.step("fullsend: confirm policy", func() error { return x.confirmPolicy(ctx) }); err != nil {
		return res, err
	}
	if err = x.step("fullsend: install agent", func() error { return x.bootstrap(ctx) }); err != nil {
		return res, err
	}
	if err = x.execAgent(ctx); err != nil {
		return res, err
	}
	err = x.step("fullsend: collect outputs", func() error { return x.download(ctx) })
	return res, err
}

// prepare verifies the agent, resolves placeholders and writes the policy.
func (x *run) prepare(ctx context.Context) error {
	a, err := x.r.project.Agent(x.req.Agent)
	if err != nil {
		return err
	}
	x.agent = a
	x.res.PolicySHA256 = a.PolicySHA256
	x.logf("agent %s: runtime %s, tier %s, policy %s (sha256 %s) matches manifest %s",
		a.Name, a.Entry.Runtime, a.Entry.Tier, a.Entry.Policy, a.PolicySHA256, x.r.project.ManifestSHA256)
	resolution, err := x.r.opts.Env.Resolve(ctx, a.Open, x.req.Values)
	if resolution != nil {
		x.res.Placeholders, x.res.PlaceholderFrom = map[string]string{}, resolution.From
		for k, v := range resolution.Values {
			x.res.Placeholders[k] = v
			x.logf("{{%s}} = %s (from %s)", k, v, resolution.From[k])
		}
	}
	if err != nil {
		return err
	}
	_, data, err := a.Resolve(resolution.Values)
	if err != nil {
		return err
	}
	x.policy = data
	x.res.ResolvedSHA256 = compile.SHA256Hex(data)
	x.policyFile = filepath.Join(x.tmp, "policy.yaml")
	if err := os.WriteFile(x.policyFile, data, 0o600); err != nil {
		return fmt.Errorf("%w: writing resolved policy: %v", ErrPolicy, err)
	}
	// Collect every secret before anything is logged or run.
	for _, p := range x.r.opts.Providers {
		for _, k := range p.CredentialEnv {
			if v, ok := x.r.opts.Env.Getenv(k); ok && v != "" {
				x.mask.Add(v)
				x.rep.Mask(v)
			}
		}
	}
	for _, f := range x.req.ExtraEnvFiles {
		kvs, err := readEnvFile(f)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrPolicy, err)
		}
		for _, kv := range kvs {
			x.mask.Add(kv[1])
			x.rep.Mask(kv[1])
		}
		x.envVars = append(x.envVars, kvs...)
	}
	return nil
}

// readEnvFile parses a KEY=VALUE file (blank lines and # comments allowed).
// Values are taken literally: no quotes are removed, nothing is expanded.
func readEnvFile(name string) ([][2]string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("env file: %w", err)
	}
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
		kvs = append(kvs, [2]string{k, v})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("env file %s: %w", name, err)
	}
	return kvs, nil
}

// providers creates the typed credential providers from the environment.
func (x *run) providers(ctx context.Context) error {
	if len(x.r.opts.Providers) == 0 {
		x.logf("no credential providers")
		return nil
	}
	for _, p := range x.r.opts.Providers {
		if p.Type == "" {
			x.logf("provider %s: attached as configured on the gateway", p.Name)
			continue
		}
		var vals []string
		for _, k := range p.CredentialEnv {
			v, ok := x.r.opts.Env.Getenv(k)
			if !ok || v == "" {
				return fmt.Errorf("%w: provider %s: credential variable %s is not set", ErrPreflight, p.Name, k)
			}
			vals = append(vals, k+"="+v)
		}
		if err := x.d.ProviderCreate(ctx, p, vals); err != nil {
			return fmt.Errorf("%w: provider %s: %w", ErrSandbox, p.Name, errOr(ctxErr(ctx), err))
		}
		x.logf("provider %s (%s): credentials from %s", p.Name, p.Type, strings.Join(p.CredentialEnv, ", "))
	}
	return nil
}

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

// create creates the sandbox with the resolved policy and waits for Ready,
// retrying creation (after deleting the failed attempt).
func (x *run) create(ctx context.Context) error {
	name := SandboxName(x.agent.Name)
	x.res.Sandbox = name
	spec := createSpec{name: name, policy: x.policyFile, from: x.r.opts.SandboxImage,
		cpu: x.r.opts.CPU, memory: x.r.opts.Memory}
	for _, p := range x.r.opts.Providers {
		spec.providers = append(spec.providers, p.Name)
	}
	var last error
	for attempt := 1; attempt <= createAttempts; attempt++ {
		x.created = true // a failed create may still leave a sandbox behind
		last = x.d.Create(ctx, spec)
		if last == nil {
			last = x.waitReady(ctx, name)
			if last == nil {
				x.logf("sandbox %s is Ready", name)
				return nil
			}
		}
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		if errors.Is(last, errSandboxError) || attempt == createAttempts {
			break
		}
		x.logf("create attempt %d/%d failed: %v; deleting and retrying", attempt, createAttempts, last)
		if err := x.deleteSandbox(ctx); err != nil {
			return fmt.Errorf("%w: sandbox %s: %w (after: %w)", ErrSandbox, name, err, last)
		}
		if err := sleep(ctx, x.r.backoff(attempt)); err != nil {
			return err
		}
	}
	return fmt.Errorf("%w: sandbox %s: %w", ErrSandbox, name, last)
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

// confirmPolicy checks that the sandbox enforces exactly the policy sent,
// compared as parsed models. When it does not (a revision stuck Pending),
// it sets the policy again with --wait and checks again.
func (x *run) confirmPolicy(ctx context.Context) error {
	name := x.res.Sandbox
	for attempt := 1; ; attempt++ {
		active, err := x.d.ActivePolicy(ctx, name)
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		if err == nil {
			same, cmpErr := samePolicy(x.policy, active)
			if cmpErr == nil && same {
				x.logf("sandbox %s enforces the compiled policy (resolved sha256 %s)", name, x.res.ResolvedSHA256)
				return nil
			}
			err = cmpErr
			if err == nil {
				err = errors.New("the active policy differs from the one sent")
			}
		}
		if attempt > policyAttempts {
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

// runtimeDir is where a runtime reads user-level agents and skills.
func runtimeDir(runtime string) (local, parent string) {
	if runtime == RuntimeOpenCode {
		return "opencode", sandboxHome + "/.config/"
	}
	return ".claude", sandboxHome + "/"
}

// bootstrap uploads the verified agent and skill files, the env files and
// the workspace.
func (x *run) bootstrap(ctx context.Context) error {
	stage := filepath.Join(x.tmp, "stage")
	local, parent := runtimeDir(x.agent.Entry.Runtime)
	cfg := filepath.Join(stage, local)
	targets := make([]string, 0, len(x.agent.Files))
	for t := range x.agent.Files {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		rel := t
		if x.agent.Entry.Runtime == RuntimeOpenCode && strings.HasPrefix(t, "agents/") {
			rel = "agent/" + strings.TrimPrefix(t, "agents/") // OpenCode's directory is singular
		}
		p := filepath.Join(cfg, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("%w: staging: %v", ErrSandbox, err)
		}
		if err := os.WriteFile(p, x.agent.Files[t], 0o600); err != nil {
			return fmt.Errorf("%w: staging: %v", ErrSandbox, err)
		}
	}
	if err := x.upload(ctx, cfg, parent); err != nil {
		return err
	}
	x.logf("installed %d verified file(s) under %s%s", len(targets), parent, local)
	if len(x.envVars) > 0 {
		// One canonical file written from the pairs validated in prepare,
		// not the caller's file again.
		envDir := filepath.Join(stage, ".fullsend")
		if err := os.MkdirAll(filepath.Join(envDir, "env"), 0o700); err != nil {
			return fmt.Errorf("%w: staging: %v", ErrSandbox, err)
		}
		var b strings.Builder
		for _, kv := range x.envVars {
			b.WriteString(kv[0] + "=" + kv[1] + "\n")
		}
		if err := os.WriteFile(filepath.Join(envDir, "env", "run.env"), []byte(b.String()), 0o600); err != nil {
			return fmt.Errorf("%w: staging: %v", ErrSandbox, err)
		}
		if err := x.upload(ctx, envDir, sandboxHome+"/"); err != nil {
			return err
		}
	}
	if x.req.Workspace != "" {
		abs, err := filepath.Abs(x.req.Workspace)
		if err != nil {
			return fmt.Errorf("%w: workspace: %v", ErrSandbox, err)
		}
		if err := x.upload(ctx, abs, sandboxHome+"/"); err != nil {
			return err
		}
		x.logf("uploaded workspace %s to %s", abs, x.workdir())
	}
	return nil
}

func (x *run) upload(ctx context.Context, local, dest string) error {
	if err := x.d.Upload(ctx, x.res.Sandbox, local, dest); err != nil {
		return fmt.Errorf("%w: upload %s: %w", ErrSandbox, filepath.Base(local), errOr(ctxErr(ctx), err))
	}
	return nil
}

// workdir is the directory the agent runs in inside the sandbox.
func (x *run) workdir() string {
	if x.req.Workspace == "" {
		return sandboxHome
	}
	abs, err := filepath.Abs(x.req.Workspace)
	if err != nil {
		return sandboxHome
	}
	return path.Join(sandboxHome, filepath.Base(abs))
}

// runtimeCommand is the command line of the agent runtime: the agent name
// and the tier's flags from the manifest, never a secret.
func (x *run) runtimeCommand() []string {
	e := x.agent.Entry
	var cmd []string
	switch e.Runtime {
	case RuntimeOpenCode:
		cmd = []string{"opencode", "run", "--agent", x.agent.Name}
	default:
		cmd = []string{"claude", "--print", "--agent", x.agent.Name}
	}
	cmd = append(cmd, e.RuntimeFlags[e.Runtime]...)
	if len(x.envVars) == 0 {
		return cmd
	}
	// Export the env file inside the sandbox so its values stay out of
	// argv. `export "$line"` takes each KEY=VALUE literally: no word
	// splitting, quoting or expansion of the value.
	script := `while IFS= read -r line; do export "$line"; done < ` + sandboxHome + `/.fullsend/env/run.env; exec "$@"`
	return append([]string{"sh", "-c", script, "fullsend-env"}, cmd...)
}

// execAgent runs the runtime with `sandbox exec`, streaming its output, and
// retries once when the first egress met OpenShell's transient 403.
func (x *run) execAgent(ctx context.Context) error {
	cmd := x.runtimeCommand()
	prompt := x.req.Prompt
	if strings.TrimSpace(prompt) == "" {
		prompt = x.defaultPrompt()
	}
	var timeout time.Duration
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	for attempt := 1; ; attempt++ {
		end := x.rep.Group(fmt.Sprintf("agent %s (sandbox %s)", x.agent.Name, x.res.Sandbox))
		out := &maskWriter{m: x.mask, w: x.r.opts.Stdout}
		w, endUntrusted := x.rep.Untrusted(out)
		started := time.Now()
		code, stderr, err := x.d.Exec(ctx, execSpec{
			name: x.res.Sandbox, workdir: x.workdir(), timeout: timeout, command: cmd,
			stdin: strings.NewReader(prompt), stdout: w, stderr: w,
		})
		_ = out.Flush()
		endUntrusted()
		end()
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		if err != nil {
			return fmt.Errorf("%w: exec: %w", ErrSandbox, err)
		}
		if code == 0 {
			x.logf("agent %s exited 0", x.agent.Name)
			return nil
		}
		if attempt == 1 && time.Since(started) < egressRaceWindow && bytes.Contains(stderr, []byte(`"policy_denied"`)) {
			x.logf("agent failed on its first egress with policy_denied within %s (OpenShell #1942); retrying once", egressRaceWindow)
			if err := sleep(ctx, x.r.backoff(2)); err != nil {
				return err
			}
			continue
		}
		return &AgentExitError{Agent: x.agent.Name, Code: code}
	}
}

// defaultPrompt describes the CI context when no prompt was given.
func (x *run) defaultPrompt() string {
	v := x.res.Placeholders
	msg := fmt.Sprintf("Run as the %s agent", x.agent.Name)
	if v["OWNER"] != "" && v["REPO_NAME"] != "" {
		msg += fmt.Sprintf(" for %s/%s", v["OWNER"], v["REPO_NAME"])
	}
	if v["ISSUE_NUMBER"] != "" {
		msg += fmt.Sprintf(", item #%s", v["ISSUE_NUMBER"])
	}
	return msg + "."
}

// download fetches the declared outputs and strips symlinks and git hooks.
func (x *run) download(ctx context.Context) error {
	if len(x.req.Outputs) == 0 {
		return nil
	}
	outDir := x.req.OutputDir
	if outDir == "" {
		outDir = "fullsend-out"
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrSandbox, err)
	}
	for _, o := range x.req.Outputs {
		remote := o
		if !path.IsAbs(remote) {
			remote = path.Join(x.workdir(), remote)
		}
		remote = path.Clean(remote)
		if remote == "/" || strings.Contains(o, "..") {
			return fmt.Errorf("%w: output %q: give a path under the sandbox, without ..", ErrPolicy, o)
		}
		dest := filepath.Join(outDir, path.Base(remote))
		if err := x.d.Download(ctx, x.res.Sandbox, remote, dest); err != nil {
			return fmt.Errorf("%w: download %s: %w", ErrSandbox, remote, errOr(ctxErr(ctx), err))
		}
		removed, err := Sanitize(dest)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrSandbox, err)
		}
		for _, r := range removed {
			x.logf("removed %s from downloaded %s (symlink, special file or .git/hooks)", r, remote)
			x.res.Removed = append(x.res.Removed, filepath.Join(dest, r))
		}
		x.res.Outputs = append(x.res.Outputs, dest)
	}
	return nil
}

// cleanup always runs once a sandbox may exist: on failure it collects the
// sandbox logs for the bundle, then deletes the sandbox on a fresh context so
// that a timeout or a signal cannot skip it.
func (x *run) cleanup(ctx context.Context, runErr error) error {
	if !x.created {
		return runErr
	}
	if runErr != nil && x.r.opts.DiagDir != "" {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		if logs, err := x.d.Logs(lctx, x.res.Sandbox); err == nil || len(logs) > 0 {
			_ = os.WriteFile(filepath.Join(x.tmp, "sandbox.log"), []byte(x.mask.String(string(logs))), 0o600)
		}
		cancel()
	}
	if err := x.deleteSandbox(ctx); err != nil {
		x.rep.Annotate("error", "sandbox not deleted", x.mask.String(err.Error()))
		return errors.Join(runErr, fmt.Errorf("%w: %w", ErrSandbox, err))
	}
	x.res.Deleted = true
	return runErr
}

func (x *run) deleteSandbox(ctx context.Context) error {
	var err error
	for i := 0; i < 3; i++ {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		err = x.d.Delete(dctx, x.res.Sandbox)
		cancel()
		var ce *CallError
		if err == nil || errors.As(err, &ce) && strings.Contains(strings.ToLower(ce.Stderr), "not found") {
			x.logf("sandbox %s deleted", x.res.Sandbox)
			return nil
		}
		time.Sleep(x.r.backoff(i))
	}
	return fmt.Errorf("deleting sandbox %s: %w", x.res.Sandbox, err)
}
