package decide

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// sqlStream decides what OpenShell does with SQL on an inspected
// connection. It has no SQL parser at either tag: relay_with_inspection
// relays a lone sql endpoint's tunnel uninspected ("SQL L7 provider not yet
// implemented", l7/relay.rs:201 @ v0.0.83, :463 @ v0.0.111), so its command
// rules never run (evaluate_l7_request puts no command in the Rego input,
// relay.rs:1658 @ v0.0.83, :2572 @ v0.0.111). SQL wire bytes ("sql CMD")
// that are not TLS are refused as an unsupported tunnel protocol on any L7
// endpoint (unsupported_l7_tunnel_protocol_detail, proxy.rs:389 @ v0.0.83,
// :1147 @ v0.0.111); inside TLS they reach the relay, and every relay but the lone
// sql one parses HTTP and closes the connection on them. An HTTP request
// routed to a sql endpoint among several is evaluated by Rego without a
// command (decideL7). ok is false when the request goes on to the rules.
func sqlStream(configs []*matched, r *Request) (Decision, bool) {
	route := configs[0]
	lone := len(configs) == 1 && strings.EqualFold(route.ep.Protocol, openshell.ProtocolSQL)
	tls := r.Scheme == "https" || r.Scheme == "wss"
	switch {
	case r.Command != "" && !tls:
		return Decision{Policy: route.key, Path: epPath(route.key, route.i),
			Reason: "plaintext SQL is an unsupported tunnel protocol for an L7-inspected endpoint (proxy.rs unsupported_l7_tunnel_protocol_detail)"}, true
	case lone:
		return Decision{Allowed: true, Policy: route.key, Path: epPath(route.key, route.i),
			Reason: "protocol sql: OpenShell has no SQL provider and relays the connection uninspected (l7/relay.rs relay_with_inspection)"}, true
	case r.Command != "":
		return Decision{Policy: route.key, Path: epPath(route.key, route.i),
			Reason: "SQL bytes on an HTTP-inspected endpoint: the relay cannot parse them and closes the connection"}, true
	}
	return Decision{}, false
}

// hardDeny holds the inspection errors OpenShell denies even under audit:
// a JSON-RPC response frame sent to a json-rpc (not MCP) endpoint
// (l7/relay.rs:2247 jsonrpc_response_frame_hard_deny_reason and :2261 @
// v0.0.111; :1482 and :1089 @ v0.0.83), and an MCP tools/call whose tool
// name breaks ^[A-Za-z0-9_.-]{1,128}$ while strict_tool_names is on, the
// default (l7/jsonrpc.rs:384 parse_mcp_call, :449 validate_mcp_tool_name,
// same lines @ v0.0.83).
//
// A body the route's parser cannot read is such an error too
// (l7_request_hard_deny_reason, l7/relay.rs:2261 @ v0.0.111; relay_graphql
// :1284, relay_jsonrpc :1086 and relay_with_route_selection :404 @
// v0.0.83): on a graphql route a request whose method is not GET or POST,
// or that names no operation (graphql.rs:118 classify_request_inner @
// v0.0.111, :94 @ v0.0.83: "no query document or persisted query
// identifier", an empty or non-JSON body); on a json-rpc or mcp
// route a request that is neither a receive stream (GET with "frame
// stream", jsonrpc.rs:198) nor a JSON-RPC call or response frame
// (parse_jsonrpc_body_with_options, jsonrpc.rs:236: invalid JSON).
func hardDeny(route *matched, r *Request) (Decision, bool) {
	var why string
	switch p := route.ep.Protocol; {
	case strings.EqualFold(p, openshell.ProtocolGraphQL):
		why = graphqlHardDeny(r)
	case strings.EqualFold(p, openshell.ProtocolJSONRPC) || strings.EqualFold(p, openshell.ProtocolMCP):
		why = rpcHardDeny(route.ep, r)
	}
	if why == "" {
		return Decision{}, false
	}
	return Decision{Policy: route.key, Path: epPath(route.key, route.i), Reason: why + " (denied even under audit)"}, true
}

// graphqlHardDeny is why a graphql route rejects r outright, or "".
func graphqlHardDeny(r *Request) string {
	switch {
	case r.Method != "GET" && r.Method != "POST":
		return fmt.Sprintf("GraphQL request rejected: unsupported GraphQL HTTP method %s", r.Method)
	case len(r.GraphQL) == 0:
		return "GraphQL request rejected: the request carries no GraphQL operation (no graphql clause)"
	}
	return ""
}

// rpcHardDeny is why a json-rpc or mcp route rejects r outright, or "".
func rpcHardDeny(ep *openshell.Endpoint, r *Request) string {
	switch {
	case !rpcMessage(r):
		return "JSON-RPC request rejected: the body is not a JSON-RPC message (no rpc clause or response frame)"
	case strings.EqualFold(ep.Protocol, openshell.ProtocolJSONRPC) && r.RPCResponse:
		return "JSON-RPC response frames are not permitted from client to server"
	case badMCPToolName(ep, r):
		return fmt.Sprintf("MCP tool name %q must match ^[A-Za-z0-9_.-]{1,128}$ when strict_tool_names is enabled", r.Tool)
	}
	return ""
}

// rpcMessage reports whether r is something a JSON-RPC relay reads: a
// receive stream (a GET), a call, or a response frame.
func rpcMessage(r *Request) bool {
	return r.Method == "GET" && r.RPCStream || r.RPCMethod != "" || r.RPCResponse
}

// badMCPToolName reports whether r is an MCP tools/call whose tool name
// strict_tool_names refuses.
func badMCPToolName(ep *openshell.Endpoint, r *Request) bool {
	return strings.EqualFold(ep.Protocol, openshell.ProtocolMCP) && r.RPCMethod == "tools/call" && r.Tool != "" &&
		strictToolNames(ep) && !strictMCPToolName(r.Tool)
}

// strictToolNames is the endpoint's mcp.strict_tool_names, on unless set
// to false.
func strictToolNames(ep *openshell.Endpoint) bool {
	return ep.MCP == nil || ep.MCP.StrictToolNames == nil || *ep.MCP.StrictToolNames
}

// mcpToolName is the tool name jsonrpc.rs validate_mcp_tool_name accepts
// (its error message quotes this expression).
var mcpToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// strictMCPToolName is jsonrpc.rs validate_mcp_tool_name.
func strictMCPToolName(name string) bool {
	return mcpToolName.MatchString(name)
}

// decideL7 is allow_request and not deny_request over every matching
// policy's endpoints on this host:port whose endpoint path matches
// (sandbox-policy.rego:1012 endpoint_matches_l7_request).
func (d *Decider) decideL7(ms []matched, cfg *matched, r *Request, path string) Decision {
	var allow *Decision
	for _, m := range ms {
		if !d.l7EndpointMatches(m.ep, path) {
			continue
		}
		if dd, ok := d.endpointDenies(m, r, path); ok {
			return enforce(cfg, dd)
		}
		if allow == nil {
			if dd, ok := d.allowed(m, r, path); ok {
				allow = &dd
			}
		}
	}
	if allow != nil {
		return *allow
	}
	return enforce(cfg, Decision{Policy: cfg.key, Path: epPath(cfg.key, cfg.i),
		Reason: fmt.Sprintf("no rule of endpoint %s allows %s %s (not permitted by policy)", cfg.ep.Host, r.Method, path)})
}

// l7EndpointMatches is endpoint_matches_l7_request (sandbox-policy.rego:1012)
// for the path: an endpoint without a path, or whose path glob matches.
func (d *Decider) l7EndpointMatches(ep *openshell.Endpoint, path string) bool {
	return ep.Path == "" || d.pathMatches(ep.Path, path)
}

// endpointDenies is deny_request for the endpoint of m: its first deny
// rule that matches r, else a built-in denial (builtinDeny).
func (d *Decider) endpointDenies(m matched, r *Request, path string) (Decision, bool) {
	for j := range m.ep.DenyRules {
		if d.denied(m.ep, &m.ep.DenyRules[j], r, path) {
			return Decision{Policy: m.key, Path: fmt.Sprintf("%s.deny_rules[%d]", epPath(m.key, m.i), j),
				Reason: fmt.Sprintf("%s %s blocked by deny rule", r.Method, path)}, true
		}
	}
	return d.builtinDeny(m, r)
}

// enforce turns a denial into an audited allow unless the connection's
// endpoint config says enforcement: enforce (l7/mod.rs:209 @ v0.0.111).
func enforce(cfg *matched, d Decision) Decision {
	if cfg.ep.Enforcement != openshell.EnforcementEnforce {
		d.Allowed, d.Audit = true, true
		e := cfg.ep.Enforcement
		if e == "" {
			e = "unset, which is audit"
		}
		d.Reason += fmt.Sprintf(" (enforcement %s: audited, not blocked)", e)
	}
	return d
}

func epPath(key string, i int) string {
	return fmt.Sprintf("network_policies.%s.endpoints[%d]", key, i)
}

func jsonrpcFamily(ep *openshell.Endpoint) bool {
	return ep.Protocol == openshell.ProtocolJSONRPC || ep.Protocol == openshell.ProtocolMCP
}

// allowed is request_allowed_for_endpoint (sandbox-policy.rego:476-573):
// a rule of the endpoint, then the MCP allowances that need no rule, then
// GraphQL.
func (d *Decider) allowed(m matched, r *Request, path string) (Decision, bool) {
	rules := d.rules[m.ep]
	for j := range rules {
		if why, ok := d.ruleAllows(m.ep, &rules[j], r, path); ok {
			return ruleDecision(m, rules, j, r, why), true
		}
	}
	if dec, ok := mcpAllowed(m, rules, r); ok {
		return dec, true
	}
	// GraphQL (:573).
	if len(r.GraphQL) > 0 && d.graphqlAllowed(m.ep, rules, r) {
		return Decision{Allowed: true, Policy: m.key, Path: epPath(m.key, m.i), Reason: "every GraphQL operation is allowed by a rule"}, true
	}
	return Decision{}, false
}

// ruleAllows reports whether the allow rule ru of ep matches r, and why.
func (d *Decider) ruleAllows(ep *openshell.Endpoint, ru *openshell.Match, r *Request, path string) (string, bool) {
	switch {
	// REST (:476): not JSON-RPC family, method, path, query.
	case d.restRuleMatches(ep, ru, r, path, true):
		return fmt.Sprintf("allowed by rule %s %s", ru.Method, ru.Path), true
	// SQL (:488): command, "*" or case-insensitive.
	case sqlRuleMatches(ru, r):
		return fmt.Sprintf("allowed by SQL rule %s", ru.Command), true
	// JSON-RPC family (:497), never a response frame.
	case !r.RPCResponse && d.rpcRuleMatches(ep, ru, r):
		return fmt.Sprintf("allowed by JSON-RPC rule %s", ru.Method), true
	}
	return "", false
}

// restRuleMatches is the REST arm of an allow rule (sandbox-policy.rego:476)
// or a deny rule (:306): an endpoint not of the JSON-RPC family, the
// method, the path, and the query as allow or deny rules read it
// (queryMatches).
func (d *Decider) restRuleMatches(ep *openshell.Endpoint, ru *openshell.Match, r *Request, path string, allow bool) bool {
	return !jsonrpcFamily(ep) && ru.Method != "" && methodMatches(r.Method, ru.Method) &&
		d.pathMatches(ru.Path, path) && d.queryMatches(ru.Query, r, allow)
}

// sqlRuleMatches is the SQL arm of an allow rule (:488) or a deny rule
// (:318): the command, "*" or case-insensitively equal.
func sqlRuleMatches(ru *openshell.Match, r *Request) bool {
	return ru.Command != "" && r.Command != "" && (ru.Command == "*" || strings.EqualFold(ru.Command, r.Command))
}

// rpcRuleMatches is the JSON-RPC arm of an allow rule (:497) or a deny
// rule (:327): a POST to a JSON-RPC family endpoint whose call the rule's
// method (and MCP params) match.
func (d *Decider) rpcRuleMatches(ep *openshell.Endpoint, ru *openshell.Match, r *Request) bool {
	return jsonrpcFamily(ep) && r.Method == "POST" && ru.Method != "" && d.rpcMatches(ep, ru, r)
}

// ruleDecision is the decision of rules[j] (an explicit rule, or a rule of
// the endpoint's access preset) allowing r.
func ruleDecision(m matched, rules []openshell.Match, j int, r *Request, why string) Decision {
	ep := m.ep
	p := epPath(m.key, m.i)
	if len(ep.Rules) > 0 {
		p = fmt.Sprintf("%s.rules[%d]", p, j)
	} else if ep.Access != "" {
		p += ".access"
		why = fmt.Sprintf("access %s allows %s (preset rule %s %s)", ep.Access, r.Method, rules[j].Method, rules[j].Path)
	}
	return Decision{Allowed: true, Policy: m.key, Path: p, Reason: why}
}

// mcpAllowed holds what an MCP endpoint allows without a rule:
// allow_all_known_mcp_methods (:509), unless a tools/call is narrowed by a
// rule with params.name; response frames (:526); and the receive stream
// (:560), a bodiless GET accepting an event stream.
func mcpAllowed(m matched, rules []openshell.Match, r *Request) (Decision, bool) {
	ep := m.ep
	if ep.Protocol != openshell.ProtocolMCP {
		return Decision{}, false
	}
	at := epPath(m.key, m.i)
	switch {
	case allowAllKnownMCP(ep) && mcpCallNotNarrowed(rules, r):
		return Decision{Allowed: true, Policy: m.key, Path: at + ".mcp", Reason: "allow_all_known_mcp_methods allows " + r.RPCMethod}, true
	case r.Method == "POST" && r.RPCResponse:
		return Decision{Allowed: true, Policy: m.key, Path: at, Reason: "MCP response frame"}, true
	case mcpReceiveStream(r):
		return Decision{Allowed: true, Policy: m.key, Path: at, Reason: "MCP receive stream (GET, text/event-stream)"}, true
	}
	return Decision{}, false
}

// mcpReceiveStream reports whether r opens an MCP receive stream: a GET
// accepting an event stream, with no call or response frame in its body.
func mcpReceiveStream(r *Request) bool {
	return r.Method == "GET" && r.RPCStream && r.RPCMethod == "" && !r.RPCResponse
}

// mcpCallNotNarrowed reports whether r is a JSON-RPC call that
// allow_all_known_mcp_methods covers: a POST call, other than a tools/call
// that a rule narrows by params.name.
func mcpCallNotNarrowed(rules []openshell.Match, r *Request) bool {
	return r.Method == "POST" && !r.RPCResponse && r.RPCMethod != "" &&
		!(r.RPCMethod == "tools/call" && mcpNarrowed(rules))
}

func allowAllKnownMCP(ep *openshell.Endpoint) bool {
	return ep.MCP != nil && ep.MCP.AllowAllKnownMCPMethods != nil && *ep.MCP.AllowAllKnownMCPMethods
}

func mcpNarrowed(rules []openshell.Match) bool {
	for i := range rules {
		if _, ok := flattenParams(&rules[i])["name"]; ok {
			return true
		}
	}
	return false
}

// builtinDeny holds the deny rules that need no deny_rules entry: JSON-RPC
// response frames (sandbox-policy.rego:336) and GraphQL operations the
// endpoint's rules do not allow (:357 graphql, :367 websocket).
func (d *Decider) builtinDeny(m matched, r *Request) (Decision, bool) {
	ep := m.ep
	var why string
	switch {
	case ep.Protocol == openshell.ProtocolJSONRPC && r.Method == "POST" && r.RPCResponse:
		why = "JSON-RPC response frames are not permitted from client to server"
	case d.graphqlNotAllowed(ep, r):
		why = "GraphQL operation not permitted by policy"
	default:
		return Decision{}, false
	}
	return Decision{Policy: m.key, Path: epPath(m.key, m.i), Reason: why}, true
}

// graphqlNotAllowed reports whether r carries GraphQL operations to a
// graphql or websocket endpoint whose rules do not allow them all.
func (d *Decider) graphqlNotAllowed(ep *openshell.Endpoint, r *Request) bool {
	graphqlCarrier := ep.Protocol == openshell.ProtocolGraphQL || ep.Protocol == openshell.ProtocolWebsocket
	return graphqlCarrier && len(r.GraphQL) > 0 && !d.graphqlAllowed(ep, d.rules[ep], r)
}

// denied is request_denied_for_endpoint for one deny rule
// (sandbox-policy.rego:306 REST, :318 SQL, :327 JSON-RPC, :344 GraphQL).
func (d *Decider) denied(ep *openshell.Endpoint, ru *openshell.Match, r *Request, path string) bool {
	return d.restRuleMatches(ep, ru, r, path, false) || sqlRuleMatches(ru, r) ||
		d.rpcRuleMatches(ep, ru, r) || d.graphqlDenied(ep, ru, r)
}

// graphqlDenied is the GraphQL arm of a deny rule (:344): a rule with an
// operation_type that matches one of the request's operations, a
// persisted query through the endpoint's registry.
func (d *Decider) graphqlDenied(ep *openshell.Endpoint, ru *openshell.Match, r *Request) bool {
	if ru.OperationType == "" {
		return false
	}
	return slices.ContainsFunc(r.GraphQL, func(op GraphQLOp) bool {
		eff, ok := effectiveOp(ep, op)
		return ok && d.opMatches(eff, ru, false)
	})
}
