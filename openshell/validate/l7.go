package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"

	"gopkg.in/yaml.v3"
)

// protocolFeature gates each L7 protocol; rest and sql exist in every
// supported release.
var protocolFeature = map[string]openshell.Feature{
	openshell.ProtocolGraphQL:   openshell.FeatureProtocolGraphQL,
	openshell.ProtocolWebsocket: openshell.FeatureProtocolWebsocket,
	openshell.ProtocolJSONRPC:   openshell.FeatureProtocolJSONRPC,
	openshell.ProtocolMCP:       openshell.FeatureProtocolJSONRPC,
	openshell.ProtocolTCP:       openshell.FeatureProtocolTCP,
}

var knownProtocols = []string{openshell.ProtocolREST, openshell.ProtocolSQL, openshell.ProtocolGraphQL, openshell.ProtocolWebsocket, openshell.ProtocolJSONRPC, openshell.ProtocolMCP, openshell.ProtocolTCP}

// Fields that only mean something to L7 inspection; protocol tcp rejects
// them and no protocol at all ignores them.
var tcpForbiddenFields = []string{
	"access", "rules", "deny_rules", "enforcement", "path", "allow_encoded_slash",
	"websocket_credential_rewrite", "request_body_credential_rewrite", "persisted_queries",
	"graphql_persisted_queries", "graphql_max_body_bytes", "json_rpc", "mcp",
	"credential_signing", "signing_service", "signing_region", "credential_binding",
}

func (c *checker) protocols() string {
	var out []string
	for _, p := range knownProtocols {
		if f, ok := protocolFeature[p]; !ok || c.supports(f) {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}

// checkL7 checks protocol, enforcement, access, rules and their combinations.
func (c *checker) checkL7(ep *obj, ports []int64) {
	// validate_sandbox_policy checks credential_signing on every endpoint,
	// whatever its protocol (lib.rs:1291-1315 @ v0.0.83, :1537-1560 @
	// v0.0.111; replayed by TestUpstreamLoad from lib.rs:1888/1998/2023 @
	// v0.0.83).
	if cs := ep.str("credential_signing"); cs != "" {
		c.checkCredentialSigning(ep, cs)
	}
	proto := ep.str("protocol")
	pn, pp := ep.pos("protocol"), ep.sub("protocol")
	if !c.checkProtocol(pn, pp, proto) {
		return
	}
	c.checkTLS(ep, proto, ports)
	switch proto {
	case openshell.ProtocolTCP:
		c.checkTCPFields(ep)
		return
	case "":
		c.checkNoProtocol(ep)
		return
	}
	if p := ep.str("path"); p != "" {
		c.checkEndpointPath(ep, p)
	}
	c.checkEnforcement(ep, proto)
	c.checkAccessAndRules(ep, proto)
	c.checkRuleBodies(ep, proto)
	c.checkProtocolSpecific(ep, proto)
}

// checkEndpointPath checks the endpoint's path selector p.
func (c *checker) checkEndpointPath(ep *obj, p string) {
	if !strings.HasPrefix(p, "/") && p != "**" {
		c.errorf(ep.pos("path"), ep.sub("path"), CodeRulePath, "write /"+p+", or ** for every path",
			"endpoint path must start with / or be **, got %q", p)
	}
	c.globSyntax(ep.pos("path"), ep.sub("path"))
}

// checkProtocol reports an unknown protocol, or one the target version
// does not know; false when it reported one.
func (c *checker) checkProtocol(pn *yaml.Node, pp, proto string) bool {
	if proto != "" && !slices.Contains(knownProtocols, proto) {
		hint := "one of: " + c.protocols() + "; omit protocol for plain L4"
		switch {
		case slices.Contains(knownProtocols, strings.ToLower(proto)):
			// L7Protocol::parse lower-cases (l7_validate.rs:26 @ v0.0.111), so
			// the policy loads, but every other check compares exactly.
			c.trapf(pn, pp, CodeProtocol, "write it in lower case: "+strings.ToLower(proto),
				"protocol %q is not lower case; OpenShell loads it but compares it case-insensitively in some checks and exactly in others", proto)
		case c.supports(openshell.FeatureUnknownProtocolReject):
			c.errorf(pn, pp, CodeProtocol, hint, "unknown protocol %q; OpenShell %s rejects the policy", proto, c.version)
		default:
			c.trapf(pn, pp, CodeProtocol, hint, "unknown protocol %q is silently treated as L4 passthrough by OpenShell %s: no L7 rule is enforced", proto, c.version)
		}
		return false
	}
	if f, ok := protocolFeature[proto]; ok && !c.supports(f) {
		since, _ := openshell.Since(f)
		c.errorf(pn, pp, CodeProtocol, fmt.Sprintf("target OpenShell %s or later, or use one of: %s", since, c.protocols()),
			"protocol %q needs OpenShell %s; %s does not know it", proto, since, c.version)
		return false
	}
	return true
}

// checkTCPFields reports L7-only fields on a protocol tcp endpoint.
func (c *checker) checkTCPFields(ep *obj) {
	var present []string
	for _, f := range tcpForbiddenFields {
		if presentField(ep, f) {
			present = append(present, f)
		}
	}
	if len(present) > 0 {
		c.errorf(ep.pos(present[0]), ep.sub(present[0]), CodeTCPL7Fields, "remove them, or pick an L7 protocol such as rest",
			"protocol tcp does not support L7-only fields: %s", strings.Join(present, ", "))
	}
}

// presentField reports whether an endpoint field holds a non-default value.
func presentField(ep *obj, name string) bool {
	n := ep.vals[name]
	if n == nil {
		return false
	}
	switch n.Kind {
	case yaml.SequenceNode, yaml.MappingNode:
		return len(n.Content) > 0 || slices.Contains(presentWhenEmpty, name)
	}
	return n.Value != "" && n.Value != "false"
}

// presentWhenEmpty are the L7-only mapping fields whose mere presence
// reaches the supervisor, even when empty.
var presentWhenEmpty = []string{"graphql_persisted_queries", "json_rpc", "mcp", "credential_binding"}

// checkNoProtocol flags L7 settings on an endpoint without a protocol: they
// never reach L7 parsing, so the endpoint grants full L4 access.
func (c *checker) checkNoProtocol(ep *obj) {
	// validate_l7_policies still walks the rules of an endpoint without a
	// protocol (l7/mod.rs:1399 @ v0.0.83, :1510 @ v0.0.111).
	c.checkRuleBodies(ep, "")
	// rules_would_deny_all has no protocol condition
	// (l7_validate.rs:173 @ v0.0.111).
	c.checkRules(ep, "", false)
	// Requests on such an endpoint still meet the passthrough relay, which
	// canonicalises with default options whatever the endpoint says
	// (RestProvider::default(), l7/relay.rs:2625-2629 @ v0.0.111,
	// :1712-1716 @ v0.0.83): the opt-in is ignored and %2F refused.
	if presentField(ep, "allow_encoded_slash") {
		c.trapf(ep.pos("allow_encoded_slash"), ep.sub("allow_encoded_slash"), CodeL7WithoutProtocol,
			"add `protocol: rest` with access or rules so the opt-in applies, or `tls: skip` if HTTP parsing is not needed",
			"allow_encoded_slash without a protocol is ignored: the passthrough relay parses every request strictly and refuses an encoded slash")
	}
	for _, f := range []string{"access", "rules"} {
		if presentField(ep, f) {
			c.trapf(ep.pos(f), ep.sub(f), CodeL7WithoutProtocol, "add `protocol: rest` (and `enforcement: enforce`) so the rules are enforced",
				"%s without a protocol is never inspected: the endpoint grants full L4 access to every method and path", f)
			return
		}
	}
	if presentField(ep, "deny_rules") {
		c.errorf(ep.pos("deny_rules"), ep.sub("deny_rules"), CodeL7WithoutProtocol, "add `protocol: rest` and a base allow set (access or rules)",
			"deny_rules require a protocol (L7 inspection must be enabled)")
		return
	}
	if presentField(ep, "enforcement") {
		c.warnf(ep.pos("enforcement"), ep.sub("enforcement"), CodeL7WithoutProtocol, "remove it, or add a protocol and rules",
			"enforcement has no effect on an endpoint without a protocol")
	}
}

// checkEnforcement checks the enforcement of an L7 endpoint: anything but
// enforce is audit.
func (c *checker) checkEnforcement(ep *obj, proto string) {
	e := ep.str("enforcement")
	n, p := ep.pos("enforcement"), ep.sub("enforcement")
	if proto == openshell.ProtocolSQL {
		c.checkSQLEnforcement(n, p, e)
		return
	}
	switch e {
	case openshell.EnforcementEnforce:
	case "":
		// OpenShell never validates enforcement; anything but "enforce"
		// is audit (sandbox-policy.rego, l7/mod.rs has no enforcement check
		// but sql's).
		c.trapf(n, p, CodeEnforcement, "add `enforcement: enforce`",
			"enforcement is omitted, which means audit: denied requests are logged and allowed")
	case openshell.EnforcementAudit:
		c.warnf(n, p, CodeEnforcement, "use `enforcement: enforce` once the rules are settled",
			"enforcement audit logs rule violations but allows them")
	default:
		c.trapf(n, p, CodeEnforcement, "write `enforcement: enforce`",
			"unknown enforcement %q is silently treated as audit: denied requests are logged and allowed", e)
	}
}

// checkSQLEnforcement checks the enforcement e of a protocol sql endpoint,
// which can only audit.
func (c *checker) checkSQLEnforcement(n *yaml.Node, p, e string) {
	switch e {
	case openshell.EnforcementEnforce:
		c.errorf(n, p, CodeSQLEnforce, "use `enforcement: audit`; SQL enforcement needs full SQL parsing, which OpenShell does not have",
			"protocol sql cannot be enforced")
	case "", openshell.EnforcementAudit:
	default:
		c.trapf(n, p, CodeEnforcement, "write `enforcement: audit`", "unknown enforcement %q (OpenShell treats it as audit)", e)
	}
}

func (c *checker) checkTLS(ep *obj, proto string, ports []int64) {
	t := ep.str("tls")
	n, p := ep.pos("tls"), ep.sub("tls")
	switch t {
	case "":
	case openshell.TLSSkip:
		if proto != "" && proto != openshell.ProtocolTCP && slices.Contains(ports, 443) {
			c.warnf(n, p, CodeTLSSkipL7, "remove tls: skip so OpenShell terminates TLS and can inspect requests",
				"tls: skip with L7 inspection on port 443: the rules cannot see encrypted traffic")
		}
	case "terminate", "passthrough":
		c.warnf(n, p, CodeTLS, "remove the tls field; use `tls: skip` only to disable termination",
			"tls: %s is deprecated and ignored; TLS is detected and terminated automatically", t)
	default:
		// Only terminate/passthrough and skip are looked at
		// (l7/mod.rs:1198-1210 @ v0.0.83); any other value loads.
		c.trapf(n, p, CodeTLS, "remove the tls field, or write `tls: skip`",
			"unknown tls value %q is silently treated as automatic TLS", t)
	}
}

// ruleSet is what an endpoint's access preset and rule lists amount to.
type ruleSet struct {
	access   string
	rules    *yaml.Node // the rules list, nil when absent
	deny     *yaml.Node // the deny_rules list, nil when absent
	hasRules bool
	hasDeny  bool
	allowAll bool // mcp.allow_all_known_mcp_methods
}

// checkAccessAndRules checks the allow set of an L7 endpoint (its access
// preset or rules) and its deny rules.
func (c *checker) checkAccessAndRules(ep *obj, proto string) {
	rs := ruleSet{
		access:   ep.str("access"),
		rules:    ep.vals["rules"],
		deny:     ep.vals["deny_rules"],
		hasRules: ep.hasItems("rules"),
		hasDeny:  ep.hasItems("deny_rules"),
		allowAll: ep.kids["mcp"].boolean("allow_all_known_mcp_methods"),
	}
	if rs.access != "" {
		c.checkAccess(ep, proto, rs)
	}
	c.checkEmptyRuleLists(ep, rs)
	noAllowSet := !rs.hasRules && rs.access == ""
	if noAllowSet {
		c.checkNoAllowSet(ep, proto, rs)
	}
	if rs.hasDeny && noAllowSet && !isJSONRPCFamily(proto) {
		c.errorf(ep.pos("deny_rules"), ep.sub("deny_rules"), CodeNoAllowSet, "add access or rules for the base allow set",
			"deny_rules require rules or access to define the base allow set")
	}
	c.checkRules(ep, proto, rs.allowAll)
	for i, d := range ep.lists["deny_rules"] {
		c.checkMatch(d, proto, fmt.Sprintf("%s[%d]", ep.sub("deny_rules"), i))
	}
}

// checkAccess checks an access preset: known, supported by the protocol,
// and not combined with rules.
func (c *checker) checkAccess(ep *obj, proto string, rs ruleSet) {
	switch {
	case isJSONRPCFamily(proto):
		hint := `use explicit rules with allow.method, e.g. method: "*"`
		if proto == openshell.ProtocolMCP {
			hint = "use rules/deny_rules, or set mcp.allow_all_known_mcp_methods: true"
		}
		c.errorf(ep.pos("access"), ep.sub("access"), CodeAccessJSONRPC, hint, "protocol %s does not support access presets", proto)
	case !slices.Contains(accessPresets, rs.access):
		// The policy loads: expand_access_presets skips the preset
		// silently (l7/mod.rs:1519 @ v0.0.83) or with a warning
		// (l7/mod.rs:1684-1689 @ v0.0.111).
		c.trapf(ep.pos("access"), ep.sub("access"), CodeAccess, "use read-only, read-write or full",
			"unknown access preset %q is ignored by OpenShell (it loads the policy and logs a warning at most), leaving no allow rule: every request is denied", rs.access)
	}
	if rs.hasRules {
		c.errorf(ep.pos("rules"), ep.sub("rules"), CodeAccessAndRules, "keep either access or rules",
			"access and rules are mutually exclusive")
	}
}

// accessPresets are the access values OpenShell expands.
var accessPresets = []string{openshell.AccessReadOnly, openshell.AccessReadWrite, openshell.AccessFull}

// checkEmptyRuleLists warns about rules: [] and deny_rules: [].
func (c *checker) checkEmptyRuleLists(ep *obj, rs ruleSet) {
	if rs.rules != nil && len(rs.rules.Content) == 0 {
		c.warnf(rs.rules, ep.sub("rules"), CodeEmptyRuleList, "remove it; give access or at least one rule", "rules: [] is the same as omitting rules")
	}
	if rs.deny != nil && len(rs.deny.Content) == 0 {
		c.warnf(rs.deny, ep.sub("deny_rules"), CodeEmptyRuleList, "remove it", "deny_rules: [] denies nothing")
	}
}

// checkNoAllowSet reports an endpoint with neither access nor rules, which
// each protocol handles its own way.
func (c *checker) checkNoAllowSet(ep *obj, proto string, rs ruleSet) {
	switch {
	case proto == openshell.ProtocolJSONRPC:
		c.errorf(ep.node, ep.sub("rules"), CodeNoAllowSet, `add rules with allow.method, e.g. method: "*"`, "protocol json-rpc requires explicit rules")
	case proto == openshell.ProtocolMCP:
		if !rs.allowAll {
			c.errorf(ep.node, ep.sub("rules"), CodeNoAllowSet, "add rules, or set mcp.allow_all_known_mcp_methods: true",
				"protocol mcp requires rules when mcp.allow_all_known_mcp_methods is false")
		}
	default:
		c.errorf(ep.node, ep.sub("access"), CodeNoAllowSet, "add `access: read-only` (or rules)",
			"protocol %s requires rules or access to define allowed traffic", proto)
	}
}

// checkRules checks each allow rule: rules without a condition (an error
// when every rule is one, the endpoint denying everything) and its match.
func (c *checker) checkRules(ep *obj, proto string, allowAll bool) {
	rules := ep.lists["rules"]
	empty := 0
	for _, r := range rules {
		if allow := r.kids["allow"]; allow != nil && emptyAllow(allow, proto, allowAll) {
			empty++
		}
	}
	for i, r := range rules {
		allow := r.kids["allow"]
		if allow == nil {
			continue
		}
		path := fmt.Sprintf("%s[%d]", ep.sub("rules"), i)
		if emptyAllow(allow, proto, allowAll) {
			c.reportEmptyAllow(allow, path, empty == len(rules))
		}
		c.checkMatch(allow, proto, path)
	}
}

func (c *checker) reportEmptyAllow(allow *obj, path string, all bool) {
	if all {
		// Rejected from v0.0.92 (l7_validate.rs:171-179 @ v0.0.111); before,
		// the policy loads and the endpoint denies everything.
		if c.supports(openshell.FeatureDenyAllRulesRejected) {
			c.errorf(allow.node, path, CodeRuleDeniesAll, `give at least a method, e.g. {method: GET, path: "/**"}`,
				"no rule has an allow condition: the endpoint would deny all traffic; OpenShell rejects it")
			return
		}
		c.trapf(allow.node, path, CodeRuleDeniesAll, `give at least a method, e.g. {method: GET, path: "/**"}`,
			"no rule has an allow condition: the endpoint denies all traffic")
		return
	}
	c.warnf(allow.node, path, CodeRuleDeniesAll, "remove it, or give it a method and path",
		"rule has no allow condition and matches nothing")
}

// methodsFor lists the request methods OpenShell recognises for a protocol.
func methodsFor(proto string) []string {
	if proto == openshell.ProtocolWebsocket {
		return []string{"GET", "WEBSOCKET_TEXT", "*"}
	}
	return []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "*"}
}

// checkMatch checks one allow or deny match.
func (c *checker) checkMatch(m *obj, proto, path string) {
	if proto == openshell.ProtocolREST || proto == openshell.ProtocolWebsocket {
		c.checkHTTPMatch(m, proto, path)
	}
	if m.str("command") != "" && proto == openshell.ProtocolREST {
		c.warnf(m.pos("command"), joinPath(path, "command"), CodeIgnoredField, "remove command; it applies to protocol sql",
			"command is for protocol sql and is ignored for rest")
	}
}

// checkHTTPMatch checks the method and path of a rest or websocket match.
func (c *checker) checkHTTPMatch(m *obj, proto, path string) {
	method, rpath := m.str("method"), m.str("path")
	if method != "" && !slices.Contains(methodsFor(proto), strings.ToUpper(method)) {
		c.warnf(m.pos("method"), joinPath(path, "method"), CodeRuleMethod, "standard methods: "+strings.Join(methodsFor(proto), ", "),
			"unknown %s method %q", proto, method)
	}
	if rpath == "" {
		return
	}
	if !strings.HasPrefix(rpath, "/") && rpath != "**" && rpath != "*" {
		// Not checked at load (validate_l7_policies only checks an
		// endpoint path, l7/mod.rs:997 @ v0.0.83): the rule matches nothing.
		c.trapf(m.pos("path"), joinPath(path, "path"), CodeRulePath, "request paths start with /: write /"+rpath,
			"path %q does not start with / and never matches a request", rpath)
	}
	c.globSyntax(m.pos("path"), joinPath(path, "path"))
}

// emptyAllow reports an allow match without any condition, which OpenShell
// treats as matching nothing (MCP with allow_all_known_mcp_methods excepted).
func emptyAllow(m *obj, proto string, mcpAllowAll bool) bool {
	return !slices.ContainsFunc(allowConditions, func(f string) bool { return m.str(f) != "" }) &&
		!m.has("tool") && !hasParamName(m) && !(proto == openshell.ProtocolMCP && mcpAllowAll)
}

// allowConditions are the string fields of an allow match that each make
// it a condition.
var allowConditions = []string{"method", "path", "command", "operation_type", "operation_name"}

func hasParamName(m *obj) bool {
	n := m.vals["params"]
	if n == nil {
		return false
	}
	for k := range pairs(n) {
		if k.Value == "name" {
			return true
		}
	}
	return false
}

// isJSONRPCFamily reports json-rpc and mcp, which share the JSON-RPC
// options and refuse access presets.
func isJSONRPCFamily(proto string) bool {
	return proto == openshell.ProtocolJSONRPC || proto == openshell.ProtocolMCP
}

// checkProtocolSpecific checks the options of one protocol given on an
// endpoint of another.
func (c *checker) checkProtocolSpecific(ep *obj, proto string) {
	if mcp := ep.kids["mcp"]; mcp != nil && proto != openshell.ProtocolMCP {
		c.checkMCPOptionsOffMCP(mcp, proto)
	}
	if ep.kids["json_rpc"] != nil && !isJSONRPCFamily(proto) {
		c.warnf(ep.pos("json_rpc"), ep.sub("json_rpc"), CodeIgnoredField, "remove json_rpc", "json_rpc options are ignored unless protocol is json-rpc or mcp")
	}
	c.checkGraphQLOptions(ep, proto)
	c.checkCredentialRewrite(ep, proto)
}

// checkMCPOptionsOffMCP checks the mcp options of an endpoint whose
// protocol is not mcp. Only the two booleans reach the supervisor's JSON as
// mcp_* keys, rejected off mcp (l7/mod.rs:1114-1143 @ v0.0.83);
// max_body_bytes becomes json_rpc_max_body_bytes, ignored off the JSON-RPC
// family with a warning (l7/mod.rs:1106).
func (c *checker) checkMCPOptionsOffMCP(mcp *obj, proto string) {
	for _, f := range []string{"strict_tool_names", "allow_all_known_mcp_methods"} {
		if mcp.has(f) {
			c.errorf(mcp.pos(f), mcp.sub(f), CodeIgnoredField, "remove mcp, or use protocol mcp", "mcp.%s is only valid for protocol mcp", f)
		}
	}
	if mcp.num("max_body_bytes") > 0 && proto != openshell.ProtocolJSONRPC {
		c.warnf(mcp.pos("max_body_bytes"), mcp.sub("max_body_bytes"), CodeIgnoredField, "remove mcp", "mcp.max_body_bytes is ignored unless protocol is json-rpc or mcp")
	}
}

// checkGraphQLOptions checks the endpoint-level GraphQL options: ignored
// outside graphql and websocket, and well-formed.
func (c *checker) checkGraphQLOptions(ep *obj, proto string) {
	if proto != openshell.ProtocolGraphQL && proto != openshell.ProtocolWebsocket {
		c.warnGraphQLOptionsIgnored(ep)
	}
	if pq := ep.str("persisted_queries"); !slices.Contains(persistedQueryModes, pq) {
		c.errorf(ep.pos("persisted_queries"), ep.sub("persisted_queries"), CodeIgnoredField, "use deny or allow_registered",
			"persisted_queries must be deny or allow_registered, got %q", pq)
	}
	if ep.has("graphql_max_body_bytes") && ep.num("graphql_max_body_bytes") == 0 {
		// 0 never reaches the supervisor (opa.rs:1378 @ v0.0.83 emits it
		// only when > 0): the default limit applies.
		c.warnf(ep.pos("graphql_max_body_bytes"), ep.sub("graphql_max_body_bytes"), CodeType, "give a positive byte count, or remove it", "graphql_max_body_bytes: 0 means OpenShell's default limit")
	}
}

// persistedQueryModes are the persisted_queries values OpenShell knows
// ("" when omitted).
var persistedQueryModes = []string{"", "deny", "allow_registered"}

// warnGraphQLOptionsIgnored warns about GraphQL options on an endpoint
// whose protocol ignores them.
func (c *checker) warnGraphQLOptionsIgnored(ep *obj) {
	for _, f := range []string{"persisted_queries", "graphql_persisted_queries", "graphql_max_body_bytes"} {
		if ep.has(f) {
			c.warnf(ep.pos(f), ep.sub(f), CodeIgnoredField, "remove it, or use protocol graphql", "%s is ignored unless protocol is graphql or websocket", f)
		}
	}
}

// checkCredentialRewrite warns about credential rewrites a protocol ignores.
func (c *checker) checkCredentialRewrite(ep *obj, proto string) {
	if ep.boolean("request_body_credential_rewrite") && proto != openshell.ProtocolREST {
		c.warnf(ep.pos("request_body_credential_rewrite"), ep.sub("request_body_credential_rewrite"), CodeIgnoredField, "use protocol rest",
			"request_body_credential_rewrite is ignored unless protocol is rest")
	}
	if ep.boolean("websocket_credential_rewrite") && proto != openshell.ProtocolREST && proto != openshell.ProtocolWebsocket {
		c.warnf(ep.pos("websocket_credential_rewrite"), ep.sub("websocket_credential_rewrite"), CodeIgnoredField, "use protocol rest or websocket",
			"websocket_credential_rewrite is ignored unless protocol is rest or websocket")
	}
}

// checkCredentialSigning checks a non-empty credential_signing: a known
// scheme, a signing service, and no request-body rewrite beside it.
func (c *checker) checkCredentialSigning(ep *obj, cs string) {
	if cs != "sigv4" && cs != "sigv4:body" && cs != "sigv4:no_body" {
		c.errorf(ep.pos("credential_signing"), ep.sub("credential_signing"), CodeCredentialSigning, "use sigv4, sigv4:body or sigv4:no_body",
			"unknown credential_signing %q", cs)
	}
	if ep.str("signing_service") == "" {
		c.errorf(ep.pos("credential_signing"), ep.sub("signing_service"), CodeCredentialSigning, "set signing_service, e.g. s3",
			"credential_signing is set but signing_service is empty")
	}
	if ep.boolean("request_body_credential_rewrite") {
		c.errorf(ep.pos("credential_signing"), ep.sub("credential_signing"), CodeCredentialSigning, "drop one of them",
			"credential_signing and request_body_credential_rewrite are mutually exclusive")
	}
}

// globSyntax warns about unbalanced brackets or braces in a glob.
func (c *checker) globSyntax(n *yaml.Node, path string) {
	if n == nil {
		return
	}
	s := n.Value
	if !balanced(s, '[', ']') || !balanced(s, '{', '}') {
		c.warnf(n, path, CodeGlobSyntax, "balance the [ ] and { } in the glob", "glob %q has unbalanced brackets or braces", s)
	}
}

// balanced reports whether every closing byte in s follows its opening one.
func balanced(s string, opening, closing byte) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case opening:
			depth++
		case closing:
			depth--
		}
		if depth < 0 {
			return false
		}
	}
	return depth == 0
}
