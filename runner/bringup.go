package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/agent-sandbox/runner/childproc"
)

// Gateway modes (Options.GatewayMode, `fullsend run --gateway`).
const (
	// GatewayAuto uses a registered, healthy gateway and starts one when
	// there is none (the default).
	GatewayAuto = "auto"
	// GatewayExisting uses a registered, healthy gateway (a VM runner set
	// up like fullsend's) and never starts one.
	GatewayExisting = "existing"
	// GatewayStart always starts a gateway of the run's own inside the job
	// container.
	GatewayStart = "start"
)

// DefaultGatewayDriver is the compute driver of a gateway the runner
// starts: Podman, which the agent-sandbox image carries (fullsend ADR
// 0036). It is passed explicitly, so that the gateway never auto-detects
// the kubernetes driver under GitLab's Kubernetes executor
// (KUBERNETES_SERVICE_HOST is checked first: crates/openshell-core/src/
// config.rs detect_driver v0.0.83:155-160, v0.0.111:192-197).
const DefaultGatewayDriver = "podman"

// gatewayName is the name a started gateway is registered under.
const gatewayName = "fullsend"

// gatewayMode returns the effective mode.
func (o *Options) gatewayMode() string {
	switch {
	case o.GatewayMode != "":
		return o.GatewayMode
	case o.StartGateway:
		return GatewayAuto
	}
	return GatewayExisting
}

// ValidGatewayMode reports whether m names a gateway mode.
func ValidGatewayMode(m string) bool {
	return m == GatewayAuto || m == GatewayExisting || m == GatewayStart
}

// bringUp is mode (b): it starts the Podman API service (unless a socket
// already answers), then openshell-gateway with an explicit driver, TLS off
// on 127.0.0.1 and an explicit port, a supervisor image pinned by digest
// through --config; it polls `status` against that endpoint until exit 0
// and "connected" (a non-zero status is "not up yet"), bounded by
// GatewayTimeout, and registers it with `gateway add URL --local --name`.
// It follows OpenShell's own contract (crates/openshell-server/src/cli.rs
// v0.0.111:50-64,80-85,100-132,299-308; v0.0.83:47-61,77-82,97-128,286) and
// the bring-ups of openkaiden/kaiden and OpenShell's install.sh.
func (r *Runner) bringUp(ctx context.Context, x *run, pre *prereqs) (func(), error) {
	var stops []func()
	stopAll := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	started := time.Now()
	env := append([]string(nil), x.d.env...)
	socket, err := r.startPodman(ctx, x, pre, env, &stops)
	if err != nil {
		return stopAll, err
	}
	env = append(env, "OPENSHELL_PODMAN_SOCKET="+socket)
	port := r.opts.GatewayPort
	if port == 0 {
		p, err := freePort()
		if err != nil {
			return stopAll, fmt.Errorf("%w: choosing a gateway port: %w", ErrPreflight, err)
		}
		port = p
	}
	cfg := filepath.Join(x.tmp, "gateway.toml")
	toml := "[openshell]\nversion = 1\n\n[openshell.gateway]\nsupervisor_image = " + strconv.Quote(r.opts.SupervisorImage) + "\n"
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		return stopAll, fmt.Errorf("%w: writing the gateway config: %w", ErrPreflight, err)
	}
	args := []string{"--config", cfg, "--drivers", pre.driver, "--disable-tls", "--bind-address", "127.0.0.1", "--port", strconv.Itoa(port)}
	args = append(args, r.opts.GatewayArgs...)
	stop, err := r.startChild(x, "openshell-gateway", pre.gateway, args, env)
	if err != nil {
		return stopAll, err
	}
	stops = append(stops, stop)
	x.res.GatewayStarted = true
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := r.waitHealthy(ctx, x, port, endpoint); err != nil {
		return stopAll, err
	}
	if err := x.registerGateway(ctx, endpoint); err != nil {
		return stopAll, err
	}
	// Every later call names the endpoint too, so that another gateway a
	// user selected cannot be picked up instead.
	x.d.env = append(x.d.env, "OPENSHELL_GATEWAY_ENDPOINT="+endpoint)
	x.res.GatewayEndpoint = endpoint
	x.logf("gateway started: %s, driver %s, supervisor %s, healthy after %s", endpoint, pre.driver, r.opts.SupervisorImage, time.Since(started).Round(time.Millisecond))
	return stopAll, nil
}

// startPodman starts the Podman API service on a socket of its own unless
// one already answers (pre.podmanSocket), adding its stops to stops, and
// returns the socket.
func (r *Runner) startPodman(ctx context.Context, x *run, pre *prereqs, env []string, stops *[]func()) (string, error) {
	if pre.podmanSocket != "" {
		return pre.podmanSocket, nil
	}
	// A unix socket path is limited to 107 bytes: a short directory of
	// its own, not the run's temporary directory.
	sockDir, err := os.MkdirTemp("", "fs-pm-")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrPreflight, err)
	}
	*stops = append(*stops, func() { os.RemoveAll(sockDir) })
	socket := filepath.Join(sockDir, "podman.sock")
	stop, err := r.startChild(x, "podman", pre.podman, []string{"system", "service", "--time=0", "unix://" + socket}, env)
	if err != nil {
		return "", err
	}
	*stops = append(*stops, stop)
	if err := waitDial(ctx, x, "unix", socket, r.opts.GatewayTimeout); err != nil {
		return "", fmt.Errorf("%w: the Podman API service did not answer on %s: %w; see %s", ErrPreflight, socket, err, x.gatewayLog)
	}
	return socket, nil
}

// waitHealthy waits for the gateway the run started on port to accept
// connections, then polls `status` against endpoint until "connected",
// bounded by GatewayTimeout; a gateway process that exits ends the wait.
func (r *Runner) waitHealthy(ctx context.Context, x *run, port int, endpoint string) error {
	deadline := time.Now().Add(r.opts.GatewayTimeout)
	// A cheap wait for the port to accept connections first, so that the
	// `status` polls (a process each) start when they can succeed.
	if err := waitDial(ctx, x, "tcp", "127.0.0.1:"+strconv.Itoa(port), r.opts.GatewayTimeout); err != nil {
		return r.notAccepting(ctx, x, endpoint)
	}
	last := ""
	for i := 0; ; i++ {
		if err := x.childExited(); err != nil {
			return err
		}
		st, err := x.d.StatusAt(ctx, endpoint)
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		if err == nil && st == statusConnected {
			return nil
		}
		last = st
		if err != nil {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: the gateway started on %s is not healthy after %s (last status %q); see %s",
				ErrPreflight, endpoint, r.opts.GatewayTimeout, last, x.gatewayLog)
		}
		if err := sleep(ctx, r.backoff(i)); err != nil {
			return err
		}
	}
}

// notAccepting is the error of a gateway whose port never accepted a
// connection: the run was cancelled, the gateway exited, or it is not up
// in time.
func (r *Runner) notAccepting(ctx context.Context, x *run, endpoint string) error {
	if cerr := ctxErr(ctx); cerr != nil {
		return cerr
	}
	if xerr := x.childExited(); xerr != nil {
		return xerr
	}
	return fmt.Errorf("%w: the gateway started on %s does not accept connections after %s; see %s", ErrPreflight, endpoint, r.opts.GatewayTimeout, x.gatewayLog)
}

// registerGateway registers the gateway the run started under gatewayName
// (`gateway add URL --local --name`); a name an earlier run registered is
// kept, since every later call names the endpoint.
func (x *run) registerGateway(ctx context.Context, endpoint string) error {
	if err := x.d.GatewayAdd(ctx, endpoint, gatewayName); err != nil {
		var ce *CallError
		if !errors.As(err, &ce) || !strings.Contains(ce.Stderr, "already exists") {
			return fmt.Errorf("%w: registering the gateway: %w", ErrPreflight, errOr(ctxErr(ctx), err))
		}
		// An earlier run in this container registered the name; the CLI
		// refuses to add it again. Every later call names the endpoint
		// (bringUp), so the old registration is never used by this run.
		x.logf("gateway %q is already registered (an earlier run); this run names %s in every call", gatewayName, endpoint)
	}
	return nil
}

// startChild starts one long-lived helper (the Podman service, the
// gateway) in its own process group with its output in the gateway log,
// and returns its stop func (SIGTERM, SIGKILL after 10 s).
func (r *Runner) startChild(x *run, name, bin string, args, env []string) (func(), error) {
	if x.gatewayLog == "" {
		x.gatewayLog = filepath.Join(x.tmp, "gateway.log")
	}
	logf, err := os.OpenFile(x.gatewayLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return func() {}, fmt.Errorf("%w: %w", ErrPreflight, err)
	}
	fmt.Fprintf(logf, "== %s %v\n", name, args)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	childproc.NewProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return func() {}, fmt.Errorf("%w: starting %s: %w", ErrPreflight, bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logf.Close() }()
	x.children = append(x.children, child{name: name, exited: exited})
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = childproc.Terminate(cmd.Process)
			select {
			case err := <-exited:
				exited <- err
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
			}
		})
	}, nil
}

// child is a helper process the run started.
type child struct {
	name   string
	exited chan error
}

// childExited reports a helper that ended before the gateway was healthy.
func (x *run) childExited() error {
	for _, c := range x.children {
		select {
		case err := <-c.exited:
			c.exited <- err
			// err is nil when it exited 0: %v, not %w.
			return fmt.Errorf("%w: %s exited before the gateway was healthy (%v); see %s", ErrPreflight, c.name, err, x.gatewayLog)
		default:
		}
	}
	return nil
}

// waitDial waits, polling every 10 ms, until addr accepts a connection,
// a helper the run started exits, or timeout passes.
func waitDial(ctx context.Context, x *run, network, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if c, err := net.DialTimeout(network, addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		if err := x.childExited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}

// socketAnswers reports whether a unix socket accepts a connection.
func socketAnswers(path string) bool {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// freePort returns a loopback TCP port that is free now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
