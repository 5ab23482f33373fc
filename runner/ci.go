package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/placeholder"
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

// CIKind names the CI system the runner is in.
type CIKind string

// CI systems the runner adapts to.
const (
	CIGitHub CIKind = "github"
	CIGitLab CIKind = "gitlab"
	CILocal  CIKind = "local"
)

// DetectCI tells GitHub Actions, GitLab CI and anything else apart by their
// documented marker variables.
func DetectCI(getenv Getenv) CIKind {
	if v, _ := getenv("GITHUB_ACTIONS"); v == "true" {
		return CIGitHub
	}
	if v, _ := getenv("GITLAB_CI"); v == "true" {
		return CIGitLab
	}
	return CILocal
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
}

// hostDockerInternal is the name Docker Desktop and `--add-host
// host.docker.internal:host-gateway` give the host.
const hostDockerInternal = "host.docker.internal"

// Resolution is the outcome of resolving runtime placeholders: the values
// found, and for each value where it came from.
type Resolution struct {
	CI     CIKind
	Values placeholder.Values
	// From maps each resolved name to its origin, for logs and the summary.
	From map[string]string
}

// Resolve resolves the named placeholders: an explicit value in set wins,
// then the CI environment. Every value is validated by its placeholder's
// rules. Any name left unresolved or invalid is an error wrapping
// ErrPlaceholder that lists all of them with a hint.
func (e Environment) Resolve(ctx context.Context, names []string, set placeholder.Values) (*Resolution, error) {
	res := &Resolution{CI: DetectCI(e.Getenv), Values: placeholder.Values{}, From: map[string]string{}}
	var problems []string
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	var ci map[string]found
	for _, name := range sorted {
		if v, ok := set[name]; ok {
			if err := res.Values.Set(name, v); err != nil {
				problems = append(problems, err.Error())
				continue
			}
			res.From[name] = "--set"
			continue
		}
		if ci == nil {
			ci = e.fromCI(ctx, res.CI, sorted)
		}
		f, ok := ci[name]
		switch {
		case !ok || (f.value == "" && f.err == nil):
			problems = append(problems, fmt.Sprintf("{{%s}} is not set: %s", name, hint(res.CI, name)))
		case f.err != nil:
			problems = append(problems, fmt.Sprintf("{{%s}}: %v (from %s); pass --set %s=VALUE to override", name, f.err, f.from, name))
		default:
			if err := res.Values.Set(name, f.value); err != nil {
				problems = append(problems, fmt.Sprintf("%v (from %s); pass --set %s=VALUE to override", err, f.from, name))
				continue
			}
			res.From[name] = f.from
		}
	}
	if len(problems) > 0 {
		return res, fmt.Errorf("%w: %d runtime placeholder(s) unresolved, refusing to start:\n  %s",
			ErrPlaceholder, len(problems), strings.Join(problems, "\n  "))
	}
	return res, nil
}

type found struct {
	value string
	from  string
	err   error
}

// fromCI reads the values the CI system offers for the wanted names.
func (e Environment) fromCI(ctx context.Context, kind CIKind, names []string) map[string]found {
	out := map[string]found{}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	get := func(k string) string {
		if e.Getenv == nil {
			return ""
		}
		v, _ := e.Getenv(k)
		return strings.TrimSpace(v)
	}
	switch kind {
	case CIGitHub:
		if repo := get("GITHUB_REPOSITORY"); repo != "" {
			owner, name, ok := strings.Cut(repo, "/")
			if !ok || strings.Contains(name, "/") {
				err := fmt.Errorf("GITHUB_REPOSITORY %q is not OWNER/REPO", repo)
				out[placeholder.Owner] = found{from: "GITHUB_REPOSITORY", err: err}
				out[placeholder.RepoName] = found{from: "GITHUB_REPOSITORY", err: err}
			} else {
				out[placeholder.Owner] = found{value: owner, from: "GITHUB_REPOSITORY"}
				out[placeholder.RepoName] = found{value: name, from: "GITHUB_REPOSITORY"}
			}
		}
		if want[placeholder.IssueNumber] {
			if p := get("GITHUB_EVENT_PATH"); p != "" {
				n, err := e.githubIssue(p)
				out[placeholder.IssueNumber] = found{value: n, from: "GITHUB_EVENT_PATH " + p, err: err}
			}
		}
		if api := get("GITHUB_API_URL"); api != "" {
			h, err := urlHost(api)
			out[placeholder.ForgeHost] = found{value: h, from: "GITHUB_API_URL", err: err}
		} else if srv := get("GITHUB_SERVER_URL"); srv != "" {
			h, err := urlHost(srv)
			if h == "github.com" {
				h = "api.github.com" // github.com serves its REST API from api.github.com
			}
			out[placeholder.ForgeHost] = found{value: h, from: "GITHUB_SERVER_URL", err: err}
		}
	case CIGitLab:
		if ns := get("CI_PROJECT_NAMESPACE"); ns != "" {
			f := found{value: ns, from: "CI_PROJECT_NAMESPACE"}
			if strings.Contains(ns, "/") {
				f = found{from: "CI_PROJECT_NAMESPACE", err: fmt.Errorf("namespace %q is a subgroup path; {{OWNER}} is one path segment", ns)}
			}
			out[placeholder.Owner] = f
		}
		if name := get("CI_PROJECT_NAME"); name != "" {
			out[placeholder.RepoName] = found{value: name, from: "CI_PROJECT_NAME"}
		}
		if iid := get("CI_MERGE_REQUEST_IID"); iid != "" {
			out[placeholder.IssueNumber] = found{value: iid, from: "CI_MERGE_REQUEST_IID"}
		} else if want[placeholder.IssueNumber] {
			if p := get("TRIGGER_PAYLOAD"); p != "" {
				n, err := e.gitlabIID(p)
				out[placeholder.IssueNumber] = found{value: n, from: "TRIGGER_PAYLOAD " + p, err: err}
			}
		}
		if h := get("CI_SERVER_HOST"); h != "" {
			out[placeholder.ForgeHost] = found{value: strings.ToLower(h), from: "CI_SERVER_HOST"}
		}
	}
	if want[placeholder.HostIP] {
		out[placeholder.HostIP] = e.hostIP(ctx)
	}
	return out
}

func (e Environment) readAbs(p string) ([]byte, error) {
	if e.Root == nil {
		return nil, errors.New("no filesystem to read from")
	}
	if !path.IsAbs(p) {
		return nil, fmt.Errorf("%q is not an absolute path", p)
	}
	rel := strings.TrimPrefix(path.Clean(p), "/")
	if rel == "" {
		rel = "."
	}
	return fs.ReadFile(e.Root, rel)
}

func (e Environment) githubIssue(p string) (string, error) {
	data, err := e.readAbs(p)
	if err != nil {
		return "", fmt.Errorf("reading event payload: %w", err)
	}
	ev, err := ParseGitHubEvent(data)
	if err != nil {
		return "", err
	}
	return ev.IssueNumber()
}

func (e Environment) gitlabIID(p string) (string, error) {
	data, err := e.readAbs(p)
	if err != nil {
		return "", fmt.Errorf("reading trigger payload: %w", err)
	}
	pl, err := ParseGitLabPayload(data)
	if err != nil {
		return "", err
	}
	return pl.IID(), nil
}

// hostIP finds the address of the machine hosting the job container:
// host.docker.internal when it resolves to an IPv4 or IPv6 address, else the
// gateway of the default route.
func (e Environment) hostIP(ctx context.Context) found {
	if e.LookupHost != nil {
		if addrs, err := e.LookupHost(ctx, hostDockerInternal); err == nil {
			for _, a := range addrs {
				if ip, err := netip.ParseAddr(a); err == nil && placeholder.Validate(placeholder.HostIP, ip.String()) == nil {
					return found{value: ip.String(), from: hostDockerInternal}
				}
			}
		}
	}
	data, err := e.readAbs("/proc/net/route")
	if err != nil {
		return found{from: "/proc/net/route", err: err}
	}
	gw, err := ParseDefaultGateway(data)
	if err != nil {
		return found{from: "/proc/net/route", err: err}
	}
	return found{value: gw.String(), from: "default route (/proc/net/route)"}
}

func urlHost(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("%q is not an absolute URL", raw)
	}
	return strings.ToLower(u.Hostname()), nil
}

// hint tells the user where a placeholder's value is expected to come from.
func hint(kind CIKind, name string) string {
	src := map[CIKind]map[string]string{
		CIGitHub: {
			placeholder.Owner:       "GITHUB_REPOSITORY",
			placeholder.RepoName:    "GITHUB_REPOSITORY",
			placeholder.IssueNumber: "the event payload (issue.number, pull_request.number or inputs.issue_number)",
			placeholder.ForgeHost:   "GITHUB_API_URL or GITHUB_SERVER_URL",
		},
		CIGitLab: {
			placeholder.Owner:       "CI_PROJECT_NAMESPACE",
			placeholder.RepoName:    "CI_PROJECT_NAME",
			placeholder.IssueNumber: "CI_MERGE_REQUEST_IID or the TRIGGER_PAYLOAD iid",
			placeholder.ForgeHost:   "CI_SERVER_HOST",
		},
	}
	if s, ok := src[kind][name]; ok {
		return fmt.Sprintf("expected from %s; pass --set %s=VALUE", s, name)
	}
	if name == placeholder.HostIP {
		return "host.docker.internal did not resolve and no default route was found; pass --set HOST_IP=ADDRESS"
	}
	return fmt.Sprintf("not derivable in %s CI; pass --set %s=VALUE", kind, name)
}
