package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"

	"gopkg.in/yaml.v3"
)

// This file models the per-rule half of OpenShell's L7 load validation,
// validate_l7_policies in crates/openshell-supervisor-network/src/l7/mod.rs
// (lines 939-1455 @ v0.0.83, 1068-1627 @ v0.0.111), as the supervisor runs
// it on a policy delivered by the gateway: on the JSON that
// proto_to_opa_data_json builds from the protobuf policy (opa.rs:1191 @
// v0.0.83, opa.rs:1786 @ v0.0.111), not on the YAML. That JSON differs from
// the YAML in ways that decide verdicts:
//
//   - every allow rule carries "method", "path", "command", "operation_type"
//     and "operation_name", empty when the YAML omits them (opa.rs:1268 @
//     v0.0.83, opa.rs:1864 @ v0.0.111); deny rules carry only non-empty
//     fields (opa.rs:1308 @ v0.0.83);
//   - `tool` is folded into params["name"] by the YAML->proto conversion
//     (params_with_tool, openshell-policy/src/lib.rs:487 @ v0.0.83, :520 @
//     v0.0.111), so the JSON never has "tool" and nested params are
//     flattened to dotted keys;
//   - a matcher becomes {"glob": g} or {"any": [...]}, and {} when both are
//     empty (l7_matchers_to_json, opa.rs:1158 @ v0.0.83);
//   - every graphql_persisted_queries entry carries "fields", [] when the
//     YAML omits it (opa.rs:1371 @ v0.0.83, opa.rs:1977 @ v0.0.111).

// protoMatch is one allow or deny match as the supervisor's JSON holds it.
type protoMatch struct {
	m         *obj
	path      string // policy path of the match, for diagnostics
	deny      bool
	method    string
	rpath     string
	command   string
	opType    string
	opName    string
	hasFields bool
	hasQuery  bool
	params    []protoParam // flattened, tool folded in as "name"
}

// protoParam is one flattened params entry.
type protoParam struct {
	key   string
	node  *yaml.Node // the YAML node to point at
	glob  string
	any   []string
	wild  bool // the matcher uses a glob wildcard
	empty bool // neither glob nor any: {} in the supervisor's JSON
}

// toolSelector reports a params["name"] entry: a tool selector.
func (p *protoMatch) toolSelector() bool {
	return slices.ContainsFunc(p.params, func(q protoParam) bool { return q.key == "name" })
}

// graphqlFields reports json_rule_has_graphql_fields (l7/mod.rs:886 @
// v0.0.83, :952 @ v0.0.111).
func (p *protoMatch) graphqlFields() bool {
	return p.opType != "" || p.opName != "" || p.hasFields
}

// transportFields reports json_rule_has_transport_fields (l7/mod.rs:897 @
// v0.0.83, :963 @ v0.0.111): the presence of the keys. Allow rules always
// carry "method" in the supervisor's JSON, so for an allow rule it is always
// true; deny rules carry only non-empty fields.
func (p *protoMatch) transportFields() bool {
	if !p.deny {
		return true
	}
	return p.method != "" || p.rpath != "" || p.hasQuery
}

func newProtoMatch(m *obj, path string, deny bool) *protoMatch {
	p := &protoMatch{m: m, path: path, deny: deny,
		method: m.str("method"), rpath: m.str("path"), command: m.str("command"),
		opType: m.str("operation_type"), opName: m.str("operation_name")}
	p.hasFields, p.hasQuery = m.hasItems("fields"), m.hasItems("query")
	if n := m.vals["params"]; n != nil {
		flattenParamNodes(n, "", &p.params, 0)
	}
	if t := m.vals["tool"]; t != nil && !p.toolSelector() {
		p.params = append(p.params, newProtoParam("name", t))
	}
	return p
}

// flattenParamNodes mirrors flatten_param_matchers (lib.rs:424 @ v0.0.111): a
// matcher is a leaf, any other mapping nests with dotted keys.
func flattenParamNodes(n *yaml.Node, prefix string, out *[]protoParam, depth int) {
	n = resolveAlias(n)
	if n == nil || n.Kind != yaml.MappingNode || depth > 110 {
		return
	}
	for k, v := range pairs(n) {
		key := joinPath(prefix, k.Value)
		if isMatcherNode(v) {
			*out = append(*out, newProtoParam(key, v))
			continue
		}
		flattenParamNodes(v, key, out, depth+1)
	}
}

// isMatcherNode reports whether serde's untagged ParamMatcherDef reads v as
// a matcher: a string, or a mapping with no key but `any` (an empty
// mapping is QueryAnyDef{any: []}).
func isMatcherNode(v *yaml.Node) bool {
	if v.Kind == yaml.ScalarNode {
		return true
	}
	if v.Kind != yaml.MappingNode {
		return false
	}
	for k := range pairs(v) {
		if k.Value != "any" {
			return false
		}
	}
	return true
}

func newProtoParam(key string, v *yaml.Node) protoParam {
	v = resolveAlias(v)
	p := protoParam{key: key, node: v}
	switch v.Kind {
	case yaml.ScalarNode:
		p.glob = v.Value
	case yaml.MappingNode:
		p.any = anyGlobValues(v)
	}
	p.empty = p.glob == "" && len(p.any) == 0
	p.wild = globUsesWildcard(p.glob) || slices.ContainsFunc(p.any, globUsesWildcard)
	return p
}

// anyGlobValues returns the globs of the {any: [globs]} matcher v.
func anyGlobValues(v *yaml.Node) []string {
	var globs []string
	for _, l := range pairs(v) {
		if l.Kind != yaml.SequenceNode {
			continue
		}
		for _, e := range l.Content {
			if e = resolveAlias(e); e != nil {
				globs = append(globs, e.Value)
			}
		}
	}
	return globs
}

// globUsesWildcard mirrors glob_uses_wildcard (l7/mod.rs:881 @ v0.0.83).
func globUsesWildcard(g string) bool { return strings.ContainsAny(g, "*?[]{}") }

// l7Endpoint is the endpoint-level context of the rule checks.
type l7Endpoint struct {
	ep           *obj
	proto        string
	strict       bool // mcp.strict_tool_names, default true
	allowAll     bool // mcp.allow_all_known_mcp_methods, default false
	toolAllows   bool // mcp_endpoint_has_tool_allow_selectors
	wsGraphQL    bool // websocket_has_graphql_policy
	allows, deny []*protoMatch
}

// checkRuleBodies runs OpenShell's per-rule checks on an endpoint with an
// L7 protocol.
func (c *checker) checkRuleBodies(ep *obj, proto string) {
	e := c.newL7Endpoint(ep, proto)
	for _, a := range e.allows {
		c.checkAllowBody(e, a)
		if !slices.Contains(queryCheckedProtocols, proto) {
			// The shape walk's query matcher errors load here.
			c.demoteToTrap(CodeQueryMatcher, joinPath(a.path, "query")+".")
		}
	}
	for _, d := range e.deny {
		c.checkDenyBody(e, d)
	}
	c.checkPersistedQueries(ep, proto)
}

// queryCheckedProtocols are the protocols whose allow-rule query matchers
// OpenShell checks at load: rest and websocket validate them
// (l7/mod.rs:1362-1394 @ v0.0.83, :1475-1507 @ v0.0.111), json-rpc/mcp
// refuse any query. Elsewhere an empty matcher loads and matches nothing.
var queryCheckedProtocols = []string{openshell.ProtocolREST, openshell.ProtocolWebsocket, openshell.ProtocolJSONRPC, openshell.ProtocolMCP}

// newL7Endpoint gathers the endpoint-level context of the rule checks.
func (c *checker) newL7Endpoint(ep *obj, proto string) *l7Endpoint {
	mcp := ep.kids["mcp"]
	e := &l7Endpoint{ep: ep, proto: proto, strict: strictToolNames(mcp),
		allowAll: mcp.boolean("allow_all_known_mcp_methods")}
	e.allows, e.deny = ruleMatches(ep)
	e.toolAllows = proto == openshell.ProtocolMCP && slices.ContainsFunc(e.allows, (*protoMatch).toolSelector)
	e.wsGraphQL = proto == openshell.ProtocolWebsocket && c.websocketHasGraphQLPolicy(e)
	return e
}

// strictToolNames reports mcp.strict_tool_names, true when omitted.
func strictToolNames(mcp *obj) bool {
	return !mcp.has("strict_tool_names") || mcp.boolean("strict_tool_names")
}

// ruleMatches returns the allow and deny matches of an endpoint's rules as
// the supervisor's JSON holds them.
func ruleMatches(ep *obj) (allows, deny []*protoMatch) {
	for i, r := range ep.lists["rules"] {
		if a := r.kids["allow"]; a != nil {
			allows = append(allows, newProtoMatch(a, fmt.Sprintf("%s[%d].allow", ep.sub("rules"), i), false))
		}
	}
	for i, d := range ep.lists["deny_rules"] {
		deny = append(deny, newProtoMatch(d, fmt.Sprintf("%s[%d]", ep.sub("deny_rules"), i), true))
	}
	return allows, deny
}

// websocketHasGraphQLPolicy mirrors json_endpoint_has_graphql_policy
// (l7/mod.rs:911 @ v0.0.83, :977 @ v0.0.111).
func (c *checker) websocketHasGraphQLPolicy(e *l7Endpoint) bool {
	if e.ep.hasItems("graphql_persisted_queries") {
		return true
	}
	if pq := e.ep.str("persisted_queries"); pq != "" && pq != "deny" {
		return true
	}
	return slices.ContainsFunc(e.allows, (*protoMatch).graphqlFields) || slices.ContainsFunc(e.deny, (*protoMatch).graphqlFields)
}

// checkAllowBody runs the allow-rule loop of validate_l7_policies
// (l7/mod.rs:1397-1450 @ v0.0.83, :1510-1567 @ v0.0.111).
func (c *checker) checkAllowBody(e *l7Endpoint, a *protoMatch) {
	c.checkAllowToolConflict(e, a)
	c.checkRPCFields(e, a)
	if e.wsGraphQL && strings.EqualFold(a.method, "WEBSOCKET_TEXT") {
		c.errorf(a.m.pos("method"), joinPath(a.path, "method"), CodeWebsocketGraphQL, "use operation_type/operation_name/fields rules for GraphQL client messages",
			"a WebSocket endpoint with GraphQL operation policy cannot allow raw WEBSOCKET_TEXT; OpenShell rejects the policy")
	}
	gql := a.graphqlFields()
	if e.proto == openshell.ProtocolWebsocket && gql && a.transportFields() {
		c.errorf(a.m.node, a.path, CodeWebsocketGraphQL, "OpenShell v0.0.83..v0.0.111 cannot load GraphQL operation allow rules on protocol websocket; use protocol graphql for GraphQL over HTTP, or a websocket access preset (see docs/openshell-fidelity.md)",
			"WebSocket GraphQL allow rules are rejected by OpenShell: the supervisor sees an (empty) method on every allow rule and reports that method/path/query are combined with operation_type/operation_name/fields")
	}
	c.checkGraphQLBody(e, a, gql)
}

// checkAllowToolConflict reports an allow rule without a tool selector whose
// method covers tools/call beside the endpoint's MCP tool allow rules.
func (c *checker) checkAllowToolConflict(e *l7Endpoint, a *protoMatch) {
	if !e.toolAllows || a.toolSelector() {
		return
	}
	// The empty-method case (normalized to "*" when
	// allow_all_known_mcp_methods is set) is rejected from v0.0.92
	// (l7/mod.rs:1077 @ v0.0.111).
	if methodMatchesToolsCall(a.method) || (a.method == "" && e.allowAll && c.supports(openshell.FeatureMCPAllowAllConflict)) {
		c.errorf(a.m.node, a.path, CodeMCPToolConflict, "add tool (or params.name) to this rule, or drop the tool allow rules",
			"method %s allows every tool call and conflicts with the endpoint's MCP tool allow rules; OpenShell rejects the policy", describeMethod(a.method))
	}
}

// checkGraphQLBody checks the GraphQL fields of a rule (gql says it has
// some): required on protocol graphql and for a websocket GraphQL rule,
// ignored elsewhere.
func (c *checker) checkGraphQLBody(e *l7Endpoint, p *protoMatch, gql bool) {
	switch {
	case e.proto == openshell.ProtocolGraphQL || (e.proto == openshell.ProtocolWebsocket && gql):
		c.checkGraphQLRule(p)
	case gql:
		c.warnGraphQLIgnored(p)
	}
}

// checkDenyBody runs the deny-rule loop of validate_l7_policies
// (l7/mod.rs:1254-1346 @ v0.0.83, :1356-1460 @ v0.0.111).
func (c *checker) checkDenyBody(e *l7Endpoint, d *protoMatch) {
	c.checkDenyToolConflict(e, d)
	c.checkRPCFields(e, d)
	gql := d.graphqlFields()
	if e.proto == openshell.ProtocolWebsocket && gql && d.transportFields() {
		c.errorf(d.m.node, d.path, CodeWebsocketGraphQL, "split it into a method/path deny rule and a GraphQL deny rule",
			"WebSocket GraphQL deny rules must not combine method/path/query with operation_type/operation_name/fields; OpenShell rejects the policy")
	}
	c.checkGraphQLBody(e, d, gql)
}

// checkDenyToolConflict reports a deny rule without a tool selector whose
// method covers tools/call beside the endpoint's MCP tool allow rules.
func (c *checker) checkDenyToolConflict(e *l7Endpoint, d *protoMatch) {
	if e.toolAllows && !d.toolSelector() && d.method != "" && methodMatchesToolsCall(d.method) {
		c.errorf(d.m.node, d.path, CodeMCPToolConflict, "add tool (or params.name) to deny specific tools, or drop the tool allow rules",
			"method %s denies every tool call and conflicts with the endpoint's MCP tool allow rules; OpenShell rejects the policy", describeMethod(d.method))
	}
}

func describeMethod(m string) string {
	if m == "" {
		return "omitted (every known MCP method under mcp.allow_all_known_mcp_methods)"
	}
	return fmt.Sprintf("%q", m)
}

// methodMatchesToolsCall mirrors method_matcher_matches_tools_call
// (l7/mod.rs:752 @ v0.0.83, :818 @ v0.0.111), glob::Pattern semantics.
func methodMatchesToolsCall(m string) bool {
	return m == "tools/call" || m == "*" || glob.MatchRust(m, "tools/call")
}

// checkRPCFields mirrors validate_jsonrpc_rule_fields (l7/mod.rs:659 @
// v0.0.83, :725 @ v0.0.111) on the supervisor's JSON.
func (c *checker) checkRPCFields(e *l7Endpoint, p *protoMatch) {
	switch e.proto {
	case openshell.ProtocolJSONRPC:
		c.checkJSONRPCFields(p)
	case openshell.ProtocolMCP:
		c.checkMCPFields(e, p)
	default:
		if len(p.params) > 0 {
			n, f := p.paramsField()
			c.errorf(n, joinPath(p.path, f), CodeParamsProtocol, "remove it, or use protocol mcp",
				"%s matching is only valid for protocol mcp (OpenShell turns tool into params.name and rejects params on protocol %s)", f, protoName(e.proto))
		}
	}
}

// paramsField names the field a match's params come from, with its node:
// params, or tool when there is no params.
func (p *protoMatch) paramsField() (*yaml.Node, string) {
	if !p.m.has("params") {
		return p.m.pos("tool"), "tool"
	}
	return p.m.pos("params"), "params"
}

func protoName(p string) string {
	if p == "" {
		return "(none)"
	}
	return p
}

func (c *checker) checkJSONRPCFields(p *protoMatch) {
	switch {
	case p.method == "":
		c.errorf(p.m.node, joinPath(p.path, "method"), CodeJSONRPCRule, `name the JSON-RPC method, or "*" for every method`,
			"method is required for json-rpc rules")
	case p.method != "*" && globUsesWildcard(p.method):
		c.errorf(p.m.pos("method"), joinPath(p.path, "method"), CodeJSONRPCRule, `use "*" or an exact method name`,
			"json-rpc method rules do not support globs, got %q", p.method)
	}
	if len(p.params) > 0 {
		n, f := p.paramsField()
		c.errorf(n, joinPath(p.path, f), CodeParamsProtocol, "remove it; json-rpc rules match on method only",
			"json-rpc rules do not support params matchers (a tool becomes params.name)")
	}
	c.rpcNoPathQuery(p, "json-rpc", "method")
}

func (c *checker) rpcNoPathQuery(p *protoMatch, proto, use string) {
	if p.rpath == "" && !p.hasQuery {
		return
	}
	f := "path"
	if p.rpath == "" {
		f = "query"
	}
	c.errorf(p.m.pos(f), joinPath(p.path, f), CodeJSONRPCRule, "remove path and query; match on "+use,
		"%s rules must use %s, not path/query", proto, use)
}

func (c *checker) checkMCPFields(e *l7Endpoint, p *protoMatch) {
	if p.method != "" {
		c.checkMCPMethodGlob(p)
	}
	switch {
	case p.method == "" && !e.allowAll:
		c.errorf(p.m.node, joinPath(p.path, "method"), CodeJSONRPCRule, `add method (tools/call for a tool rule), or set mcp.allow_all_known_mcp_methods: true`,
			"method is required when mcp.allow_all_known_mcp_methods is false")
	case p.toolSelector() && p.method != "" && p.method != "tools/call":
		c.errorf(p.m.pos("method"), joinPath(p.path, "method"), CodeJSONRPCRule, "write method: tools/call, or omit it",
			"method must be tools/call when an MCP rule uses tool or params.name, got %q", p.method)
	}
	for _, q := range p.params {
		c.checkMCPParam(e, q, joinPath(p.path, "params."+q.key))
	}
	c.rpcNoPathQuery(p, "mcp", "method/tool")
}

// checkMCPMethodGlob checks the glob syntax of an MCP rule's method, and
// that only the tools/ family uses wildcards.
func (c *checker) checkMCPMethodGlob(p *protoMatch) {
	c.globSyntax(p.m.pos("method"), joinPath(p.path, "method"))
	if globUsesWildcard(p.method) && !strings.HasPrefix(p.method, "tools/") {
		c.errorf(p.m.pos("method"), joinPath(p.path, "method"), CodeJSONRPCRule, "omit method to use the endpoint method profile, or name an exact method",
			"MCP method globs are only valid for the tools/ method family, got %q", p.method)
	}
}

// checkMCPParam checks one params entry of an MCP rule: only the tool name,
// a non-empty matcher, wildcards only under strict tool names.
func (c *checker) checkMCPParam(e *l7Endpoint, q protoParam, path string) {
	if q.key != "name" {
		c.errorf(q.node, path, CodeJSONRPCRule, "match on the tool name only (tool or params.name)",
			"MCP tool argument matching is not supported (params.%s)", q.key)
		return
	}
	if q.empty {
		c.errorf(q.node, path, CodeJSONRPCRule, `name the tool, or "*" for every tool`,
			"tool matcher is empty; OpenShell accepts only a glob or a non-empty any list")
	}
	if q.wild && !e.strict {
		c.errorf(q.node, path, CodeJSONRPCRule, "name the tools exactly, or keep mcp.strict_tool_names enabled",
			"wildcard tool-name matchers require mcp.strict_tool_names to remain enabled")
	}
}

// graphqlOperationTypes are the operation_type values OpenShell accepts,
// compared in lower case.
var graphqlOperationTypes = []string{"query", "mutation", "subscription", "*"}

// checkGraphQLRule mirrors validate_graphql_rule with required=true
// (l7/mod.rs:538 @ v0.0.83, :604 @ v0.0.111).
func (c *checker) checkGraphQLRule(p *protoMatch) {
	switch {
	case p.opType == "":
		c.errorf(p.m.node, joinPath(p.path, "operation_type"), CodeGraphQLRule, "add operation_type: query, mutation, subscription or *",
			"operation_type is required for GraphQL rules")
	case !slices.Contains(graphqlOperationTypes, strings.ToLower(p.opType)):
		c.errorf(p.m.pos("operation_type"), joinPath(p.path, "operation_type"), CodeGraphQLRule, "use query, mutation, subscription or *",
			"unknown GraphQL operation_type %q", p.opType)
	}
	if p.opName != "" {
		c.globSyntax(p.m.pos("operation_name"), joinPath(p.path, "operation_name"))
	}
	c.checkGraphQLFieldGlobs(p.m, p.path)
}

// checkGraphQLFieldGlobs mirrors validate_graphql_fields for a present
// fields list: no empty glob (l7/mod.rs:525-534 @ v0.0.83).
func (c *checker) checkGraphQLFieldGlobs(m *obj, path string) {
	vals, nodes := m.strs("fields")
	for i, f := range vals {
		fp := fmt.Sprintf("%s.fields[%d]", path, i)
		if f == "" {
			c.errorf(nodes[i], fp, CodeGraphQLRule, "remove the empty entry", "GraphQL field glob must not be empty")
			continue
		}
		c.globSyntax(nodes[i], fp)
	}
}

func (c *checker) warnGraphQLIgnored(p *protoMatch) {
	f := "operation_type"
	switch {
	case p.opType != "":
	case p.opName != "":
		f = "operation_name"
	default:
		f = "fields"
	}
	c.warnf(p.m.pos(f), joinPath(p.path, f), CodeIgnoredField, "remove it, or use protocol graphql",
		"GraphQL rule fields are ignored unless protocol is graphql or websocket")
}

// checkPersistedQueries validates each graphql_persisted_queries entry
// like a required GraphQL rule (l7/mod.rs:1185-1196 @ v0.0.83, :1316-1326 @
// v0.0.111). The supervisor's JSON always carries the entry's "fields"
// (opa.rs:1371 @ v0.0.83, :1977 @ v0.0.111), so an entry without fields
// fails "fields: list must not be empty" (l7/mod.rs:519 @ v0.0.83).
func (c *checker) checkPersistedQueries(ep *obj, proto string) {
	for _, e := range ep.maps["graphql_persisted_queries"] {
		op := e.val
		if op.str("operation_type") == "" {
			c.errorf(op.node, op.sub("operation_type"), CodeGraphQLRule, "add operation_type: query, mutation or subscription",
				"persisted query %q has no operation_type, which OpenShell requires", e.key)
		} else if t := op.str("operation_type"); !slices.Contains(graphqlOperationTypes, strings.ToLower(t)) {
			c.errorf(op.pos("operation_type"), op.sub("operation_type"), CodeGraphQLRule, "use query, mutation, subscription or *",
				"unknown GraphQL operation_type %q", t)
		}
		if !op.hasItems("fields") {
			c.errorf(op.node, op.sub("fields"), CodeGraphQLRule, "list the operation's root fields (see docs/openshell-fidelity.md)",
				"persisted query %q has no fields; OpenShell v0.0.83..v0.0.111 rejects it (\"fields: list must not be empty\")", e.key)
		}
		c.checkGraphQLFieldGlobs(op, op.path)
	}
}

// demoteToTrap turns the errors with code whose path starts with prefix
// into traps: the shape walk reports them before the protocol is known.
func (c *checker) demoteToTrap(code, prefix string) {
	for i := range c.diags {
		d := &c.diags[i]
		if d.Code == code && d.Severity == openshell.SeverityError && strings.HasPrefix(d.Path, prefix) {
			d.Severity, d.Trap = openshell.SeverityWarning, true
		}
	}
}
