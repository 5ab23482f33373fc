package validate

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// These cases pin what OpenShell itself does when it loads a policy, per
// class of disagreement found against its load code (issue 10). Each name
// cites the OpenShell check (file:line @ tag; l7/mod.rs is
// crates/openshell-supervisor-network/src/l7/mod.rs, lib.rs and
// middleware.rs are crates/openshell-policy/src/). Verdicts: an error code
// (OpenShell refuses), a trap code (loads, but does not do what it says),
// or "" (loads: no error at all).

const fidelityHead = `version: 1
filesystem_policy: {include_workdir: true, read_only: [/usr], read_write: [/sandbox, /tmp]}
landlock: {compatibility: best_effort}
process: {run_as_user: sandbox, run_as_group: sandbox}
`

// oneEndpoint is a complete policy with one network policy holding ep, a
// YAML flow mapping; extra is appended at the top level.
func oneEndpoint(ep, extra string) []byte {
	return []byte(fidelityHead + "network_policies:\n  p:\n    binaries: [{path: /usr/bin/curl}]\n    endpoints:\n      - " + ep + "\n" + extra)
}

type verdict struct {
	code string             // "" = loads without any error
	sev  openshell.Severity // openshell.SeverityError, trap or openshell.SeverityWarning
}

var (
	loads = verdict{}
	both  = []string{"v0.0.83", "v0.0.111"}
	v111  = []string{"v0.0.111"}
)

func refuses(code string) verdict { return verdict{code, openshell.SeverityError} }
func trapped(code string) verdict { return verdict{code, trap} }

const (
	mcpEP  = `{host: mcp.example.com, port: 443, protocol: mcp, enforcement: enforce, `
	rpcEP  = `{host: rpc.example.com, port: 443, protocol: json-rpc, enforcement: enforce, `
	gqlEP  = `{host: api.example.com, port: 443, protocol: graphql, enforcement: enforce, `
	wsEP   = `{host: ws.example.com, port: 443, protocol: websocket, enforcement: enforce, `
	restEP = `{host: api.example.com, port: 443, protocol: rest, enforcement: enforce, `
)

var fidelityCases = []struct {
	name     string
	versions []string
	ep       string
	extra    string
	want     verdict
}{
	// JSON-RPC rule bodies: validate_jsonrpc_rule_fields (l7/mod.rs:673-697 @ v0.0.83, :739-763 @ v0.0.111).
	{"jsonrpc params refused l7/mod.rs:681@v0.0.83 :747@v0.0.111", both, rpcEP + `rules: [{allow: {method: eth_call, params: {to: "0x1"}}}]}`, "", refuses(CodeParamsProtocol)},
	{"jsonrpc tool becomes params.name refused lib.rs:487@v0.0.83 l7/mod.rs:681", both, rpcEP + `rules: [{allow: {method: eth_call, tool: x}}]}`, "", refuses(CodeParamsProtocol)},
	{"jsonrpc method glob refused l7/mod.rs:676@v0.0.83 :742@v0.0.111", both, rpcEP + `rules: [{allow: {method: "eth_*"}}]}`, "", refuses(CodeJSONRPCRule)},
	{"jsonrpc method missing refused l7/mod.rs:674@v0.0.83 :740@v0.0.111", both, rpcEP + `rules: [{allow: {path: /rpc}}]}`, "", refuses(CodeJSONRPCRule)},
	{"jsonrpc path refused l7/mod.rs:691@v0.0.83 :757@v0.0.111", both, rpcEP + `rules: [{allow: {method: "*", path: /rpc}}]}`, "", refuses(CodeJSONRPCRule)},
	{"jsonrpc deny params refused l7/mod.rs:1304@v0.0.83", both, rpcEP + `rules: [{allow: {method: "*"}}], deny_rules: [{method: eth_sign, params: {a: b}}]}`, "", refuses(CodeParamsProtocol)},
	{"jsonrpc star method loads", both, rpcEP + `rules: [{allow: {method: "*"}}]}`, "", loads},
	{"jsonrpc exact method loads", both, rpcEP + `rules: [{allow: {method: eth_call}}]}`, "", loads},

	// MCP rule bodies (l7/mod.rs:699-717 @ v0.0.83, :765-783 @ v0.0.111).
	{"mcp tool without method refused l7/mod.rs:701@v0.0.83 :767@v0.0.111", both, mcpEP + `rules: [{allow: {tool: search}}]}`, "", refuses(CodeJSONRPCRule)},
	{"mcp tool under allow_all loads opa.rs:1016 normalizes tools/call", both, mcpEP + `mcp: {allow_all_known_mcp_methods: true}, rules: [{allow: {tool: search}}]}`, "", loads},
	{"mcp allow_all without rules loads l7_validate.rs:165@v0.0.111", both, mcpEP + `mcp: {allow_all_known_mcp_methods: true}}`, "", loads},
	{"mcp allow_all method-less rule beside tool rules loads l7/mod.rs:1403@v0.0.83", []string{"v0.0.83"}, mcpEP + `mcp: {allow_all_known_mcp_methods: true}, rules: [{allow: {tool: search}}, {allow: {command: x}}]}`, "", loads},
	{"mcp allow_all method-less rule beside tool rules refused l7/mod.rs:1077@v0.0.111", v111, mcpEP + `mcp: {allow_all_known_mcp_methods: true}, rules: [{allow: {tool: search}}, {allow: {command: x}}]}`, "", refuses(CodeMCPToolConflict)},
	{"mcp star method beside tool rules refused l7/mod.rs:1403-1413@v0.0.83", both, mcpEP + `rules: [{allow: {method: tools/call, tool: search}}, {allow: {method: "*"}}]}`, "", refuses(CodeMCPToolConflict)},
	{"mcp deny tools/call beside tool rules refused l7/mod.rs:1261-1271@v0.0.83", both, mcpEP + `rules: [{allow: {method: tools/call, tool: search}}], deny_rules: [{method: tools/call}]}`, "", refuses(CodeMCPToolConflict)},
	{"mcp method glob outside tools/ refused l7/mod.rs:745@v0.0.83 :811@v0.0.111", both, mcpEP + `rules: [{allow: {method: "resources/*"}}]}`, "", refuses(CodeJSONRPCRule)},
	{"mcp tools/ glob loads", both, mcpEP + `rules: [{allow: {method: "tools/*"}}]}`, "", loads},
	{"mcp tool with other method refused l7/mod.rs:705@v0.0.83", both, mcpEP + `rules: [{allow: {method: initialize, tool: search}}]}`, "", refuses(CodeJSONRPCRule)},
	{"mcp argument matching refused l7/mod.rs:819-824@v0.0.83", both, mcpEP + `rules: [{allow: {method: tools/call, params: {name: search, query: x}}}]}`, "", refuses(CodeJSONRPCRule)},
	{"mcp wildcard tool without strict names refused l7/mod.rs:849@v0.0.83", both, mcpEP + `mcp: {strict_tool_names: false}, rules: [{allow: {method: tools/call, tool: "search*"}}]}`, "", refuses(CodeJSONRPCRule)},
	{"mcp empty tool matcher refused l7/mod.rs:602@v0.0.83 via opa.rs:1158", both, mcpEP + `rules: [{allow: {method: tools/call, tool: {any: [x]}}}, {allow: {method: tools/call, params: {name: {}}}}]}`, "", refuses(CodeJSONRPCRule)},
	{"mcp path refused l7/mod.rs:712@v0.0.83", both, mcpEP + `rules: [{allow: {method: tools/list, path: /mcp}}]}`, "", refuses(CodeJSONRPCRule)},
	{"mcp options on rest refused l7/mod.rs:1138@v0.0.83", both, restEP + `access: read-only, mcp: {allow_all_known_mcp_methods: true}}`, "", refuses(CodeIgnoredField)},
	{"mcp max_body_bytes on rest only warns l7/mod.rs:1106@v0.0.83", both, restEP + `access: read-only, mcp: {max_body_bytes: 1024}}`, "", loads},
	{"mcp without host refused l7/mod.rs:985@v0.0.83 :1114@v0.0.111", both, `{port: 443, protocol: mcp, enforcement: enforce, rules: [{allow: {method: tools/list}}], allowed_ips: [10.0.0.0/24]}`, "", refuses(CodeHostMissing)},
	{"mcp without port refused l7/mod.rs:990@v0.0.83 :1119@v0.0.111", both, `{host: mcp.example.com, protocol: mcp, enforcement: enforce, rules: [{allow: {method: tools/list}}]}`, "", refuses(CodePortMissing)},

	// tool/params off mcp: validate_jsonrpc_rule_fields' last branch (l7/mod.rs:720-730 @ v0.0.83).
	{"rest tool refused l7/mod.rs:726@v0.0.83 :792@v0.0.111", both, restEP + `rules: [{allow: {method: GET, path: /x, tool: search}}]}`, "", refuses(CodeParamsProtocol)},
	{"rest params refused l7/mod.rs:726@v0.0.83", both, restEP + `rules: [{allow: {method: GET, path: /x, params: {a: b}}}]}`, "", refuses(CodeParamsProtocol)},

	// GraphQL: validate_graphql_rule(required=true) (l7/mod.rs:481-558 @ v0.0.83).
	{"graphql rule without operation_type refused l7/mod.rs:487-491@v0.0.83 :553@v0.0.111", both, gqlEP + `rules: [{allow: {operation_name: "Get*"}}]}`, "", refuses(CodeGraphQLRule)},
	{"graphql unknown operation_type refused l7/mod.rs:497@v0.0.83", both, gqlEP + `rules: [{allow: {operation_type: select}}]}`, "", refuses(CodeGraphQLRule)},
	{"graphql deny without operation_type refused l7/mod.rs:1333@v0.0.83", both, gqlEP + `access: read-only, deny_rules: [{operation_name: Delete}]}`, "", refuses(CodeGraphQLRule)},
	{"graphql allow query any:[] loads (query validated only on rest/websocket) l7/mod.rs:1362@v0.0.83", both, gqlEP + `rules: [{allow: {operation_type: query, query: {a: {any: []}}}}]}`, "", trapped(CodeQueryMatcher)},
	{"rest allow query any:[] refused l7/mod.rs:640@v0.0.83 :706@v0.0.111", both, restEP + `rules: [{allow: {method: GET, path: /x, query: {a: {any: []}}}}]}`, "", refuses(CodeQueryMatcher)},
	{"graphql deny query any:[] refused l7/mod.rs:1295@v0.0.83", both, gqlEP + `access: read-only, deny_rules: [{operation_type: mutation, query: {a: {any: []}}}]}`, "", refuses(CodeQueryMatcher)},
	{"graphql query rule loads", both, gqlEP + `rules: [{allow: {operation_type: query}}]}`, "", loads},
	{"graphql persisted query without fields refused opa.rs:1371 l7/mod.rs:519@v0.0.83", both, gqlEP + `rules: [{allow: {operation_type: query}}], persisted_queries: allow_registered, graphql_persisted_queries: {abc: {operation_type: query}}}`, "", refuses(CodeGraphQLRule)},
	{"graphql persisted query with fields loads", both, gqlEP + `rules: [{allow: {operation_type: query}}], persisted_queries: allow_registered, graphql_persisted_queries: {abc: {operation_type: query, fields: [viewer]}}}`, "", loads},

	// WebSocket + GraphQL (l7/mod.rs:1424-1441 @ v0.0.83, :1541-1558 @ v0.0.111; opa.rs:1268 always emits "method").
	{"websocket graphql subscription allow refused (upstream bug) l7/mod.rs:1434@v0.0.83 :1551@v0.0.111", both, wsEP + `rules: [{allow: {operation_type: subscription}}]}`, "", refuses(CodeWebsocketGraphQL)},
	{"websocket WEBSOCKET_TEXT beside graphql policy refused l7/mod.rs:1424@v0.0.83", both, wsEP + `rules: [{allow: {method: GET, path: /graphql}}, {allow: {method: WEBSOCKET_TEXT, path: /graphql}}], deny_rules: [{operation_type: mutation}]}`, "", refuses(CodeWebsocketGraphQL)},
	{"websocket graphql deny mixing path refused l7/mod.rs:1324@v0.0.83", both, wsEP + `access: read-only, deny_rules: [{path: /graphql, operation_type: mutation}]}`, "", refuses(CodeWebsocketGraphQL)},
	{"websocket graphql deny alone loads", both, wsEP + `access: read-only, deny_rules: [{operation_type: mutation}]}`, "", loads},
	{"websocket plain rules load", both, wsEP + `rules: [{allow: {method: GET, path: /ws}}, {allow: {method: WEBSOCKET_TEXT, path: /ws}}]}`, "", loads},

	// Rules that all deny: l7_validate.rs:171-179 from v0.0.92.
	{"all-empty rules load at v0.0.83 (no check before v0.0.92)", []string{"v0.0.83"}, restEP + `rules: [{allow: {query: {a: b}}}]}`, "", trapped(CodeRuleDeniesAll)},
	{"all-empty rules refused l7_validate.rs:173@v0.0.111", v111, restEP + `rules: [{allow: {query: {a: b}}}]}`, "", refuses(CodeRuleDeniesAll)},

	{"all-empty rules without a protocol refused l7_validate.rs:173@v0.0.111", v111, `{host: api.example.com, port: 443, rules: [{allow: {query: {a: b}}}]}`, "", refuses(CodeRuleDeniesAll)},

	// Endpoint host/port required from v0.0.111 (lib.rs:1480-1521 @ v0.0.111).
	{"port missing loads at v0.0.83", []string{"v0.0.83"}, `{host: api.example.com}`, "", trapped(CodePortMissing)},
	{"port missing refused lib.rs:1507@v0.0.111", v111, `{host: api.example.com}`, "", refuses(CodePortMissing)},
	{"host missing loads at v0.0.83", []string{"v0.0.83"}, `{port: 443}`, "", trapped(CodeHostMissing)},
	{"host missing refused lib.rs:1484@v0.0.111", v111, `{port: 443}`, "", refuses(CodeHostMissing)},
	{"port 0 in ports refused lib.rs:1513@v0.0.111", v111, `{host: api.example.com, ports: [0, 443]}`, "", refuses(CodePortRange)},

	// Traps: OpenShell loads these (warnings; policy compile treats them as errors).
	{"enforcement omitted is audit, loads", both, `{host: api.example.com, port: 443, protocol: rest, access: read-only}`, "", trapped(CodeEnforcement)},
	{"unknown sql enforcement is audit, loads", both, `{host: db.example.com, port: 5432, protocol: sql, enforcement: enforced, access: read-only}`, "", trapped(CodeEnforcement)},
	{"GraphQL rule fields off graphql and websocket are ignored", both, restEP + `rules: [{allow: {method: GET, path: "/x", operation_type: query}}]}`, "", verdict{CodeIgnoredField, openshell.SeverityWarning}},
	{"GraphQL options off graphql and websocket are ignored", both, restEP + `access: read-only, persisted_queries: deny}`, "", verdict{CodeIgnoredField, openshell.SeverityWarning}},
	{"port and ports loads opa.rs:1239@v0.0.83 keeps ports", both, `{host: api.example.com, port: 443, ports: [8443]}`, "", trapped(CodePortAndPorts)},
	{"allowed_ips loopback loads, refused per connection proxy.rs:4145@v0.0.111", both, `{host: db.example.com, port: 5432, allowed_ips: [127.0.0.1]}`, "", trapped(CodeAllowedIPBlocked)},
	{"access unknown loads l7/mod.rs:1519@v0.0.83 :1684@v0.0.111", both, restEP + `access: readonly}`, "", trapped(CodeAccess)},
	{"rule path without slash loads", both, restEP + `rules: [{allow: {method: GET, path: "repos/**"}}]}`, "", trapped(CodeRulePath)},
	{"localhost host loads", both, `{host: localhost, port: 8080}`, "", trapped(CodeHostBlocked)},

	// Malformed hosts load (and match nothing), except explicit tcp hosts from
	// v0.0.111 (validate_tcp_dns_host_selector, lib.rs:1595-1623 @ v0.0.111).
	{"trailing-dot host loads", both, `{host: api.example.com., port: 443}`, "", trapped(CodeHostTrailingDot)},
	{"tcp trailing-dot host refused lib.rs:1599@v0.0.111", v111, `{host: db.example.com., port: 5432, protocol: tcp}`, "", refuses(CodeHostTrailingDot)},
	{"tcp empty-label host refused host_pattern.rs:109 via lib.rs:1603", v111, `{host: db..example.com, port: 5432, protocol: tcp}`, "", refuses(CodeHostSyntax)},
	{"host with a port loads", both, `{host: "api.example.com:443", port: 443}`, "", trapped(CodeHostSyntax)},
	{"host over 253 bytes loads", both, "{host: " + strings.Repeat("a123456789.", 24) + "example.com, port: 443}", "", trapped(CodeHostSyntax)},

	// False claims removed.
	{"link-local allowed_ips on the host gateway alias loads proxy.rs:776@v0.0.83 destination.rs:86@v0.0.111", both, `{host: host.openshell.internal, port: 8080, allowed_ips: [169.254.1.2]}`, "", loads},

	// network_middlewares: middleware.rs:202-312 @ v0.0.111 (present from v0.0.86).
	{"middleware loads", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, order: 1, endpoints: {include: [api.example.com]}}`), loads},
	{"middleware on_error invalid refused middleware.rs:236@v0.0.111", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, on_error: ignore, endpoints: {include: [api.example.com]}}`), refuses(CodeMiddleware)},
	{"middleware empty implementation refused middleware.rs:229@v0.0.111", v111, restEP + `access: read-only}`, mw(`{middleware: "", endpoints: {include: [api.example.com]}}`), refuses(CodeMiddleware)},
	{"middleware without selector refused middleware.rs:246@v0.0.111", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex}`), refuses(CodeMiddlewareSelector)},
	{"middleware empty include refused middleware.rs:253@v0.0.111", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, endpoints: {exclude: [a.example.com]}}`), refuses(CodeMiddlewareSelector)},
	{"middleware brace pattern refused host_pattern.rs:101@v0.0.111", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, endpoints: {include: ["api.{a,b}.com"]}}`), refuses(CodeMiddlewareSelector)},
	{"middleware partial ** label refused host_pattern.rs:118 glob::Pattern", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, endpoints: {include: ["a**.example.com"]}}`), refuses(CodeMiddlewareSelector)},
	{"middleware empty label refused host_pattern.rs:109", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, endpoints: {include: ["api..example.com"]}}`), refuses(CodeMiddlewareSelector)},
	{"middleware duplicate omitted order refused middleware.rs:221@v0.0.111", v111, restEP + `access: read-only}`, "network_middlewares:\n  a: {middleware: openshell/regex, endpoints: {include: [a.example.com]}}\n  b: {middleware: openshell/regex, endpoints: {include: [b.example.com]}}\n", refuses(CodeMiddlewareOrder)},
	{"middleware selecting tls skip refused middleware.rs:294-306@v0.0.111", v111, `{host: api.example.com, port: 443, tls: skip}`, mw(`{middleware: openshell/regex, endpoints: {include: ["*.example.com"]}}`), refuses(CodeMiddlewareTLSSkip)},
	{"fail_open middleware over tls skip loads middleware.rs:286", v111, `{host: api.example.com, port: 443, tls: skip}`, mw(`{middleware: openshell/regex, on_error: fail_open, endpoints: {include: ["*.example.com"]}}`), loads},
	{"excluded tls skip host loads host_pattern.rs:74-83", v111, `{host: api.example.com, port: 443, tls: skip}`, mw(`{middleware: openshell/regex, endpoints: {include: ["*.example.com"], exclude: [api.example.com]}}`), loads},
	{"middleware unknown field refused middleware.rs:24 deny_unknown_fields", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, priority: 1, endpoints: {include: [a.example.com]}}`), refuses(CodeUnknownField)},
	{"middleware order not an i32 refused middleware.rs:30", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, order: high, endpoints: {include: [a.example.com]}}`), refuses(CodeType)},
	// Built-in catalog (found by TestUpstreamLoad): builtins/src/lib.rs:29-36, regex.rs:26-48 @ v0.0.111.
	{"unknown openshell/ built-in refused builtins lib.rs:32@v0.0.111", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/unknown, endpoints: {include: [a.example.com]}}`), refuses(CodeMiddleware)},
	{"openshell/regex mode allow refused regex.rs:34@v0.0.111", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, config: {mode: allow}, endpoints: {include: [a.example.com]}}`), refuses(CodeMiddleware)},
	{"openshell/regex unknown config key refused regex.rs:27@v0.0.111", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, config: {patterns: [x]}, endpoints: {include: [a.example.com]}}`), refuses(CodeMiddleware)},
	{"openshell/regex mode redact loads regex.rs:37@v0.0.111", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, config: {mode: redact}, endpoints: {include: [a.example.com]}}`), loads},
	{"registered external middleware not checked openshell-server/src/middleware.rs:9", v111, restEP + `access: read-only}`, mw(`{middleware: example/guard, config: {any: thing}, endpoints: {include: [a.example.com]}}`), loads},
	// credential_signing is checked on every endpoint (lib.rs:1291-1315 @ v0.0.83, :1537-1560 @ v0.0.111).
	{"credential_signing without service on L4 endpoint refused lib.rs:1302@v0.0.83", both, `{host: bedrock-runtime.us-east-1.amazonaws.com, port: 443, credential_signing: sigv4}`, "", refuses(CodeCredentialSigning)},
	{"unknown credential_signing on L4 endpoint refused lib.rs:1291@v0.0.83", both, `{host: example.amazonaws.com, port: 443, credential_signing: sigv4_typo, signing_service: bedrock}`, "", refuses(CodeCredentialSigning)},
	// The passthrough relay of an endpoint without a protocol canonicalises strictly (l7/relay.rs:2625 @ v0.0.111, :1712 @ v0.0.83).
	{"allow_encoded_slash without protocol is ignored l7/relay.rs:2629@v0.0.111", both, `{host: gitlab.example.com, port: 443, allow_encoded_slash: true}`, "", trapped(CodeL7WithoutProtocol)},
	{"allow_encoded_slash false without protocol loads", both, `{host: gitlab.example.com, port: 443, allow_encoded_slash: false}`, "", loads},
	// Duplicate keys (serde_yml 0.0.12 passes repeats through; lib.rs:1027 @ v0.0.111, :961 @ v0.0.83):
	// a struct field twice is serde_derive's "duplicate field" error, a BTreeMap key twice loads, last wins.
	{"duplicate endpoint field refused serde_derive struct_.rs:269", both, `{host: api.example.com, port: 443, port: 80}`, "", refuses(CodeDuplicateKey)},
	{"duplicate rule field refused serde_derive struct_.rs:269", both, restEP + `rules: [{allow: {method: GET, path: "/a", path: "/b"}}]}`, "", refuses(CodeDuplicateKey)},
	{"duplicate query key loads, last wins lib.rs:328@v0.0.111 :295@v0.0.83", both, restEP + `rules: [{allow: {method: GET, path: "/search", query: {q: "repo:acme/*", q: "*"}}}]}`, "", trapped(CodeDuplicateKey)},
	{"duplicate deny query key loads lib.rs:376@v0.0.111 :343@v0.0.83", both, restEP + `access: read-only, deny_rules: [{method: GET, path: "/x", query: {a: "1", a: "2"}}]}`, "", trapped(CodeDuplicateKey)},
	{"duplicate any in a query matcher refused lib.rs:361 QueryAnyDef", both, restEP + `rules: [{allow: {method: GET, path: "/s", query: {q: {any: [a], any: [b]}}}}]}`, "", refuses(CodeDuplicateKey)},
	{"duplicate params key loads lib.rs:338@v0.0.111", v111, mcpEP + `rules: [{allow: {method: tools/call, params: {name: search, name: "*"}}}]}`, "", trapped(CodeDuplicateKey)},
	{"duplicate persisted query loads lib.rs:163@v0.0.111 :138@v0.0.83", both, gqlEP + `persisted_queries: allow_registered, graphql_persisted_queries: {abc: {operation_type: query, fields: [a]}, abc: {operation_type: mutation, fields: [b]}}, rules: [{allow: {operation_type: query}}]}`, "", trapped(CodeDuplicateKey)},
	{"duplicate middleware key loads, last wins lib.rs:68@v0.0.111", v111, restEP + `access: read-only}`, "network_middlewares:\n  g: {middleware: openshell/regex, order: 1, endpoints: {include: [a.example.com]}}\n  g: {middleware: openshell/regex, order: 1, endpoints: {include: [b.example.com]}}\n", trapped(CodeDuplicateKey)},
	{"duplicate regex config key loads, the last mode kept middleware.rs:32@v0.0.111", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, config: {mode: allow, mode: redact}, endpoints: {include: [a.example.com]}}`), trapped(CodeDuplicateKey)},
	{"duplicate regex config key whose last mode is invalid refused regex.rs:34@v0.0.111", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, config: {mode: redact, mode: allow}, endpoints: {include: [a.example.com]}}`), refuses(CodeMiddleware)},
	{"duplicate middleware config refused middleware.rs:32 (a struct field)", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, config: {mode: redact}, config: {mode: redact}, endpoints: {include: [a.example.com]}}`), refuses(CodeDuplicateKey)},
	{"duplicate middleware order refused middleware.rs:30 (a struct field)", v111, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, order: 1, order: 2, endpoints: {include: [a.example.com]}}`), refuses(CodeDuplicateKey)},
	{"middleware at v0.0.83 is an unknown field", []string{"v0.0.83"}, restEP + `access: read-only}`, mw(`{middleware: openshell/regex, endpoints: {include: [a.example.com]}}`), refuses(CodeFieldTooNew)},
}

func mw(entry string) string { return "network_middlewares:\n  guard: " + entry + "\n" }

func TestValidateMatchesOpenShell(t *testing.T) {
	for _, tc := range fidelityCases {
		for _, v := range tc.versions {
			t.Run(v+"/"+tc.name, func(t *testing.T) {
				diags := File("p.yaml", oneEndpoint(tc.ep, tc.extra), v)
				checkVerdict(t, diags, tc.want)
			})
		}
	}
}

func checkVerdict(t *testing.T, diags []openshell.Diagnostic, want verdict) {
	t.Helper()
	if want.code == "" {
		if openshell.HasErrors(diags) {
			t.Errorf("OpenShell loads this policy; got errors:\n%s", render(diags))
		}
		return
	}
	for _, d := range diags {
		if d.Code == want.code && matchesSeverity(d, want.sev) {
			if want.sev != openshell.SeverityError && openshell.HasErrors(diags) {
				t.Errorf("OpenShell loads this policy; got errors:\n%s", render(diags))
			}
			return
		}
	}
	t.Errorf("want %s %s; got:\n%s", want.sev, want.code, render(diags))
}

// TestEmptyValues: serde_yml reads an empty plain value as an empty
// sequence, map or struct (deserialize_seq/deserialize_map in serde_yaml
// 0.9.34 src/de.rs, forked by serde_yml), and an explicit null only as an
// Option's None.
func TestEmptyValues(t *testing.T) {
	const p = "network_policies:\n  p:\n"
	for _, tc := range []struct {
		name, doc string
		want      map[string]verdict // by version; "" key for both
	}{
		{"network_policies left empty loads", "network_policies:\n", map[string]verdict{"": loads}},
		{"network_policies: null refused (invalid type: unit)", "network_policies: null\n", map[string]verdict{"": refuses(CodeType)}},
		{"endpoints left empty loads as []", p + "    binaries: [{path: /usr/bin/curl}]\n    endpoints:\n", map[string]verdict{"": trapped(CodeNoEndpoints)}},
		{"binaries left empty loads as []", p + "    endpoints: [{host: a.example.com, port: 443}]\n    binaries:\n", map[string]verdict{"": trapped(CodeNoBinaries)}},
		{"allow left empty is an empty rule", p + "    binaries: [{path: /usr/bin/curl}]\n    endpoints:\n      - host: a.example.com\n        port: 443\n        protocol: rest\n        enforcement: enforce\n        rules:\n          - allow:\n",
			map[string]verdict{"v0.0.83": trapped(CodeRuleDeniesAll), "v0.0.111": refuses(CodeRuleDeniesAll)}},
		{"network policy left empty loads as default", p, map[string]verdict{"": trapped(CodeNoEndpoints)}},
	} {
		for _, v := range openshell.SupportedVersions() {
			want, ok := tc.want[v]
			if !ok {
				want = tc.want[""]
			}
			t.Run(v+"/"+tc.name, func(t *testing.T) {
				checkVerdict(t, File("p.yaml", []byte(fidelityHead+tc.doc), v), want)
			})
		}
	}
}

// TestTrapsAreFatal: a trap is a warning for `policy validate` and fatal
// for the compiler.
func TestTrapsAreFatal(t *testing.T) {
	diags := File("p.yaml", oneEndpoint(`{host: api.example.com, port: 443, protocol: rest, access: read-only}`, ""), openshell.DefaultOpenShellVersion)
	var found bool
	for _, d := range diags {
		if d.Code == CodeEnforcement {
			found = true
			if d.Severity != openshell.SeverityWarning || !d.Trap || !d.IsFatal() {
				t.Errorf("enforcement omitted: %+v", d)
			}
		}
		if d.Code == CodeStaticOmitted && d.IsFatal() {
			t.Errorf("a plain warning is fatal: %+v", d)
		}
	}
	if !found {
		t.Fatalf("no OSP041:\n%s", render(diags))
	}
	if (openshell.Diagnostic{Severity: openshell.SeverityError}).IsFatal() != true {
		t.Error("an error is not fatal")
	}
}

// TestValidateAllOrder: the concurrent batch returns what Validate returns,
// in input order.
func TestValidateAllOrder(t *testing.T) {
	var inputs []Input
	for i, tc := range fidelityCases {
		inputs = append(inputs, Input{File: tc.name, Data: oneEndpoint(tc.ep, tc.extra)})
		if i > 40 {
			break
		}
	}
	got := All(inputs, openshell.DefaultOpenShellVersion)
	if len(got) != len(inputs) {
		t.Fatalf("%d reports for %d inputs", len(got), len(inputs))
	}
	for i, in := range inputs {
		want := File(in.File, in.Data, openshell.DefaultOpenShellVersion)
		if got[i].File != in.File || render(got[i].Diagnostics) != render(want) {
			t.Errorf("%s: batch and single validation differ", in.File)
		}
	}
	if len(All(nil, openshell.DefaultOpenShellVersion)) != 0 {
		t.Error("no inputs, some reports")
	}
}

// TestDuplicateMapKeyLastWins: a repeated network_policies key loads and the
// last entry replaces the earlier one (serde's map_impl insert,
// serde_core/src/de/impls.rs:1543 @ serde 1.0.228), so OpenShell's checks
// run on the last entry only; each value is still deserialized, so a shape
// error in the dropped one still refuses the file.
func TestDuplicateMapKeyLastWins(t *testing.T) {
	const good = "    binaries: [{path: /usr/bin/gh}]\n    endpoints: [{host: api.github.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}]\n"
	const semanticBad = "    binaries: [{path: /usr/bin/gh}]\n    endpoints: [{host: api.github.com, port: 443, protocol: rest, enforcement: enforce, access: read-only, rules: [{allow: {method: GET, path: /x}}]}]\n"
	const shapeBad = "    binaries: [{path: /usr/bin/gh}]\n    endpoints: [{host: api.github.com, port: 443, hosts: x}]\n"
	doc := func(first, second string) []byte {
		return []byte(fidelityHead + "network_policies:\n  gh:\n" + first + "  gh:\n" + second)
	}
	for _, tc := range []struct {
		name          string
		first, second string
		want          verdict
		notCode       string
	}{
		{"dropped entry's access+rules is never checked", semanticBad, good, trapped(CodeDuplicateKey), CodeAccessAndRules},
		{"kept entry's access+rules is refused", good, semanticBad, refuses(CodeAccessAndRules), ""},
		{"dropped entry's unknown field still refuses the file", shapeBad, good, refuses(CodeUnknownField), ""},
	} {
		for _, v := range openshell.SupportedVersions() {
			t.Run(v+"/"+tc.name, func(t *testing.T) {
				diags := File("p.yaml", doc(tc.first, tc.second), v)
				checkVerdict(t, diags, tc.want)
				dups := 0
				for _, d := range diags {
					if d.Code == tc.notCode {
						t.Errorf("reported on the dropped entry: %s", d)
					}
					if d.Code == CodeDuplicateKey {
						dups++
						if !d.Trap || d.Line != 7+strings.Count(tc.first, "\n") {
							t.Errorf("want a trap at the second key: %s", d)
						}
					}
				}
				if dups != 1 {
					t.Errorf("%d duplicate-key diagnostics, want 1:\n%s", dups, render(diags))
				}
			})
		}
	}
}
