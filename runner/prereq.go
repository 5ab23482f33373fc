package runner

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/handover"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"golang.org/x/mod/semver"
)

// Check is one prerequisite of `fullsend run`, as preflight and `fullsend
// doctor` see it.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Fix says what to do when the check fails.
	Fix string `json:"fix,omitempty"`
	err error
}

// Err returns the check's failure (nil when it passed), wrapping a sentinel.
func (c Check) Err() error { return c.err }

// pinnedImage is REPO@sha256:<64 hex>, the only sandbox or supervisor
// image reference the runner accepts.
var pinnedImage = regexp.MustCompile(`^[a-z0-9][a-z0-9._/:-]*@sha256:[0-9a-f]{64}$`)

// PinnedImage reports whether ref names an image by digest.
func PinnedImage(ref string) bool { return pinnedImage.MatchString(ref) }

// prereqs is what preflight found.
type prereqs struct {
	bin, version string
	ssh          string
	mode         string
	status       string // the registered gateway's status
	// for a gateway the runner starts
	driver, gateway, podman, podmanSocket string
	// sandbox is the image every sandbox is created from
	sandbox sandboxChoice
}

// checker runs the prerequisite checks in order, keeping each result.
type checker struct {
	checks []Check
}

func (c *checker) ok(name, detail string) {
	c.checks = append(c.checks, Check{Name: name, OK: true, Detail: detail})
}

func (c *checker) fail(name string, err error, fix string) {
	c.checks = append(c.checks, Check{Name: name, Detail: err.Error(), Fix: fix, err: err})
}

// first returns the first failure.
func (c *checker) first() error {
	for _, ch := range c.checks {
		if ch.err != nil {
			return ch.err
		}
	}
	return nil
}

// checkTools checks the openshell CLI and its version, the ssh client and
// the sandbox image (pinned, and the one the verify step handed over:
// chooseSandboxImage): everything but the gateway. It never creates
// anything.
func (r *Runner) checkTools(ctx context.Context, c *checker, d *driver, pre *prereqs) {
	bin, err := r.lookPath(r.opts.OpenShell, "openshell")
	if err != nil {
		c.fail("openshell", fmt.Errorf("%w: %w; the runner never runs an agent outside a sandbox", ErrPreflight, err),
			"install the openshell CLI (the agent-sandbox image carries it) or pass --openshell PATH")
		return
	}
	d.bin, pre.bin = bin, bin
	v, err := d.Version(ctx)
	if err != nil {
		c.fail("openshell", fmt.Errorf("%w: reading openshell version: %w", ErrPreflight, errOr(ctxErr(ctx), err)), "check that "+bin+" runs")
		return
	}
	pre.version = v
	r.checkVersion(c, d, bin, v)
	r.checkSSH(c, pre)
	sb, fix, err := r.sandboxImage()
	if err != nil {
		c.fail("sandbox image", err, fix)
	} else {
		pre.sandbox = sb
		c.ok("sandbox image", sb.detail)
	}
}

// checkVersion checks that v, the version of the openshell CLI at bin, is
// exactly the release the manifest was compiled for; d then uses it.
func (r *Runner) checkVersion(c *checker, d *driver, bin, v string) {
	want, werr := openshell.NormalizeVersion(r.project.Manifest.OpenShellVersion)
	switch {
	case r.project.Manifest.OpenShellVersion == "":
		c.fail("openshell", fmt.Errorf("%w: manifest openshell_version is empty", ErrPolicy), "recompile the project")
	case werr != nil:
		c.fail("openshell", fmt.Errorf("%w: manifest openshell_version %q: %w", ErrPolicy, r.project.Manifest.OpenShellVersion, werr), "recompile the project")
	case semver.Compare(v, want) != 0 || semver.Prerelease(v) != "" || semver.Build(v) != "":
		c.fail("openshell", fmt.Errorf("%w: openshell %s is installed (%s) but the policies were compiled for %s", ErrPreflight, v, bin, want),
			fmt.Sprintf("recompile with --openshell-version %s or use the image built for %s", v, want))
	default:
		d.version = v
		c.ok("openshell", fmt.Sprintf("%s %s matches the manifest", bin, v))
	}
}

// checkSSH finds the ssh client: upload and download are tar over the ssh
// client the CLI spawns (crates/openshell-cli/src/ssh.rs
// Command::new("ssh") v0.0.83:148, v0.0.111:153).
func (r *Runner) checkSSH(c *checker, pre *prereqs) {
	p, err := r.lookPath(r.opts.SSH, "ssh")
	if err != nil {
		c.fail("ssh", fmt.Errorf("%w: %w: openshell sandbox upload/download need an ssh client", ErrPreflight, err),
			"install openssh-client (the agent-sandbox image carries it)")
		return
	}
	pre.ssh = p
	c.ok("ssh", p)
}

// checkGateway decides how the run gets a gateway: a registered healthy one
// (modes auto and existing), or one it starts (auto when none is healthy,
// start), whose prerequisites it then checks. A non-zero `status` means the
// gateway is down, never that the run must stop.
func (r *Runner) checkGateway(ctx context.Context, c *checker, d *driver, pre *prereqs) {
	pre.mode = r.opts.gatewayMode()
	if !ValidGatewayMode(pre.mode) {
		c.fail("gateway", fmt.Errorf("%w: gateway mode %q: want auto, existing or start", ErrPreflight, pre.mode), "")
		return
	}
	if pre.mode != GatewayStart && registeredGateway(ctx, c, d, pre) {
		return
	}
	pre.driver = cmp.Or(r.opts.GatewayDriver, DefaultGatewayDriver)
	gw, err := r.lookPath(r.opts.Gateway, "openshell-gateway")
	if err != nil {
		c.fail("gateway", fmt.Errorf("%w: no gateway is healthy and %w", ErrPreflight, err),
			"install openshell-gateway, or register a running gateway and use --gateway existing")
	} else {
		pre.gateway = gw
		c.ok("gateway", fmt.Sprintf("status %q: the run starts %s", cmp.Or(pre.status, "not checked"), gw))
	}
	r.checkDriver(c, pre)
	if img := r.opts.SupervisorImage; !PinnedImage(img) {
		c.fail("supervisor image", fmt.Errorf("%w: supervisor image %q is not pinned by digest", ErrPreflight, img),
			"pass --supervisor-image ghcr.io/nvidia/openshell/supervisor@sha256:... ("+handover.SupervisorImage+")")
	} else {
		c.ok("supervisor image", img)
	}
}

// registeredGateway looks at the registered gateway's status. It reports
// whether the check is decided: a connected gateway is used, a status
// that cannot be read or (mode existing) a gateway that is not connected
// fails; otherwise the run starts one.
func registeredGateway(ctx context.Context, c *checker, d *driver, pre *prereqs) bool {
	st, err := d.Status(ctx)
	if err != nil {
		c.fail("gateway", fmt.Errorf("%w: gateway status: %w", ErrPreflight, errOr(ctxErr(ctx), err)), "")
		return true
	}
	pre.status = st
	if st == statusConnected {
		c.ok("gateway", "a registered gateway is connected")
		return true
	}
	if pre.mode == GatewayExisting {
		c.fail("gateway", fmt.Errorf("%w: gateway status is %q and --gateway existing does not start one", ErrPreflight, st),
			"start and register a gateway (openshell gateway add URL --local --name N), or use --gateway auto")
		return true
	}
	return false
}

// checkDriver checks the compute driver of a gateway the run starts: the
// podman driver, through OPENSHELL_PODMAN_SOCKET when it answers, else
// podman's own API service.
func (r *Runner) checkDriver(c *checker, pre *prereqs) {
	if pre.driver != DefaultGatewayDriver {
		c.fail("driver", fmt.Errorf("%w: compute driver %q: the runner starts gateways with the podman driver only", ErrPreflight, pre.driver), "use --gateway-driver podman")
	} else if s, ok := r.opts.Env.Getenv("OPENSHELL_PODMAN_SOCKET"); ok && s != "" && socketAnswers(s) {
		pre.podmanSocket = s
		c.ok("driver", "podman API socket "+s)
	} else if p, err := r.lookPath(r.opts.Podman, "podman"); err != nil {
		c.fail("driver", fmt.Errorf("%w: the podman compute driver needs podman: %w", ErrPreflight, err),
			"install podman in the job image (the agent-sandbox image carries it) or set OPENSHELL_PODMAN_SOCKET to a running API socket")
	} else {
		pre.podman = p
		c.ok("driver", "podman ("+p+"), its API service started by the run")
	}
}

// uploadTargets are the sandbox paths bootstrap writes, by upload as the
// sandbox user: the runtime's directory, the runner's files and the
// workspace.
func (x *run) uploadTargets() []string {
	local, parent := runtimeDir(x.agent.Entry.Runtime)
	t := []string{parent + local, x.runnerDir()}
	if x.req.Workspace != "" {
		t = append(t, x.workdir())
	}
	return t
}

// checkWritable refuses, before any sandbox exists, a run whose uploads the
// policy's filesystem rules would refuse: the upload is `tar xf` run as the
// sandbox user under Landlock, where only read_write paths (and the workdir
// with include_workdir: crates/openshell-supervisor-process/src/sandbox/
// linux/landlock.rs:135-143 @ v0.0.111) take writes.
func checkWritable(c *checker, pol *openshell.Policy, targets []string) {
	var denied []string
	for _, t := range targets {
		if !policyWritable(pol, t) {
			denied = append(denied, t)
		}
	}
	if len(denied) > 0 {
		c.fail("filesystem", fmt.Errorf("%w: the policy's filesystem rules do not let the sandbox user write %s, where the runner uploads the agent's files",
			ErrPolicy, strings.Join(denied, ", ")),
			"give the tier read_write on those paths (sandbox.filesystem.read_write) or run a tier whose workdir is writable")
		return
	}
	c.ok("filesystem", "uploads land in read_write paths: "+strings.Join(targets, ", "))
}

// chooseStageRoot picks stageRoot for the resolved policy.
func chooseStageRoot(pol *openshell.Policy) string {
	if policyWritable(pol, sandboxHome) {
		return sandboxHome
	}
	return tmpRoot
}

// policyWritable reports whether Landlock lets the sandbox user write p.
func policyWritable(pol *openshell.Policy, p string) bool {
	fs := pol.FilesystemPolicy
	if fs == nil {
		return false
	}
	rw := fs.ReadWrite
	if fs.IncludeWorkdir {
		rw = append(append([]string(nil), rw...), sandboxHome)
	}
	p = path.Clean(p)
	for _, r := range rw {
		r = path.Clean(r)
		if p == r || r == "/" || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// preflight checks every prerequisite before anything is created and
// brings the gateway up. The returned stop func ends what the run started.
func (r *Runner) preflight(ctx context.Context, x *run) (stop func(), err error) {
	stop = func() {}
	pre := &prereqs{}
	c := &checker{}
	r.checkTools(ctx, c, x.d, pre)
	x.res.OpenShellVersion = pre.version
	if err := c.first(); err != nil {
		return stop, withFix(err, c)
	}
	x.sandboxImage = pre.sandbox.image
	if pre.sandbox.unverified {
		x.logf("warning: sandbox image %s was not verified: no fullsend verify hand-over (refused in CI)", x.sandboxImage)
	}
	pol, err := openshell.Unmarshal(x.policy)
	if err != nil {
		return stop, fmt.Errorf("%w: resolved policy: %w", ErrPolicy, err)
	}
	x.root = chooseStageRoot(pol)
	checkWritable(c, pol, x.uploadTargets())
	if err := c.first(); err != nil {
		return stop, withFix(err, c)
	}
	r.checkGateway(ctx, c, x.d, pre)
	if err := c.first(); err != nil {
		return stop, withFix(err, c)
	}
	if pre.status == statusConnected && pre.mode != GatewayStart {
		x.logf("openshell %s, gateway connected (mode %s)", pre.version, pre.mode)
		return stop, nil
	}
	x.logf("openshell %s; gateway status %q: starting one in the container (mode %s)", pre.version, cmp.Or(pre.status, "not checked"), pre.mode)
	return r.bringUp(ctx, x, pre)
}

// withFix appends the failed check's next step to its error.
func withFix(err error, c *checker) error {
	for _, ch := range c.checks {
		if ch.err == err && ch.Fix != "" {
			return &hintError{err: err, hint: ch.Fix}
		}
	}
	return err
}

// hintError is an error with the next step to take.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() + "; next: " + e.hint }
func (e *hintError) Unwrap() error { return e.err }
