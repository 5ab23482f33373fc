package openshell

import (
	"fmt"
	"sort"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// Policy mirrors one OpenShell sandbox policy document (version 1).
//
// Field order and YAML tags follow OpenShell's serde structs, so that encoding
// a Policy yields what `openshell sandbox create --policy` parses. Provenance
// lives in fields tagged `yaml:"-"`; it never reaches the emitted document.
type Policy struct {
	Version          int                      `yaml:"version" json:"version"`
	FilesystemPolicy *FilesystemPolicy        `yaml:"filesystem_policy,omitempty" json:"filesystem_policy,omitempty"`
	Landlock         *Landlock                `yaml:"landlock,omitempty" json:"landlock,omitempty"`
	Process          *Process                 `yaml:"process,omitempty" json:"process,omitempty"`
	NetworkPolicies  map[string]NetworkPolicy `yaml:"network_policies,omitempty" json:"network_policies,omitempty"`
}

// FilesystemPolicy is the static filesystem section, fixed at sandbox creation.
type FilesystemPolicy struct {
	IncludeWorkdir bool     `yaml:"include_workdir" json:"include_workdir"`
	ReadOnly       []string `yaml:"read_only" json:"read_only"`
	ReadWrite      []string `yaml:"read_write" json:"read_write"`

	// Sources maps each path in ReadOnly or ReadWrite to what caused it.
	Sources map[string][]bundle.Source `yaml:"-" json:"-"`
}

// Landlock selects how strictly Landlock must be available on the host.
type Landlock struct {
	Compatibility string `yaml:"compatibility" json:"compatibility"`
}

// Landlock compatibility values OpenShell understands; any other string is
// silently treated as best_effort by OpenShell, so we never emit one.
const (
	LandlockBestEffort      = "best_effort"
	LandlockHardRequirement = "hard_requirement"
)

// Process names the user and group the agent runs as inside the sandbox.
type Process struct {
	RunAsUser  string `yaml:"run_as_user" json:"run_as_user"`
	RunAsGroup string `yaml:"run_as_group" json:"run_as_group"`
}

// NetworkPolicy is one entry of network_policies: a set of endpoints reachable
// by a set of binaries. A connection is allowed when one policy matches both.
type NetworkPolicy struct {
	Name      string     `yaml:"name" json:"name"`
	Endpoints []Endpoint `yaml:"endpoints" json:"endpoints"`
	Binaries  []Binary   `yaml:"binaries" json:"binaries"`

	From []bundle.Source `yaml:"-" json:"-"`
}

// Endpoint is one host (and port or ports) with its L7 settings.
type Endpoint struct {
	Host        string   `yaml:"host" json:"host"`
	Port        int      `yaml:"port,omitempty" json:"port,omitempty"`
	Ports       []int    `yaml:"ports,omitempty" json:"ports,omitempty"`
	Protocol    string   `yaml:"protocol,omitempty" json:"protocol,omitempty"`
	TLS         string   `yaml:"tls,omitempty" json:"tls,omitempty"`
	Enforcement string   `yaml:"enforcement,omitempty" json:"enforcement,omitempty"`
	Access      string   `yaml:"access,omitempty" json:"access,omitempty"`
	Rules       []Rule   `yaml:"rules,omitempty" json:"rules,omitempty"`
	DenyRules   []Match  `yaml:"deny_rules,omitempty" json:"deny_rules,omitempty"`
	AllowedIPs  []string `yaml:"allowed_ips,omitempty" json:"allowed_ips,omitempty"`

	From []bundle.Source `yaml:"-" json:"-"`
}

// Rule is one L7 allow rule. OpenShell wraps the match in `allow:`.
type Rule struct {
	Allow Match `yaml:"allow" json:"allow"`

	From []bundle.Source `yaml:"-" json:"-"`
	// Reads marks a non-GET rule that only reads (git's upload-pack POST),
	// so it does not raise the agent's tier. Never emitted.
	Reads bool `yaml:"-" json:"-"`
}

// Match selects requests by method, path glob and query parameter globs.
type Match struct {
	Method string                `yaml:"method" json:"method"`
	Path   string                `yaml:"path" json:"path"`
	Query  map[string]QueryMatch `yaml:"query,omitempty" json:"query,omitempty"`

	From []bundle.Source `yaml:"-" json:"-"`
}

// QueryMatch matches one query parameter: a single glob, or any of several.
// It encodes as a plain string when Any is empty and as {any: [...]} otherwise.
type QueryMatch struct {
	Glob string   `json:"glob,omitempty"`
	Any  []string `json:"any,omitempty"`
}

// MarshalYAML implements yaml.Marshaler.
func (q QueryMatch) MarshalYAML() (any, error) {
	if len(q.Any) > 0 {
		return map[string][]string{"any": q.Any}, nil
	}
	return q.Glob, nil
}

// Binary is one executable path or glob allowed to use a network policy.
type Binary struct {
	Path string `yaml:"path" json:"path"`

	From []bundle.Source `yaml:"-" json:"-"`
}

// Enumerations of the OpenShell schema that the compiler emits or checks.
const (
	ProtocolREST      = "rest"
	ProtocolWebsocket = "websocket"
	ProtocolGraphQL   = "graphql"
	ProtocolMCP       = "mcp"
	ProtocolJSONRPC   = "json-rpc"
	ProtocolSQL       = "sql"
	ProtocolTCP       = "tcp"

	EnforcementEnforce = "enforce"
	EnforcementAudit   = "audit"

	AccessReadOnly  = "read-only"
	AccessReadWrite = "read-write"
	AccessFull      = "full"

	TLSSkip = "skip"
)

// Provenance flattens every element's sources into a map keyed by policy
// path, the same dotted/indexed path lint findings use, for example
// `network_policies.github_api.endpoints[0].rules[1]` or
// `filesystem_policy.read_only[2]`.
func (p *Policy) Provenance() map[string][]bundle.Source {
	out := map[string][]bundle.Source{}
	add := func(path string, src []bundle.Source) {
		if len(src) > 0 {
			out[path] = append([]bundle.Source(nil), src...)
		}
	}
	if fs := p.FilesystemPolicy; fs != nil {
		for i, path := range fs.ReadOnly {
			add(fmt.Sprintf("filesystem_policy.read_only[%d]", i), fs.Sources[path])
		}
		for i, path := range fs.ReadWrite {
			add(fmt.Sprintf("filesystem_policy.read_write[%d]", i), fs.Sources[path])
		}
	}
	for _, key := range p.PolicyKeys() {
		np := p.NetworkPolicies[key]
		base := "network_policies." + key
		add(base, np.From)
		for i, ep := range np.Endpoints {
			epPath := fmt.Sprintf("%s.endpoints[%d]", base, i)
			add(epPath, ep.From)
			for j, r := range ep.Rules {
				add(fmt.Sprintf("%s.rules[%d]", epPath, j), r.From)
			}
			for j, r := range ep.DenyRules {
				add(fmt.Sprintf("%s.deny_rules[%d]", epPath, j), r.From)
			}
		}
		for i, b := range np.Binaries {
			add(fmt.Sprintf("%s.binaries[%d]", base, i), b.From)
		}
	}
	return out
}

// PolicyKeys returns the network policy keys in sorted order, the order in
// which they are emitted.
func (p *Policy) PolicyKeys() []string {
	keys := make([]string, 0, len(p.NetworkPolicies))
	for k := range p.NetworkPolicies {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
