package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
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
