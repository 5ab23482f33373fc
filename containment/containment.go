package containment

import (
	"cmp"
	"fmt"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// Kind is what a Violation widens: the kinds a declared widening names.
type Kind string

// The kinds of grant a child may hold beyond its parent.
const (
	// KindNetwork is a request (binary, host, port, method, path or
	// address) the child may send and the parent may not.
	KindNetwork Kind = "network"
	// KindFilesystem is a path the child may read or write and the parent
	// may not.
	KindFilesystem Kind = "filesystem"
	// KindProcess is a process or sandbox setting of the child that is
	// weaker than the parent's (user, group, Landlock, middlewares).
	KindProcess Kind = "process"
)

// Options are the settings of one containment proof.
type Options struct {
	// Version is the OpenShell release both policies are decided at (""
	// is openshell.DefaultOpenShellVersion).
	Version string
	// Values are placeholder values both policies run with; a placeholder
	// without one gets a sentinel value (Sentinels).
	Values placeholder.Values
	// Workdir is the sandbox's working directory, which include_workdir
	// adds to read_write (landlock.rs:137-143 @ v0.0.111); "" when not
	// known, and include_workdir then covers no path.
	Workdir string
}

// Violation is one grant of the child that the proof could not find in
// the parent, positioned at the child's source through the provenance the
// compiled policy keeps.
type Violation struct {
	Kind Kind `json:"kind"`
	// Host is the child endpoint's host pattern (network); Port and
	// Binary the port and binary of the grant; Request the grant in
	// `policy test` words ("GET /repos/**", "any request").
	Host    string `json:"host,omitempty"`
	Port    int    `json:"port,omitempty"`
	Binary  string `json:"binary,omitempty"`
	Request string `json:"request,omitempty"`
	// Path is the filesystem path (filesystem) and Access its access
	// (read-only, read-write).
	Path   string `json:"path,omitempty"`
	Access string `json:"access,omitempty"`
	// Element is the child policy element that grants it, as a policy
	// path (network_policies.k.endpoints[0].rules[1]).
	Element string `json:"element"`
	// From is where the child's definition asked for it.
	From []bundle.Source `json:"from,omitempty"`
	// Reason says why the parent does not cover it.
	Reason string `json:"reason"`
	// Witness is a concrete request the child allows and the parent
	// denies, when the decision engine found one.
	Witness string `json:"witness,omitempty"`
}

// Subject is what a declared widening must name to allow v: the host
// pattern (network), the path (filesystem) or "process".
func (v Violation) Subject() string {
	switch v.Kind {
	case KindNetwork:
		return v.Host
	case KindFilesystem:
		return v.Path
	}
	return string(KindProcess)
}

// Declaration is the sandbox.spawn-widening field a parent would declare
// to allow v: `hosts: ["HOST"]`, `paths: [PATH]` or `process: true`.
func (v Violation) Declaration() string {
	switch v.Kind {
	case KindNetwork:
		return fmt.Sprintf("hosts: [%q]", v.Host)
	case KindFilesystem:
		return fmt.Sprintf("paths: [%s]", v.Path)
	}
	return "process: true"
}

// Grant renders what the child may do, e.g. "/usr/bin/curl to
// docs.example.com:443: GET /**" or "read-write /data".
func (v Violation) Grant() string {
	switch v.Kind {
	case KindNetwork:
		return fmt.Sprintf("%s to %s:%d: %s", v.Binary, v.Host, v.Port, v.Request)
	case KindFilesystem:
		return v.Access + " " + v.Path
	}
	return v.Element
}

// String renders the violation on one line.
func (v Violation) String() string {
	s := fmt.Sprintf("%s (%s): %s", v.Grant(), v.Element, v.Reason)
	if v.Witness != "" {
		s += "; e.g. " + v.Witness
	}
	return s
}

// Check proves child contained in parent and returns every grant of the
// child it could not prove, in the child's policy order (filesystem,
// process, then network policies by key); none means contained. A
// policy the decision engine cannot prepare is an error.
func Check(child, parent *openshell.Policy, opts Options) ([]Violation, error) {
	c, p, err := prepare(child, parent, opts)
	if err != nil {
		return nil, err
	}
	var out []Violation
	out = append(out, checkFilesystem(c.pol, p.pol, child.FilesystemPolicy, opts.Workdir)...)
	out = append(out, checkProcess(c.pol, p.pol)...)
	out = append(out, checkNetwork(c, p)...)
	return out, nil
}

// side is one policy prepared for the proof: placeholders substituted,
// its endpoints indexed and a decider built.
type side struct {
	pol     *openshell.Policy
	eps     []endpointRef
	d       *decide.Decider
	version string
}

// prepare substitutes the same placeholder values into copies of both
// policies and builds their deciders.
func prepare(child, parent *openshell.Policy, opts Options) (*side, *side, error) {
	vals := Sentinels()
	for k, v := range opts.Values {
		vals[k] = v
	}
	version, err := openshell.NormalizeVersion(cmp.Or(opts.Version, openshell.DefaultOpenShellVersion))
	if err != nil {
		return nil, nil, err
	}
	var sides [2]*side
	for i, pol := range []*openshell.Policy{child, parent} {
		cp := pol.Clone()
		if _, err := openshell.ApplyPlaceholders(cp, vals); err != nil {
			return nil, nil, fmt.Errorf("substituting placeholders: %w", err)
		}
		d, err := decide.New(cp, version)
		if err != nil {
			return nil, nil, fmt.Errorf("preparing the decision engine: %w", err)
		}
		sides[i] = &side{pol: cp, eps: indexEndpoints(cp, pol), d: d, version: version}
	}
	return sides[0], sides[1], nil
}

// Sentinels are the values Check gives a placeholder Options.Values
// leaves open: valid for the placeholder, and unlike any value a policy
// would name literally, so that a literal never stands in for a
// placeholder on the other side.
func Sentinels() placeholder.Values {
	v := placeholder.Examples()
	for name, s := range sentinels {
		if _, ok := v[name]; ok {
			v[name] = s
		}
	}
	return v
}

// sentinels replace the example values that a policy could name
// literally (api.github.com, fullsend-ai, 1, 172.17.0.1).
var sentinels = map[string]string{
	"OWNER":        "fullsend-sentinel-owner",
	"REPO_NAME":    "fullsend-sentinel-repo",
	"ISSUE_NUMBER": "987654321",
	"HOST_IP":      "192.0.2.254",
	"FORGE_HOST":   "forge.fullsend-sentinel.example",
}
