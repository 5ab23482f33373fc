package validate

// Stable diagnostic codes of the offline validator. Codes never change
// meaning; retired codes are not reused. docs/policy-validate.md lists them.
const (
	// Document and schema.
	// OSP000 (target OpenShell version unknown) is openshell.CodeVersionUnsupported:
	// the provider profile decoder reports it too.
	CodeSyntax       = "OSP001" // YAML syntax, empty document, several documents
	CodeUnknownField = "OSP002" // key the release's serde struct does not know
	CodeType         = "OSP003" // wrong YAML type or out-of-range number
	CodeFieldTooNew  = "OSP004" // field added after the target release
	CodeRequired     = "OSP005" // required field missing
	CodeDuplicateKey = "OSP006" // the same key twice in one mapping (a trap in a name-keyed map: last wins)
	CodeTooLarge     = "OSP007" // serialized policy over 256 KiB
	CodeYAMLFeature  = "OSP008" // custom tags, merge keys, over-deep alias expansion

	// Static sections.
	CodeVersion         = "OSP010" // version is not 1
	CodeProcessIdentity = "OSP011" // run_as_user/group not sandbox or a valid numeric id
	CodeLandlock        = "OSP012" // unknown landlock compatibility (silently best_effort)
	CodeFSRelative      = "OSP013" // filesystem path not absolute
	CodeFSTraversal     = "OSP014" // filesystem path has a `..` component
	CodeFSTooLong       = "OSP015" // filesystem path over 4096 bytes
	CodeFSTooMany       = "OSP016" // more than 256 filesystem paths
	CodeFSRootWritable  = "OSP017" // `/` in read_write
	CodeStaticOmitted   = "OSP018" // static section omitted: runtime default applies

	// Network policies and binaries.
	CodeReservedKey = "OSP020" // network_policies key starts with _provider_
	CodeNoEndpoints = "OSP021" // a network policy without endpoints matches nothing
	CodeNoBinaries  = "OSP022" // a network policy without binaries matches nothing
	CodeBinaryPath  = "OSP023" // binary path empty or not absolute

	// Endpoint destination.
	CodeHostMissing     = "OSP030" // no host (and no allowed_ips)
	CodePortMissing     = "OSP031" // no port or ports
	CodePortRange       = "OSP032" // port 0 or duplicate in ports
	CodePortAndPorts    = "OSP033" // both port and ports
	CodeHostWildcard    = "OSP035" // `*`, `**`, partial `**`, wildcard outside the allowed labels
	CodeTLDWildcard     = "OSP036" // wildcard host with two or fewer labels
	CodeHostTrailingDot = "OSP037" // trailing-dot host
	CodeHostSyntax      = "OSP038" // scheme, port, path, whitespace or bad characters in host

	// L7 settings.
	CodeProtocol          = "OSP040" // unknown protocol or not in the target release
	CodeEnforcement       = "OSP041" // enforcement omitted or not enforce: audit (log and allow)
	CodeAccess            = "OSP042" // unknown access preset (ignored: denies all)
	CodeAccessAndRules    = "OSP043" // access and rules together
	CodeAccessJSONRPC     = "OSP044" // access preset on mcp/json-rpc
	CodeSQLEnforce        = "OSP045" // protocol sql with enforcement enforce
	CodeTCPL7Fields       = "OSP046" // protocol tcp with L7-only fields
	CodeTCPHost           = "OSP047" // protocol tcp with an IP literal or non-DNS host
	CodeL7WithoutProtocol = "OSP048" // access/rules/deny_rules/enforcement without protocol
	CodeNoAllowSet        = "OSP049" // protocol without rules or access
	CodeTLS               = "OSP050" // tls terminate/passthrough deprecated, unknown tls value
	CodeTLSSkipL7         = "OSP051" // tls skip with L7 on port 443
	CodeEmptyRuleList     = "OSP052" // rules: [] or deny_rules: []
	CodeRuleDeniesAll     = "OSP053" // a rule without any allow condition
	CodeRuleMethod        = "OSP054" // unknown or missing HTTP method
	CodeRulePath          = "OSP055" // rule path not starting with / or **
	CodeGlobSyntax        = "OSP056" // unbalanced [ ] or { } in a glob
	CodeQueryMatcher      = "OSP057" // query matcher {any: []} or empty glob
	CodeIgnoredField      = "OSP058" // field ignored for this protocol
	CodeCredentialSigning = "OSP059" // credential_signing value/service/rewrite conflicts

	// SSRF guard.
	CodeAllowedIPSyntax       = "OSP060" // allowed_ips entry not an IP or CIDR
	CodeAllowedIPBlocked      = "OSP061" // allowed_ips overlaps loopback/link-local/0.0.0.0
	CodeAllowedIPBroad        = "OSP062" // allowed_ips prefix broader than /16
	CodeHostBlocked           = "OSP063" // host is always blocked (loopback, link-local, metadata)
	CodeControlPlanePort      = "OSP064" // port 2379, 2380, 6443, 10250 or 10255
	CodePrivateNeedsAllow     = "OSP065" // internal hostname without allowed_ips before v0.0.53
	CodeHostOutsideAllowedIPs = "OSP066" // IP-literal host not covered by its own allowed_ips
	CodeAmbiguousEndpoints    = "OSP070" // same host:port with disagreeing settings

	// L7 rule bodies, as the supervisor validates them (validate_l7_policies).
	CodeJSONRPCRule      = "OSP080" // json-rpc/mcp rule: method missing or a glob, argument matching, path/query
	CodeParamsProtocol   = "OSP081" // tool/params on a protocol other than mcp
	CodeGraphQLRule      = "OSP082" // GraphQL rule or persisted query: operation_type missing or unknown, empty fields
	CodeWebsocketGraphQL = "OSP083" // GraphQL operation rules on protocol websocket
	CodeMCPToolConflict  = "OSP084" // an MCP method matcher covering tools/call beside tool allow rules

	// network_middlewares (openshell-policy/src/middleware.rs).
	CodeMiddleware         = "OSP090" // name/middleware empty, unknown on_error, too many configs
	CodeMiddlewareSelector = "OSP091" // endpoint selector missing, empty include, invalid host pattern, too many patterns
	CodeMiddlewareOrder    = "OSP092" // two middlewares with the same order
	CodeMiddlewareTLSSkip  = "OSP093" // a fail-closed middleware selecting a tls: skip endpoint
)
