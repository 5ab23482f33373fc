package resolve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// Source is where a job's values are read from: the machine the runner
// runs on, injected so that tests run in memory.
type Source struct {
	// Getenv reads environment variables (nil: none are set).
	Getenv func(key string) (string, bool)
	// Root is the filesystem rooted at "/": event payloads and
	// /proc/net/route are read through it by absolute path.
	Root fs.FS
	// LookupHost resolves a host name (net.DefaultResolver.LookupHost); nil
	// skips the host.docker.internal lookup.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// Explicit is how the caller spells the explicit values it passes to
	// Resolve (the CLI's "--set"): it names their origin in
	// Resolution.From and prefixes NAME=VALUE in hints. Empty names them
	// "explicit" and hints a plain NAME=VALUE.
	Explicit string
}

// value reads one variable for cienv: empty when unset.
func (e Source) value(k string) string {
	if e.Getenv == nil {
		return ""
	}
	v, _ := e.Getenv(k)
	return v
}

// Unresolved is the error of Resolve: every placeholder left unresolved or
// invalid, each with a hint.
type Unresolved struct {
	Problems []string
}

func (u *Unresolved) Error() string {
	return strconv.Itoa(len(u.Problems)) + " runtime placeholder(s) unresolved, refusing to start:\n  " + strings.Join(u.Problems, "\n  ")
}

// explicitFrom is the origin of an explicit value in Resolution.From.
func (e Source) explicitFrom() string {
	if e.Explicit == "" {
		return "explicit"
	}
	return e.Explicit
}

// assign spells an explicit assignment for a hint: "--set NAME=VALUE".
func (e Source) assign(name, value string) string {
	return strings.TrimSpace(e.Explicit + " " + name + "=" + value)
}

// hostDockerInternal is the name Docker Desktop and `--add-host
// host.docker.internal:host-gateway` give the host.
const hostDockerInternal = "host.docker.internal"

// Resolution is the outcome of resolving runtime placeholders: the values
// found, and for each value where it came from.
type Resolution struct {
	CI     cienv.Kind
	Values placeholder.Values
	// From maps each resolved name to its origin, for logs and the summary.
	From map[string]string
}

// Resolve resolves the named placeholders: an explicit value in set wins,
// then the CI environment. Every value is validated by its placeholder's
// rules. Any name left unresolved or invalid is an *Unresolved error that
// lists all of them with a hint; the resolution holds the others.
func (e Source) Resolve(ctx context.Context, names []string, set placeholder.Values) (*Resolution, error) {
	env := cienv.Detect(e.value)
	res := &Resolution{CI: env.Kind(), Values: placeholder.Values{}, From: map[string]string{}}
	var problems []string
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	var offered map[string]found
	for _, name := range sorted {
		if v, ok := set[name]; ok {
			if err := res.Values.Set(name, v); err != nil {
				problems = append(problems, err.Error())
				continue
			}
			res.From[name] = e.explicitFrom()
			continue
		}
		if offered == nil {
			offered = e.fromCI(ctx, env, sorted)
		}
		if p := e.take(res, name, offered[name]); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return res, &Unresolved{Problems: problems}
	}
	return res, nil
}

// take stores the value the CI offered for name in res, or returns the
// problem with it.
func (e Source) take(res *Resolution, name string, f found) string {
	switch {
	case f.value == "" && f.err == nil:
		return fmt.Sprintf("{{%s}} is not set: %s", name, e.hint(res.CI, name))
	case f.err != nil:
		return fmt.Sprintf("{{%s}}: %v (from %s); pass %s to override", name, f.err, f.from, e.assign(name, "VALUE"))
	}
	if err := res.Values.Set(name, f.value); err != nil {
		return fmt.Sprintf("%v (from %s); pass %s to override", err, f.from, e.assign(name, "VALUE"))
	}
	res.From[name] = f.from
	return ""
}

type found struct {
	value string
	from  string
	err   error
}

// fromCI reads the values the CI system offers for the wanted names; every
// value read is trimmed of white space.
func (e Source) fromCI(ctx context.Context, env cienv.Env, names []string) map[string]found {
	out := map[string]found{}
	env = env.Trim()
	for name, v := range map[string]cienv.Value{
		placeholder.Owner: env.Owner(), placeholder.RepoName: env.RepoName(), placeholder.ForgeHost: env.ForgeAPIHost(),
		// The Vertex project and region Claude Code itself is configured with.
		placeholder.GCPProject: env.VertexProject(), placeholder.GCPRegion: env.VertexRegion(), placeholder.AWSRegion: env.AWSRegion(),
	} {
		if v.Found() {
			out[name] = found{value: v.Value, from: v.From, err: v.Err}
		}
	}
	if o, ok := out[placeholder.Owner]; ok && env.Kind() == cienv.GitLabCI && strings.Contains(o.value, "/") {
		out[placeholder.Owner] = found{from: o.from, err: fmt.Errorf("namespace %q is a subgroup path; {{OWNER}} is one path segment", o.value)}
	}
	if n, ok := e.issueNumber(env, slices.Contains(names, placeholder.IssueNumber)); ok {
		out[placeholder.IssueNumber] = n
	}
	if slices.Contains(names, placeholder.HostIP) {
		out[placeholder.HostIP] = e.hostIP(ctx)
	}
	return out
}

// issueNumber is the issue number the CI offers: its own variable, else,
// when the number is wanted, the one in the webhook payload.
func (e Source) issueNumber(env cienv.Env, wanted bool) (found, bool) {
	src := env.IssueSource()
	switch {
	case src.Number.Value != "":
		return found{value: src.Number.Value, from: src.Number.From}, true
	case wanted && src.Payload.Value != "":
		p := src.Payload.Value
		n, err := e.payloadIssue(env.Kind(), p)
		return found{value: n, from: src.Payload.From + " " + p, err: err}, true
	}
	return found{}, false
}

// payloadIssue reads the issue number from the webhook payload at p.
func (e Source) payloadIssue(kind cienv.Kind, p string) (string, error) {
	if kind == cienv.GitLabCI {
		return e.gitlabIID(p)
	}
	return e.githubIssue(p)
}

func (e Source) readAbs(p string) ([]byte, error) {
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

func (e Source) githubIssue(p string) (string, error) {
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

func (e Source) gitlabIID(p string) (string, error) {
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
func (e Source) hostIP(ctx context.Context) found {
	if ip, ok := e.dockerHost(ctx); ok {
		return found{value: ip, from: hostDockerInternal}
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

// dockerHost returns the first address host.docker.internal resolves to
// that is a valid {{HOST_IP}}.
func (e Source) dockerHost(ctx context.Context) (string, bool) {
	if e.LookupHost == nil {
		return "", false
	}
	addrs, err := e.LookupHost(ctx, hostDockerInternal)
	if err != nil {
		return "", false
	}
	for _, a := range addrs {
		if ip, err := netip.ParseAddr(a); err == nil && placeholder.Validate(placeholder.HostIP, ip.String()) == nil {
			return ip.String(), true
		}
	}
	return "", false
}

// hint tells the user where a placeholder's value is expected to come from.
func (e Source) hint(kind cienv.Kind, name string) string {
	src := map[cienv.Kind]map[string]string{
		cienv.GitHubActions: {
			placeholder.Owner:       cienv.GitHubRepository,
			placeholder.RepoName:    cienv.GitHubRepository,
			placeholder.IssueNumber: "the event payload (issue.number, pull_request.number or inputs.issue_number)",
			placeholder.ForgeHost:   cienv.GitHubAPIURL + " or " + cienv.GitHubServerURL,
		},
		cienv.GitLabCI: {
			placeholder.Owner:       cienv.GitLabNamespace,
			placeholder.RepoName:    cienv.GitLabProjectName,
			placeholder.IssueNumber: cienv.GitLabMergeRequest + " or the " + cienv.GitLabTriggerPayload + " iid",
			placeholder.ForgeHost:   cienv.GitLabServerHost,
		},
	}
	if s, ok := src[kind][name]; ok {
		return fmt.Sprintf("expected from %s; pass %s", s, e.assign(name, "VALUE"))
	}
	if name == placeholder.HostIP {
		return "host.docker.internal did not resolve and no default route was found; pass " + e.assign(placeholder.HostIP, "ADDRESS")
	}
	return fmt.Sprintf("not derivable in %s CI; pass %s", kind, e.assign(name, "VALUE"))
}
