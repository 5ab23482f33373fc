package profile

import (
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// Profile is one provider profile, mirroring ProviderTypeProfile
// (crates/openshell-providers/src/profiles.rs:380-411 @ v0.0.111,
// profiles.rs:295-319 @ v0.0.83). Zero values stand for serde's defaults.
type Profile struct {
	// File names the profile in diagnostics and provenance.
	File string `json:"file,omitempty"`
	// Builtin marks a file of OpenShell's own built-in catalog (byte for
	// byte), which the gateway loads as its catalog, not as an import.
	Builtin bool `json:"builtin,omitempty"`

	ID               string            `json:"id"`
	ResourceVersion  uint64            `json:"resource_version,omitempty"`
	Annotations      map[string]string `json:"annotations,omitempty"`
	DisplayName      string            `json:"display_name"`
	Description      string            `json:"description,omitempty"`
	Category         string            `json:"category,omitempty"`
	Credentials      []Credential      `json:"credentials,omitempty"`
	Endpoints        []Endpoint        `json:"endpoints,omitempty"`
	Binaries         []Binary          `json:"binaries,omitempty"`
	InferenceCapable bool              `json:"inference_capable,omitempty"`
	// Discovery is discovery.credentials (DiscoveryProfile, profiles.rs:188-192).
	Discovery []string `json:"discovery,omitempty"`
	Source    string   `json:"source,omitempty"`
	Scope     string   `json:"scope,omitempty"`

	// pos maps each decoded path (endpoints[0].rules[1].allow.method) to
	// the position of its value.
	pos map[string]position
}

type position struct{ line, col int }

// Credential mirrors CredentialProfile (profiles.rs:91-112 @ v0.0.111).
type Credential struct {
	Name         string      `json:"name"`
	Description  string      `json:"description,omitempty"`
	EnvVars      []string    `json:"env_vars,omitempty"`
	Required     bool        `json:"required,omitempty"`
	AuthStyle    string      `json:"auth_style,omitempty"`
	HeaderName   string      `json:"header_name,omitempty"`
	QueryParam   string      `json:"query_param,omitempty"`
	Refresh      *Refresh    `json:"refresh,omitempty"`
	PathTemplate string      `json:"path_template,omitempty"`
	TokenGrant   *TokenGrant `json:"token_grant,omitempty"`
}

// Refresh mirrors CredentialRefreshProfile (profiles.rs:144-167). Strategy
// is the canonical YAML name, "" when unspecified.
type Refresh struct {
	Strategy             string     `json:"strategy,omitempty"`
	TokenURL             string     `json:"token_url,omitempty"`
	Scopes               []string   `json:"scopes,omitempty"`
	RefreshBeforeSeconds int64      `json:"refresh_before_seconds,omitempty"`
	MaxLifetimeSeconds   int64      `json:"max_lifetime_seconds,omitempty"`
	Material             []Material `json:"material,omitempty"`
	AdditionalOutputs    []Output   `json:"additional_outputs,omitempty"`
}

// Material mirrors CredentialRefreshMaterialProfile (profiles.rs:169-178).
type Material struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	Secret      bool   `json:"secret,omitempty"`
}

// Output mirrors CredentialRefreshOutputProfile (profiles.rs:180-186).
type Output struct {
	Output     string `json:"output"`
	Credential string `json:"credential"`
}

// TokenGrant mirrors TokenGrantProfile (profiles.rs:114-129).
type TokenGrant struct {
	TokenEndpoint       string             `json:"token_endpoint"`
	Audience            string             `json:"audience,omitempty"`
	JWTSVIDAudience     string             `json:"jwt_svid_audience,omitempty"`
	ClientAssertionType string             `json:"client_assertion_type,omitempty"`
	Scopes              []string           `json:"scopes,omitempty"`
	CacheTTLSeconds     int64              `json:"cache_ttl_seconds,omitempty"`
	AudienceOverrides   []AudienceOverride `json:"audience_overrides,omitempty"`
}

// AudienceOverride mirrors TokenGrantAudienceOverrideProfile (profiles.rs:131-142).
type AudienceOverride struct {
	Host     string   `json:"host,omitempty"`
	Port     uint32   `json:"port,omitempty"`
	Path     string   `json:"path,omitempty"`
	Audience string   `json:"audience"`
	Scopes   []string `json:"scopes,omitempty"`
}

// Endpoint mirrors EndpointProfile (profiles.rs:199-250 @ v0.0.111): the
// network endpoint a profile contributes, flat where the policy YAML nests
// (json_rpc_max_body_bytes; mcp holds only the two booleans).
type Endpoint struct {
	Host        string   `json:"host"`
	Port        uint32   `json:"port,omitempty"`
	Protocol    string   `json:"protocol,omitempty"`
	TLS         string   `json:"tls,omitempty"`
	Access      string   `json:"access,omitempty"`
	Enforcement string   `json:"enforcement,omitempty"`
	Rules       []Rule   `json:"rules,omitempty"`
	AllowedIPs  []string `json:"allowed_ips,omitempty"`
	Ports       []uint32 `json:"ports,omitempty"`
	DenyRules   []Match  `json:"deny_rules,omitempty"`
	// RulesSet and DenyRulesSet tell `rules: []` from no rules (the
	// Option<Vec<..>> of profiles.rs:217,223 @ v0.0.111).
	RulesSet     bool `json:"-"`
	DenyRulesSet bool `json:"-"`

	AllowEncodedSlash            bool                                  `json:"allow_encoded_slash,omitempty"`
	WebsocketCredentialRewrite   bool                                  `json:"websocket_credential_rewrite,omitempty"`
	RequestBodyCredentialRewrite bool                                  `json:"request_body_credential_rewrite,omitempty"`
	AllowUninspectedCredentials  bool                                  `json:"allow_uninspected_credentials,omitempty"`
	PersistedQueries             string                                `json:"persisted_queries,omitempty"`
	GraphQLPersistedQueries      map[string]openshell.GraphQLOperation `json:"graphql_persisted_queries,omitempty"`
	GraphQLMaxBodyBytes          uint32                                `json:"graphql_max_body_bytes,omitempty"`
	JSONRPCMaxBodyBytes          uint32                                `json:"json_rpc_max_body_bytes,omitempty"`
	MCP                          *MCPOptions                           `json:"mcp,omitempty"`
	Path                         string                                `json:"path,omitempty"`
	CredentialSigning            string                                `json:"credential_signing,omitempty"`
	SigningService               string                                `json:"signing_service,omitempty"`
	SigningRegion                string                                `json:"signing_region,omitempty"`
}

// MCPOptions mirrors McpOptionsProfile (profiles.rs:252-258); nil is unset.
type MCPOptions struct {
	StrictToolNames         *bool `json:"strict_tool_names,omitempty"`
	AllowAllKnownMCPMethods *bool `json:"allow_all_known_mcp_methods,omitempty"`
}

// allowAllKnownMethods is mcp.allow_all_known_mcp_methods, false when unset.
func (o *MCPOptions) allowAllKnownMethods() bool {
	return o != nil && o.AllowAllKnownMCPMethods != nil && *o.AllowAllKnownMCPMethods
}

// strictToolNames is mcp.strict_tool_names, true when unset.
func (o *MCPOptions) strictToolNames() bool {
	return o == nil || o.StrictToolNames == nil || *o.StrictToolNames
}

// Rule mirrors L7RuleProfile (profiles.rs:260-264): allow is optional.
type Rule struct {
	Allow *Match `json:"allow,omitempty"`
}

// Match mirrors L7AllowProfile and L7DenyRuleProfile (profiles.rs:266-323),
// which carry the same fields; params is flat (one matcher per name).
type Match struct {
	Method        string                          `json:"method,omitempty"`
	Path          string                          `json:"path,omitempty"`
	Command       string                          `json:"command,omitempty"`
	Query         map[string]openshell.QueryMatch `json:"query,omitempty"`
	OperationType string                          `json:"operation_type,omitempty"`
	OperationName string                          `json:"operation_name,omitempty"`
	Fields        []string                        `json:"fields,omitempty"`
	Params        map[string]openshell.QueryMatch `json:"params,omitempty"`
	Tool          *openshell.QueryMatch           `json:"tool,omitempty"`
}

func (m *Match) hasToolSelector() bool {
	_, ok := m.Params["name"]
	return ok || m.Tool != nil
}

// effectivelyEmpty is L7AllowProfile::is_effectively_empty (profiles.rs:293-300).
func (m *Match) effectivelyEmpty() bool {
	return m.Method == "" && m.Path == "" && m.Command == "" && m.OperationType == "" &&
		m.OperationName == "" && !m.hasToolSelector()
}

// deniesAll reports rules none of which allows anything (no allow clause,
// or an effectively empty one): they would deny all traffic.
func (e Endpoint) deniesAll() bool {
	return len(e.Rules) > 0 && !slices.ContainsFunc(e.Rules, func(r Rule) bool { return r.Allow != nil && !r.Allow.effectivelyEmpty() })
}

// Binary mirrors BinaryProfile (profiles.rs:377-381): a path string or
// {path, harness}.
type Binary struct {
	Path    string `json:"path"`
	Harness bool   `json:"harness,omitempty"`
}

// HasCredentialedEndpoints is has_credentialed_endpoints (profiles.rs:663-676
// @ v0.0.111): any credential, or an endpoint that signs requests, makes
// every endpoint of the profile credential-bearing.
func (p *Profile) HasCredentialedEndpoints() bool {
	if len(p.Credentials) > 0 {
		return true
	}
	for _, e := range p.Endpoints {
		if strings.TrimSpace(e.CredentialSigning) != "" {
			return true
		}
	}
	return false
}
