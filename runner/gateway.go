package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"golang.org/x/mod/semver"
)

// lookPath finds an executable on the PATH of the injected environment.
func (r *Runner) lookPath(explicit, name string) (string, error) {
	if explicit != "" {
		if err := isExecutable(explicit); err != nil {
			return "", err
		}
		return explicit, nil
	}
	pathEnv, _ := r.opts.Env.Getenv("PATH")
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would run whatever the workspace holds
		}
		p := filepath.Join(dir, name)
		if isExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH", name)
}

func isExecutable(p string) error {
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// childEnvKeys are the variables openshell gets from the runner's
// environment; OPENSHELL_* variables are passed too. Everything else (CI
// tokens, model API keys) stays out of the CLI's reach unless a provider
// names it.
var childEnvKeys = []string{"PATH", "HOME", "USER", "TMPDIR", "LANG", "LC_ALL", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"}

// childEnv builds the minimal environment of every openshell call.
func (r *Runner) childEnv() []string {
	env := []string{"NO_COLOR=1"}
	for _, k := range childEnvKeys {
		if v, ok := r.opts.Env.Getenv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if r.opts.Env.Environ == nil {
		return env
	}
	for _, kv := range r.opts.Env.Environ() {
		if strings.HasPrefix(kv, "OPENSHELL_") {
			env = append(env, kv)
		}
	}
	return env
}

// preflight finds openshell, checks its version against the manifest and
// makes sure a gateway is healthy, starting one when allowed. The returned
// stop func ends a gateway the runner started (no-op otherwise).
func (r *Runner) preflight(ctx context.Context, x *run) (stop func(), err error) {
	stop = func() {}
	bin, err := r.lookPath(r.opts.OpenShell, "openshell")
	if err != nil {
		return stop, fmt.Errorf("%w: %w; the runner never runs an agent outside a sandbox", ErrPreflight, err)
	}
	x.d.bin = bin
	v, err := x.d.Version(ctx)
	if err != nil {
		return stop, fmt.Errorf("%w: reading openshell version: %w", ErrPreflight, errOr(ctxErr(ctx), err))
	}
	x.res.OpenShellVersion = v
	compiledFor := r.project.Manifest.OpenShellVersion
	if compiledFor == "" {
		return stop, fmt.Errorf("%w: manifest openshell_version is empty", ErrPolicy)
	}
	want, err := openshell.NormalizeVersion(compiledFor)
	if err != nil {
		return stop, fmt.Errorf("%w: manifest openshell_version %q: %w", ErrPolicy, compiledFor, err)
	}
	if semver.Compare(v, want) != 0 || semver.Prerelease(v) != "" || semver.Build(v) != "" {
		return stop, fmt.Errorf("%w: openshell %s is installed (%s) but the policies were compiled for %s; "+
			"recompile with --openshell-version %s or use the image built for them", ErrPreflight, v, bin, want, v)
	}
	x.d.version = v
	st, err := x.d.Status(ctx)
	if err != nil {
		return stop, fmt.Errorf("%w: gateway status: %w", ErrPreflight, errOr(ctxErr(ctx), err))
	}
	if st == statusConnected {
		x.logf("openshell %s, gateway %s", v, st)
		return stop, nil
	}
	if !r.opts.StartGateway {
		return stop, fmt.Errorf("%w: gateway status is %q and starting one is disabled", ErrPreflight, st)
	}
	x.logf("gateway status %q: starting openshell-gateway inside the container", st)
	return r.startGateway(ctx, x)
}

// startGateway starts openshell-gateway as a child in its own process group
// and waits, with backoff, until `openshell status` says connected.
func (r *Runner) startGateway(ctx context.Context, x *run) (func(), error) {
	noop := func() {}
	bin, err := r.lookPath(r.opts.Gateway, "openshell-gateway")
	if err != nil {
		return noop, fmt.Errorf("%w: no gateway is running and %w", ErrPreflight, err)
	}
	logPath := filepath.Join(x.tmp, "gateway.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return noop, fmt.Errorf("%w: %w", ErrPreflight, err)
	}
	cmd := exec.Command(bin, r.opts.GatewayArgs...)
	cmd.Env = x.d.env
	cmd.Stdout, cmd.Stderr = logf, logf
	newProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return noop, fmt.Errorf("%w: starting %s: %w", ErrPreflight, bin, err)
	}
	x.gatewayLog = logPath
	x.res.GatewayStarted = true
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logf.Close() }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = terminate(cmd.Process)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
	}
	deadline := time.Now().Add(r.opts.GatewayTimeout)
	last := ""
	for i := 0; ; i++ {
		select {
		case err := <-exited:
			exited <- err
			// err is nil when the gateway exited 0: %v, not %w.
			return stop, fmt.Errorf("%w: openshell-gateway exited before it was healthy (%v); see %s", ErrPreflight, err, logPath)
		default:
		}
		st, err := x.d.Status(ctx)
		if cerr := ctxErr(ctx); cerr != nil {
			return stop, cerr
		}
		if err == nil && st == statusConnected {
			x.logf("gateway healthy after %d status checks", i+1)
			return stop, nil
		}
		last = st
		if err != nil {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return stop, fmt.Errorf("%w: openshell-gateway not healthy after %s (last status %q)", ErrPreflight, r.opts.GatewayTimeout, last)
		}
		if err := sleep(ctx, r.backoff(i)); err != nil {
			return stop, err
		}
	}
}

// backoff returns the i-th delay of an exponential backoff from
// PollInterval, capped at 16x.
func (r *Runner) backoff(i int) time.Duration {
	if i > 4 {
		i = 4
	}
	return r.opts.PollInterval << i
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctxErr(ctx)
	}
}

// errOr returns first when it is not nil, else second.
func errOr(first, second error) error {
	if first != nil {
		return first
	}
	return second
}
