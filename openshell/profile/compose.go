package profile

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// ProviderRulePrefix is PROVIDER_RULE_NAME_PREFIX, the reserved prefix of
// the network policy keys composition adds (compose.rs:8 @ v0.0.111, the
// same file at v0.0.83).
const ProviderRulePrefix = "_provider_"

// IsProviderRuleName reports whether a network policy key is in the
// namespace composition reserves for provider layers (compose.rs:16-19).
func IsProviderRuleName(key string) bool { return strings.HasPrefix(key, ProviderRulePrefix) }

// ProviderRuleName is the network policy key OpenShell gives the layer of
// the provider named provider (compose.rs:21-41): the reserved prefix, then
// the name in lower case with every character other than an ASCII letter,
// digit or '_' turned into '_' and the '_' at either end dropped;
// "_provider_unnamed" when nothing is left.
func ProviderRuleName(provider string) string {
	s := strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		if !strings.ContainsRune(lowerAlnum+"_", r) {
			return '_'
		}
		return r
	}, provider), "_")
	if s == "" {
		return ProviderRulePrefix + "unnamed"
	}
	return ProviderRulePrefix + s
}

// Attachment is one provider attached to a sandbox: its name (the
// provider's object name, which names the layer) and its type's profile.
// Provider defaults to the profile id, the name `openshell provider
// create --type ID` users most often give.
type Attachment struct {
	Provider string
	Profile  *Profile
}

func (a Attachment) name() string {
	if a.Provider != "" {
		return a.Provider
	}
	return a.Profile.ID
}

// Gateway is the gateway state composition depends on.
type Gateway struct {
	// ProvidersV2Enabled is the global setting providers_v2_enabled
	// (openshell-core settings.rs:77 @ v0.0.111); unset means false
	// (bool_setting_enabled, grpc/policy.rs @ v0.0.111 and v0.0.83).
	ProvidersV2Enabled bool
	// GlobalPolicy is set when a global policy overrides the sandbox's
	// own: OpenShell then composes nothing.
	GlobalPolicy bool
}

// Layer is one composed provider layer.
type Layer struct {
	// Key is the network_policies key the layer was inserted under.
	Key string `json:"key"`
	// Provider and ProfileID name what it came from; File the profile file.
	Provider  string `json:"provider"`
	ProfileID string `json:"profile"`
	File      string `json:"file,omitempty"`
	// Credentialed is set when the profile holds credentials (or signs):
	// from v0.0.110 the gateway stamps the layer's endpoints
	// provider_credentialed (grpc/policy.rs:2296-2309 @ v0.0.111).
	Credentialed bool `json:"credentialed,omitempty"`
	// Builtin marks one of OpenShell's built-in profiles: File then names
	// the upstream file its facts come from (catalog.go), which has no
	// line here.
	Builtin bool `json:"builtin,omitempty"`

	profile *Profile
}

// Composed is the effective policy OpenShell derives for a sandbox.
type Composed struct {
	Policy *openshell.Policy `json:"-"`
	Layers []Layer           `json:"layers"`
	// Skipped explains why no layer was added ("" when composition ran).
	Skipped string `json:"skipped,omitempty"`
	// Scopes are the credentialed endpoint scopes the gateway stamps the
	// effective policy's endpoints provider_credentialed by (v0.0.110 on);
	// they are gathered whether or not layers were composed (see Compose).
	Scopes []Scope `json:"credentialed_scopes,omitempty"`
	// Endpointless names the attached providers whose profile has no
	// endpoint (endpointless_provider_names, grpc/policy.rs:2300-2302 @
	// v0.0.111): their credentials reach hosts only through the policy's
	// credential_binding entries.
	Endpointless []string `json:"endpointless,omitempty"`
}

// Scope is a CredentialedEndpointScope (grpc/policy.rs:2255-2258 @
// v0.0.111): a host pattern, ASCII-lowercased, and its ports (none: any).
type Scope struct {
	Host  string `json:"host"`
	Ports []int  `json:"ports,omitempty"`
	// Provider is the provider it comes from (fullsend's bookkeeping).
	Provider string `json:"provider"`
}

// LayerOf returns the layer a network policy key belongs to.
func (c *Composed) LayerOf(key string) (Layer, bool) {
	for _, l := range c.Layers {
		if l.Key == key {
			return l, true
		}
	}
	return Layer{}, false
}

// Compose returns the effective policy OpenShell builds from base and the
// attached providers, in attachment order, without modifying base. It
// models effective_policy_for_source (openshell-server
// src/grpc/policy.rs:1096-1136 @ v0.0.111; policy.rs:1009-1033 @ v0.0.83):
//
//   - nothing is composed unless providers_v2_enabled is true
//     (policy.rs:1112-1113 @ v0.0.111), nor when a global policy replaced the
//     sandbox's (policy.rs:1122-1124), nor when there is no layer;
//   - each provider's layer is its profile's network_policy_rule(rule_name):
//     the profile's endpoints and binaries, named rule_name =
//     provider_rule_name(provider name) (provider_policy_context_with_catalog,
//     policy.rs:2298-2299; profiles.rs:597-604);
//   - compose_effective_policy (compose.rs:58-75) keeps every key of the
//     source policy, static sections included, and inserts each layer under
//     its rule name, or, when that key is taken (by the source or an earlier
//     layer), under rule_name_2, _3, ... (unique_provider_rule_key,
//     compose.rs:77-90); the layer's name stays the rule name;
//   - an existing key is never overwritten.
//
// The layer's endpoints are lowered as the gateway stores and renders them:
// endpoint_to_proto (profiles.rs:1043-1088) then the proto-to-YAML
// conversion of openshell-policy/src/lib.rs:864-947 @ v0.0.111 (one port
// of ports becomes port; tool moves to params.name and back; json_rpc_max_
// body_bytes goes to json_rpc or, for mcp, to the mcp stanza).
func Compose(base *openshell.Policy, attached []Attachment, gw Gateway) *Composed {
	if base == nil {
		base = &openshell.Policy{Version: 1}
	}
	out := &Composed{Policy: base.Clone(), Layers: []Layer{}}
	out.gatherScopes(attached)
	out.compose(attached, gw)
	out.extendScopes()
	return out
}

// compose adds the layers when the gateway would (see Compose).
func (out *Composed) compose(attached []Attachment, gw Gateway) {
	eff := out.Policy
	switch {
	case !gw.ProvidersV2Enabled:
		out.Skipped = "providers_v2_enabled is off: OpenShell composes no provider layer"
		return
	case gw.GlobalPolicy:
		out.Skipped = "a global policy is set: OpenShell composes no provider layer"
		return
	case len(attached) == 0:
		out.Skipped = "no provider attached"
		return
	}
	if eff.NetworkPolicies == nil {
		eff.NetworkPolicies = map[string]openshell.NetworkPolicy{}
	}
	for _, a := range attached {
		name := ProviderRuleName(a.name())
		key := freeLayerKey(eff.NetworkPolicies, name)
		eff.NetworkPolicies[key] = a.Profile.NetworkPolicy(name)
		out.Layers = append(out.Layers, Layer{Key: key, Provider: a.name(), ProfileID: a.Profile.ID,
			File: a.Profile.File, Credentialed: a.Profile.HasCredentialedEndpoints(), Builtin: a.Profile.Builtin, profile: a.Profile})
	}
}

// gatherScopes records, for every attached provider, whether its profile
// has no endpoint and, when the profile holds credentials (or signs), one
// scope per endpoint of its layer: the host ASCII-lowercased and its ports,
// without duplicates (grpc/policy.rs:2298-2315 @ v0.0.111). The gateway
// gathers them before and whatever the gate (policy.rs:1114-1121).
func (out *Composed) gatherScopes(attached []Attachment) {
	for _, a := range attached {
		np := a.Profile.NetworkPolicy(ProviderRuleName(a.name()))
		if len(np.Endpoints) == 0 {
			out.Endpointless = append(out.Endpointless, a.name())
		}
		if !a.Profile.HasCredentialedEndpoints() {
			continue
		}
		for _, e := range np.Endpoints {
			out.addScope(Scope{Host: asciiLower(e.Host), Ports: layerPorts(e), Provider: a.name()})
		}
	}
}

// extendScopes adds a scope per credential_binding of the effective policy
// that names an endpointless provider: the bound host, ASCII-lowercased,
// on each bound port (extend_credentialed_scopes_from_policy_bindings and
// policy_static_credential_endpoint_bindings, grpc/policy.rs:2339-2358 and
// 1166-1223 @ v0.0.111; ports are ports, else port).
func (out *Composed) extendScopes() {
	for _, key := range slices.Sorted(maps.Keys(out.Policy.NetworkPolicies)) {
		for _, e := range out.Policy.NetworkPolicies[key].Endpoints {
			if e.CredentialBinding == nil || !slices.Contains(out.Endpointless, e.CredentialBinding.Provider) {
				continue
			}
			ports := e.Ports
			if len(ports) == 0 {
				ports = []int{e.Port}
			}
			for _, port := range ports {
				out.addScope(Scope{Host: asciiLower(e.Host), Ports: []int{port}, Provider: e.CredentialBinding.Provider})
			}
		}
	}
}

// addScope appends s unless an equal scope (host and ports) is there.
func (out *Composed) addScope(s Scope) {
	for _, o := range out.Scopes {
		if o.Host == s.Host && slices.Equal(o.Ports, s.Ports) {
			return
		}
	}
	out.Scopes = append(out.Scopes, s)
}

// layerPorts is endpoint_ports (grpc/policy.rs:2328-2337 @ v0.0.111):
// ports when set, else port when above 0, else none.
func layerPorts(e openshell.Endpoint) []int {
	if len(e.Ports) > 0 {
		return slices.Clone(e.Ports)
	}
	if e.Port > 0 {
		return []int{e.Port}
	}
	return nil
}

// asciiLower lowercases the ASCII letters of s only (to_ascii_lowercase).
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// freeLayerKey is the key a layer named name takes among policies: name
// itself when free, else the first free of name_2, name_3, ... (OpenShell
// numbers clashing layers so, compose.rs:77-90).
func freeLayerKey(policies map[string]openshell.NetworkPolicy, name string) string {
	key := name
	for n := 2; ; n++ {
		if _, taken := policies[key]; !taken {
			return key
		}
		key = fmt.Sprintf("%s_%d", name, n)
	}
}

// NetworkPolicy is network_policy_rule(rule_name) (profiles.rs:597-604 @
// v0.0.111) lowered to the policy model: the profile's endpoints and
// binaries under name, each with the profile line it came from (the file
// alone for a built-in profile: the catalog has no lines).
func (p *Profile) NetworkPolicy(name string) openshell.NetworkPolicy {
	src := func(path string) []bundle.Source {
		s := bundle.Source{File: p.File, Reason: "provider profile " + p.ID}
		if p.pos != nil { // decoded from a file, not the built-in catalog
			s.Line, s.Column = p.Position(path)
		}
		return []bundle.Source{s}
	}
	np := openshell.NetworkPolicy{Name: name, Endpoints: []openshell.Endpoint{}, Binaries: []openshell.Binary{}, From: src("")}
	for i, e := range p.Endpoints {
		ep := e.lower()
		ep.From = src(fmt.Sprintf("endpoints[%d]", i))
		for j := range ep.Rules {
			ep.Rules[j].From = src(fmt.Sprintf("endpoints[%d].rules[%d]", i, j))
		}
		for j := range ep.DenyRules {
			ep.DenyRules[j].From = src(fmt.Sprintf("endpoints[%d].deny_rules[%d]", i, j))
		}
		np.Endpoints = append(np.Endpoints, ep)
	}
	for i, b := range p.Binaries {
		// binary_to_proto keeps harness; the YAML rendering drops it
		// (lib.rs:949-955 @ v0.0.111: harness: false).
		np.Binaries = append(np.Binaries, openshell.Binary{Path: b.Path, From: src(fmt.Sprintf("binaries[%d]", i))})
	}
	return np
}

// lower converts a profile endpoint to the policy model as the gateway's
// proto and its YAML rendering carry it (see Compose).
func (e Endpoint) lower() openshell.Endpoint {
	out := openshell.Endpoint{Host: e.Host, Path: e.Path, Protocol: e.Protocol, TLS: e.TLS,
		Enforcement: e.Enforcement, Access: e.Access, AllowedIPs: e.AllowedIPs,
		AllowEncodedSlash: e.AllowEncodedSlash, WebsocketCredentialRewrite: e.WebsocketCredentialRewrite,
		RequestBodyCredentialRewrite: e.RequestBodyCredentialRewrite, AllowUninspectedCredentials: e.AllowUninspectedCredentials,
		PersistedQueries: e.PersistedQueries, GraphQLPersistedQueries: e.GraphQLPersistedQueries,
		GraphQLMaxBodyBytes: e.GraphQLMaxBodyBytes, CredentialSigning: e.CredentialSigning,
		SigningService: e.SigningService, SigningRegion: e.SigningRegion}
	out.Port, out.Ports = e.lowerPorts()
	mcp := strings.EqualFold(e.Protocol, "mcp")
	allowAll := !mcp || e.MCP.allowAllKnownMethods()
	for _, r := range e.Rules {
		var m Match
		if r.Allow != nil {
			m = *r.Allow
		}
		out.Rules = append(out.Rules, openshell.Rule{Allow: m.lower(mcp, allowAll)})
	}
	for _, d := range e.DenyRules {
		out.DenyRules = append(out.DenyRules, d.lower(mcp, allowAll))
	}
	// lib.rs:897-904 and mcp_config_from_proto, json_rpc_config_from_proto (lib.rs:205-232).
	if mcp {
		out.MCP = e.mcpConfig()
	} else if e.JSONRPCMaxBodyBytes > 0 {
		out.JSONRPC = &openshell.JSONRPCConfig{MaxBodyBytes: e.JSONRPCMaxBodyBytes}
	}
	return out
}

// lowerPorts returns port and ports as the YAML carries them (lib.rs:868-873):
// one entry of ports becomes port; several stay ports. Ports above 65535
// are clamped.
func (e Endpoint) lowerPorts() (int, []int) {
	clamp := func(v uint32) int { return int(min(v, 65535)) }
	switch len(e.Ports) {
	case 0:
		return clamp(e.Port), nil
	case 1:
		return clamp(e.Ports[0]), nil
	}
	var ports []int
	for _, p := range e.Ports {
		ports = append(ports, clamp(p))
	}
	return 0, ports
}

// mcpConfig is the mcp stanza of a protocol mcp endpoint: the JSON-RPC body
// limit and the mcp options, nil when all are unset.
func (e Endpoint) mcpConfig() *openshell.MCPConfig {
	var strict, all *bool
	if e.MCP != nil {
		strict, all = e.MCP.StrictToolNames, e.MCP.AllowAllKnownMCPMethods
	}
	if e.JSONRPCMaxBodyBytes == 0 && strict == nil && all == nil {
		return nil
	}
	return &openshell.MCPConfig{MaxBodyBytes: e.JSONRPCMaxBodyBytes, StrictToolNames: strict, AllowAllKnownMCPMethods: all}
}

// lower is allow_to_proto (profiles.rs:1024-1048: tool becomes params.name
// unless params has one) then allow_proto_to_def (lib.rs:620-653: for mcp,
// params.name becomes tool again and yaml_mcp_method drops a redundant
// method).
func (m Match) lower(mcp, allowAll bool) openshell.Match {
	params := map[string]openshell.QueryMatch{}
	maps.Copy(params, m.Params)
	if _, ok := params["name"]; !ok && m.Tool != nil {
		params["name"] = *m.Tool
	}
	out := openshell.Match{Method: m.Method, Path: m.Path, Command: m.Command, Query: m.Query,
		OperationType: m.OperationType, OperationName: m.OperationName, Fields: m.Fields}
	if t, ok := params["name"]; ok && mcp {
		out.Tool = &t
		delete(params, "name")
	}
	if mcp {
		out.Method = shownMCPMethod(out.Method, out.Tool != nil, allowAll)
	}
	out.Params = paramMatches(params)
	return out
}

// shownMCPMethod is the method of an mcp rule as OpenShell's YAML rendering
// shows it: none where the rule implies it, that is "*" without a tool, or
// tools/call with a tool under allow_all_known_mcp_methods (lib.rs:690-704).
func shownMCPMethod(method string, hasTool, allowAll bool) string {
	if !hasTool && method == "*" || hasTool && method == "tools/call" && allowAll {
		return ""
	}
	return method
}

// paramMatches wraps each params matcher as a ParamMatch; nil when there
// is none.
func paramMatches(params map[string]openshell.QueryMatch) map[string]openshell.ParamMatch {
	if len(params) == 0 {
		return nil
	}
	out := map[string]openshell.ParamMatch{}
	for k, v := range params {
		out[k] = openshell.ParamMatch{Matcher: &v}
	}
	return out
}

// Profile returns the profile the layer was composed from (nil for a layer
// built without one).
func (l Layer) Profile() *Profile { return l.profile }
