package runner

import (
	"context"
	"fmt"
	"io/fs"
	"sort"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/runner/resolve"
)

// Getenv looks up one environment variable. The runner never reads the
// process environment itself: callers inject it (os.LookupEnv in the CLI, a
// map in tests).
type Getenv func(key string) (string, bool)

// MapEnv returns a Getenv over a fixed map.
func MapEnv(m map[string]string) Getenv {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// MapEnvironment returns an Environment over a fixed map and filesystem,
// without DNS: for tests and embedding.
func MapEnvironment(m map[string]string, root fs.FS) Environment {
	return Environment{
		Getenv: MapEnv(m),
		Environ: func() []string {
			out := make([]string, 0, len(m))
			for k, v := range m {
				out = append(out, k+"="+v)
			}
			sort.Strings(out)
			return out
		},
		Root: root,
	}
}

// CIKind names the CI system the runner is in (cienv.Kind).
type CIKind = cienv.Kind

// CI systems the runner adapts to.
const (
	CIGitHub = cienv.GitHubActions
	CIGitLab = cienv.GitLabCI
	CILocal  = cienv.Local
)

// value reads one variable for cienv: empty when unset.
func (g Getenv) value(k string) string {
	if g == nil {
		return ""
	}
	v, _ := g(k)
	return v
}

// Environment is everything the runner reads from the machine it runs on,
// injected so that tests can run in memory.
type Environment struct {
	// Getenv reads environment variables.
	Getenv Getenv
	// Environ lists the whole environment as KEY=VALUE; the runner passes
	// only OPENSHELL_* entries from it to the openshell CLI.
	Environ func() []string
	// Root is the filesystem rooted at "/": event payloads and /proc/net/route
	// are read through it by absolute path.
	Root fs.FS
	// LookupHost resolves a host name (net.DefaultResolver.LookupHost); nil
	// skips the host.docker.internal lookup.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// Explicit is how the caller spells the explicit placeholder values it
	// passes to Resolve (the CLI's "--set"): it names their origin in
	// Resolution.From and prefixes NAME=VALUE in hints. Empty names them
	// "explicit" and hints a plain NAME=VALUE.
	Explicit string
}

// CI is the CI environment the runner is in, read through Getenv.
func (e Environment) CI() cienv.Env { return cienv.Detect(e.Getenv.value) }

// Resolve resolves the named placeholders (package resolve): an explicit
// value in set wins, then the CI environment. Every value is validated by
// its placeholder's rules. Any name left unresolved or invalid is an error
// wrapping ErrPlaceholder that lists all of them with a hint.
func (e Environment) Resolve(ctx context.Context, names []string, set placeholder.Values) (*resolve.Resolution, error) {
	src := resolve.Source{Getenv: e.Getenv, Root: e.Root, LookupHost: e.LookupHost, Explicit: e.Explicit}
	res, err := src.Resolve(ctx, names, set)
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrPlaceholder, err)
	}
	return res, nil
}
