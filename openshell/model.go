package openshell

import (
	"fmt"
	"sort"
	"strings"

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
	// NetworkMiddlewares is v0.0.111's supervisor middleware section
	// (crates/openshell-policy/src/lib.rs:68 @ v0.0.111); v0.0.83 has no such
	// field and refuses it (PolicyFile is deny_unknown_fields there).
	NetworkMiddlewares map[string]NetworkMiddleware `yaml:"network_middlewares,omitempty" json:"network_middlewares,omitempty"`
}

// NetworkMiddleware is one named entry of network_middlewares, mirroring
// NetworkMiddlewareConfigDef (crates/openshell-policy/src/middleware.rs:23-37
// @ v0.0.111). Config is the middleware's own settings, kept as decoded data.
type NetworkMiddleware struct {
	Name       string              `yaml:"name,omitempty" json:"name,omitempty"`
	Middleware string              `yaml:"middleware" json:"middleware"`
	Order      int32               `yaml:"order,omitempty" json:"order,omitempty"`
	Config     map[string]any      `yaml:"config,omitempty" json:"config,omitempty"`
	OnError    string              `yaml:"on_error,omitempty" json:"on_error,omitempty"`
	Endpoints  *MiddlewareSelector `yaml:"endpoints,omitempty" json:"endpoints,omitempty"`
}

// MiddlewareSelector picks the endpoints a middleware applies to by host
// pattern (MiddlewareEndpointSelectorDef, middleware.rs:43-50 @ v0.0.111).
type MiddlewareSelector struct {
	Include []string `yaml:"include,omitempty" json:"include,omitempty"`
	Exclude []string `yaml:"exclude,omitempty" json:"exclude,omitempty"`
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
//
// Fields follow NetworkEndpointDef (crates/openshell-policy/src/lib.rs:108-175
// @ v0.0.111) in its order; the version gates in version.go say which release
// accepts each one, and the validator refuses a field the target predates.
type Endpoint struct {
	Host string `yaml:"host" json:"host"`
	// Path routes requests to this endpoint by path prefix (v0.0.111).
	Path        string   `yaml:"path,omitempty" json:"path,omitempty"`
	Port        int      `yaml:"port,omitempty" json:"port,omitempty"`
	Ports       []int    `yaml:"ports,omitempty" json:"ports,omitempty"`
	Protocol    string   `yaml:"protocol,omitempty" json:"protocol,omitempty"`
	TLS         string   `yaml:"tls,omitempty" json:"tls,omitempty"`
	Enforcement string   `yaml:"enforcement,omitempty" json:"enforcement,omitempty"`
	Access      string   `yaml:"access,omitempty" json:"access,omitempty"`
	Rules       []Rule   `yaml:"rules,omitempty" json:"rules,omitempty"`
	AllowedIPs  []string `yaml:"allowed_ips,omitempty" json:"allowed_ips,omitempty"`
	DenyRules   []Match  `yaml:"deny_rules,omitempty" json:"deny_rules,omitempty"`

	AllowEncodedSlash            bool                        `yaml:"allow_encoded_slash,omitempty" json:"allow_encoded_slash,omitempty"`
	WebsocketCredentialRewrite   bool                        `yaml:"websocket_credential_rewrite,omitempty" json:"websocket_credential_rewrite,omitempty"`
	RequestBodyCredentialRewrite bool                        `yaml:"request_body_credential_rewrite,omitempty" json:"request_body_credential_rewrite,omitempty"`
	AllowUninspectedCredentials  bool                        `yaml:"allow_uninspected_credentials,omitempty" json:"allow_uninspected_credentials,omitempty"`
	PersistedQueries             string                      `yaml:"persisted_queries,omitempty" json:"persisted_queries,omitempty"`
	GraphQLPersistedQueries      map[string]GraphQLOperation `yaml:"graphql_persisted_queries,omitempty" json:"graphql_persisted_queries,omitempty"`
	GraphQLMaxBodyBytes          uint32                      `yaml:"graphql_max_body_bytes,omitempty" json:"graphql_max_body_bytes,omitempty"`
	CredentialSigning            string                      `yaml:"credential_signing,omitempty" json:"credential_signing,omitempty"`
	SigningService               string                      `yaml:"signing_service,omitempty" json:"signing_service,omitempty"`
	SigningRegion                string                      `yaml:"signing_region,omitempty" json:"signing_region,omitempty"`
	CredentialBinding            *CredentialBinding          `yaml:"credential_binding,omitempty" json:"credential_binding,omitempty"`
	JSONRPC                      *JSONRPCConfig              `yaml:"json_rpc,omitempty" json:"json_rpc,omitempty"`
	MCP                          *MCPConfig                  `yaml:"mcp,omitempty" json:"mcp,omitempty"`

	From []bundle.Source `yaml:"-" json:"-"`
}

// GraphQLOperation is one registered persisted query (GraphqlOperationDef,
// lib.rs:302-310 @ v0.0.111).
type GraphQLOperation struct {
	OperationType string   `yaml:"operation_type,omitempty" json:"operation_type,omitempty"`
	OperationName string   `yaml:"operation_name,omitempty" json:"operation_name,omitempty"`
	Fields        []string `yaml:"fields,omitempty" json:"fields,omitempty"`
}

// CredentialBinding names the credential provider an endpoint is bound to
// (NetworkCredentialBindingDef, lib.rs:177-181 @ v0.0.111).
type CredentialBinding struct {
	Provider string `yaml:"provider" json:"provider"`
}

// JSONRPCConfig is an endpoint's json_rpc stanza (JsonRpcConfigDef,
// lib.rs:195-200 @ v0.0.111).
type JSONRPCConfig struct {
	MaxBodyBytes uint32 `yaml:"max_body_bytes,omitempty" json:"max_body_bytes,omitempty"`
}

// MCPConfig is an endpoint's mcp stanza (McpConfigDef, lib.rs:209-218 @
// v0.0.111). The booleans are tri-state in OpenShell: nil means unset.
type MCPConfig struct {
	MaxBodyBytes            uint32 `yaml:"max_body_bytes,omitempty" json:"max_body_bytes,omitempty"`
	StrictToolNames         *bool  `yaml:"strict_tool_names,omitempty" json:"strict_tool_names,omitempty"`
	AllowAllKnownMCPMethods *bool  `yaml:"allow_all_known_mcp_methods,omitempty" json:"allow_all_known_mcp_methods,omitempty"`
}

// Rule is one L7 allow rule. OpenShell wraps the match in `allow:`.
type Rule struct {
	Allow Match `yaml:"allow" json:"allow"`

	From []bundle.Source `yaml:"-" json:"-"`
	// Reads marks a non-GET rule that only reads (git's upload-pack POST),
	// so it does not raise the agent's tier. Never emitted.
	Reads bool `yaml:"-" json:"-"`
}

// Match selects requests. REST uses method, path and query globs; SQL uses
// command; GraphQL operation_type, operation_name and fields; JSON-RPC and
// MCP method, tool and params. It mirrors both L7AllowDef and L7DenyRuleDef
// (lib.rs:320-384 @ v0.0.111), which carry the same fields.
type Match struct {
	Method        string                `yaml:"method,omitempty" json:"method,omitempty"`
	Path          string                `yaml:"path,omitempty" json:"path,omitempty"`
	Command       string                `yaml:"command,omitempty" json:"command,omitempty"`
	Query         map[string]QueryMatch `yaml:"query,omitempty" json:"query,omitempty"`
	OperationType string                `yaml:"operation_type,omitempty" json:"operation_type,omitempty"`
	OperationName string                `yaml:"operation_name,omitempty" json:"operation_name,omitempty"`
	Fields        []string              `yaml:"fields,omitempty" json:"fields,omitempty"`
	Tool          *QueryMatch           `yaml:"tool,omitempty" json:"tool,omitempty"`
	Params        map[string]ParamMatch `yaml:"params,omitempty" json:"params,omitempty"`

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

// ParamMatch matches one JSON-RPC/MCP parameter: a matcher (a glob or
// {any: [...]}) or a nested object of parameter matchers (ParamMatcherDef,
// lib.rs:350-356 @ v0.0.111, untagged: the matcher form is tried first).
type ParamMatch struct {
	Matcher *QueryMatch           `json:"matcher,omitempty"`
	Object  map[string]ParamMatch `json:"object,omitempty"`
}

// MarshalYAML implements yaml.Marshaler.
func (m ParamMatch) MarshalYAML() (any, error) {
	if m.Matcher != nil {
		return *m.Matcher, nil
	}
	return m.Object, nil
}

// Binary is one executable path or glob allowed to use a network policy.
type Binary struct {
	Path string `yaml:"path" json:"path"`
	// Harness is accepted and ignored by OpenShell (NetworkBinaryDef,
	// lib.rs:389-397 @ v0.0.111: deprecated, never serialized); decoded so
	// that such files load, never emitted.
	Harness bool `yaml:"harness,omitempty" json:"-"`

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

// IsL7 reports whether OpenShell inspects the endpoint's requests: it has a
// protocol other than tcp.
func IsL7(ep *Endpoint) bool {
	return ep.Protocol != "" && !strings.EqualFold(ep.Protocol, ProtocolTCP)
}

// IsReadMethod reports whether method is one of the read-only methods of
// OpenShell's read-only access preset.
func IsReadMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "GET", "HEAD", "OPTIONS":
		return true
	}
	return false
}

// NormalizeHost lower-cases h and drops a trailing dot, as OpenShell compares
// host names.
func NormalizeHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }
