package profile

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// additionalL7Fields is additional_l7_profile_fields (profiles.rs:2081-2125).
func additionalL7Fields(e Endpoint) []string {
	var out []string
	for _, f := range []struct {
		name string
		on   bool
	}{{"enforcement", e.Enforcement != ""}, {"path", e.Path != ""}, {"allow_encoded_slash", e.AllowEncodedSlash},
		{"websocket_credential_rewrite", e.WebsocketCredentialRewrite}, {"request_body_credential_rewrite", e.RequestBodyCredentialRewrite},
		{"persisted_queries", e.PersistedQueries != ""}, {"graphql_persisted_queries", len(e.GraphQLPersistedQueries) > 0},
		{"graphql_max_body_bytes", e.GraphQLMaxBodyBytes > 0}, {"json_rpc_max_body_bytes", e.JSONRPCMaxBodyBytes > 0},
		{"mcp", e.MCP != nil}, {"credential_signing", e.CredentialSigning != ""}, {"signing_service", e.SigningService != ""},
		{"signing_region", e.SigningRegion != ""}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	return out
}

// l7Semantics is validate_l7_endpoint_semantics (l7_validate.rs:105-184 @
// v0.0.111; v0.0.92 has the same checks without protocol tcp). The errors
// come in the source's order: the protocol, access presets, what defines the
// allowed traffic, then deny_rules.
func l7Semantics(version, protocol, access string, hasRules, hasDeny, denyAll, allowAll bool) []string {
	s := newL7Shape(version, protocol, access, hasRules, hasDeny, denyAll, allowAll)
	var errs []string
	for _, check := range []func() []string{s.protocolErrs, s.accessErrs, s.allowErrs, s.denyErrs} {
		errs = append(errs, check()...)
	}
	return errs
}

// l7Shape is what l7Semantics knows of one endpoint.
type l7Shape struct {
	protocol, access                     string
	hasRules, hasDeny, denyAll, allowAll bool
	v111, known, tcp, mcp, jsonrpc, bare bool
}

func newL7Shape(version, protocol, access string, hasRules, hasDeny, denyAll, allowAll bool) *l7Shape {
	p := strings.ToLower(protocol)
	v111 := semver.Compare(version, "v0.0.111") >= 0
	return &l7Shape{
		protocol: protocol, access: access,
		hasRules: hasRules, hasDeny: hasDeny, denyAll: denyAll, allowAll: allowAll,
		v111:    v111,
		known:   map[string]bool{"rest": true, "websocket": true, "graphql": true, "sql": true, "json-rpc": true, "mcp": true}[p],
		tcp:     p == "tcp" && v111,
		mcp:     p == "mcp",
		jsonrpc: p == "json-rpc",
		bare:    !hasRules && access == "",
	}
}

// protocolErrs: an unknown protocol, and L7 fields on protocol tcp.
func (s *l7Shape) protocolErrs() []string {
	var errs []string
	if s.protocol != "" && !s.known && !s.tcp {
		expected := "rest, websocket, graphql, sql, json-rpc, or mcp"
		if s.v111 {
			expected = "tcp, " + expected
		}
		errs = append(errs, fmt.Sprintf("unknown protocol '%s' (expected %s)", s.protocol, expected))
	}
	if s.tcp && (s.access != "" || s.hasRules || s.hasDeny) {
		errs = append(errs, "protocol tcp does not support access, rules, or deny_rules; remove those L7 fields")
	}
	return errs
}

// accessErrs: access beside rules, and access presets on mcp and json-rpc.
func (s *l7Shape) accessErrs() []string {
	var errs []string
	if s.hasRules && s.access != "" {
		errs = append(errs, "rules and access are mutually exclusive")
	}
	switch {
	case s.access == "":
	case s.mcp:
		errs = append(errs, fmt.Sprintf("protocol %s does not support access presets; use rules/deny_rules or set mcp.allow_all_known_mcp_methods: true for an allow-all MCP policy", s.protocol))
	case s.jsonrpc:
		errs = append(errs, fmt.Sprintf("protocol %s does not support access presets; use explicit rules with allow.method such as \"*\"", s.protocol))
	}
	return errs
}

// allowErrs: nothing that defines the allowed traffic, or rules that allow
// nothing.
func (s *l7Shape) allowErrs() []string {
	var errs []string
	// Without rules or access (bare), by protocol.
	switch {
	case !s.bare:
	case s.jsonrpc:
		errs = append(errs, fmt.Sprintf("protocol %s requires explicit rules with allow.method", s.protocol))
	case s.mcp:
		if !s.allowAll {
			errs = append(errs, "protocol mcp requires rules when mcp.allow_all_known_mcp_methods is false")
		}
	case s.known:
		errs = append(errs, "protocol requires rules or access to define allowed traffic")
	}
	if s.denyAll && !(s.mcp && s.allowAll) {
		errs = append(errs, "rules would deny all traffic (no allow clause found). Use `access: full` or add allow clauses to rules.")
	}
	return errs
}

// denyErrs: deny_rules without inspection or without a base allow set.
func (s *l7Shape) denyErrs() []string {
	var errs []string
	if s.hasDeny && !s.known {
		errs = append(errs, "deny_rules require protocol (L7 inspection must be enabled)")
	}
	if s.hasDeny && !s.mcp && s.bare {
		errs = append(errs, "deny_rules require rules or access to define the base allow set")
	}
	return errs
}

func globWildcard(s string) bool { return strings.ContainsAny(s, "*?[{") }

// matchesToolsCall reports whether an MCP method matcher selects
// tools/call: spelled so, "*", or a Rust glob that matches it; a glob the
// crate refuses selects nothing (method_matcher_matches_tools_call,
// profiles.rs:1250-1254 @ v0.0.111).
func matchesToolsCall(method string) bool {
	return method == "tools/call" || method == "*" || glob.MatchRust(method, "tools/call")
}

// checkMCP is profiles.rs:1923-2000 @ v0.0.111 (v0.0.92 on): each allow
// and deny rule, then, when an allow rule selects tools, the rules that
// would allow or deny every tool call beside it.
func (c *checker) checkMCP(base string, e Endpoint, allowAll bool) {
	strict := e.MCP.strictToolNames()
	hasToolAllow := false
	for j, r := range e.Rules {
		if r.Allow != nil {
			c.checkMCPRule(fmt.Sprintf("%s.rules[%d].allow", base, j), r.Allow, allowAll, strict)
			hasToolAllow = hasToolAllow || r.Allow.hasToolSelector()
		}
	}
	for j := range e.DenyRules {
		c.checkMCPRule(fmt.Sprintf("%s.deny_rules[%d]", base, j), &e.DenyRules[j], allowAll, strict)
	}
	if hasToolAllow {
		c.checkMCPToolConflicts(base, e, allowAll)
	}
}

// checkMCPRule checks one MCP allow or deny rule: its method, tool and
// params.
func (c *checker) checkMCPRule(loc string, m *Match, allowAll, strict bool) {
	if _, ok := m.Params["name"]; ok && m.Tool != nil {
		c.errorf(loc, CodeEndpointMCP, "", "MCP rules must use either tool or params.name, not both")
	}
	c.checkMCPMethod(loc, m, allowAll)
	if m.Path != "" || len(m.Query) > 0 {
		c.errorf(loc, CodeEndpointMCP, "", "mcp L7 rules must use method/tool, not path/query")
	}
	c.checkMCPParams(loc, m, strict)
}

// checkMCPMethod checks the method of an MCP rule: tools/call beside a tool
// selector, given unless allow_all_known_mcp_methods, a glob only over
// tools/.
func (c *checker) checkMCPMethod(loc string, m *Match, allowAll bool) {
	if m.hasToolSelector() && m.Method != "" && m.Method != "tools/call" {
		c.errorf(loc, CodeEndpointMCP, "", "method must be tools/call when an MCP rule uses tool or params.name")
	}
	if m.Method == "" && !allowAll {
		c.errorf(loc, CodeEndpointMCP, "", "method is required when mcp.allow_all_known_mcp_methods is false")
	}
	if globWildcard(m.Method) && !strings.HasPrefix(m.Method, "tools/") {
		c.errorf(loc+".method", CodeEndpointMCP, "", "MCP method globs are only valid for the tools/ method family; omit method to use the endpoint method profile")
	}
}

// checkMCPParams: params other than name are not supported; the tool and
// params.name matchers are checked in that order.
func (c *checker) checkMCPParams(loc string, m *Match, strict bool) {
	keys := make([]string, 0, len(m.Params))
	for k := range m.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "name" {
			c.errorf(loc+".params."+k, CodeEndpointMCP, "", "MCP tool argument matching is not supported yet")
		}
	}
	if m.Tool != nil {
		c.mcpMatcher(loc+".tool", *m.Tool, strict)
	}
	if q, ok := m.Params["name"]; ok {
		c.mcpMatcher(loc+".params.name", q, strict)
	}
}

// checkMCPToolConflicts reports, beside an allow rule that selects tools,
// the allow rules that allow every tool call (a tools/call method matcher
// without a tool, an empty method under allow_all_known_mcp_methods, or no
// allow clause) and the deny rules that deny every tool call.
func (c *checker) checkMCPToolConflicts(base string, e Endpoint, allowAll bool) {
	const conflict = "method matcher allows every tool call and conflicts with MCP tool allow rules; add tool or params.name to narrow tools/call, or remove the tool allow rules"
	for j, r := range e.Rules {
		every := allowAll // no allow clause
		if r.Allow != nil {
			every = r.Allow.everyToolCall(allowAll)
		}
		if every {
			c.errorf(fmt.Sprintf("%s.rules[%d].allow", base, j), CodeEndpointMCP, "", conflict)
		}
	}
	for j, r := range e.DenyRules {
		if r.everyToolCall(false) {
			c.errorf(fmt.Sprintf("%s.deny_rules[%d]", base, j), CodeEndpointMCP, "",
				"method matcher denies every tool call and conflicts with MCP tool allow rules; add tool or params.name to deny specific tools, or remove the tool allow rules")
		}
	}
}

// everyToolCall reports a rule that selects every tool call: no tool
// selector, and a method that matches tools/call (or, when emptyIsAll, no
// method).
func (m *Match) everyToolCall(emptyIsAll bool) bool {
	return !m.hasToolSelector() && (matchesToolsCall(m.Method) || m.Method == "" && emptyIsAll)
}

// mcpMatcher is validate_mcp_matcher (profiles.rs:968-1000).
func (c *checker) mcpMatcher(loc string, q openshell.QueryMatch, strict bool) {
	if q.Glob != "" && len(q.Any) > 0 {
		c.errorf(loc, CodeEndpointMCP, "", "matcher cannot specify both glob and any")
	}
	if q.Glob == "" && len(q.Any) == 0 {
		c.errorf(loc, CodeEndpointMCP, "", "matcher must specify glob or any")
	}
	if !strict && (globWildcard(q.Glob) || slices.ContainsFunc(q.Any, globWildcard)) {
		c.errorf(loc, CodeEndpointMCP, "", "wildcard tool-name matchers require mcp.strict_tool_names to remain enabled")
	}
}
