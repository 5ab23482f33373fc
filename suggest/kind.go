package suggest

// Kind names one kind of OpenShell denial. The values are stable: they are
// the "kind" of the JSON output (fullsend.policy-suggest/v1).
type Kind string

// The denial kinds. Kinds describes each, with the OpenShell source that
// emits it.
const (
	KindL4NoEndpoint         Kind = "l4-no-endpoint"
	KindBinary               Kind = "binary-not-allowed"
	KindNoNetwork            Kind = "no-network"
	KindSSRF                 Kind = "ssrf"
	KindForward              Kind = "forward-deny"
	KindL7Deny               Kind = "l7-deny"
	KindL7DenyRule           Kind = "l7-deny-rule"
	KindAudit                Kind = "l7-audit"
	KindNonCanonical         Kind = "non-canonical"
	KindTunnelProtocol       Kind = "tunnel-protocol"
	KindCredentials          Kind = "uninspected-credentials"
	KindTLS                  Kind = "tls-unavailable"
	KindBypass               Kind = "bypass"
	KindTransparentTCP       Kind = "transparent-tcp"
	KindReloadRace           Kind = "reload-race"
	KindL7Other              Kind = "l7-other"
	KindUnknownDenial        Kind = "unknown"
	kindNotDenial            Kind = ""
	outcomeSuggest                = "suggest"
	outcomeManual                 = "manual"
	outcomeRefused                = "refused"
	outcomeIgnored                = "ignored"
	outcomeSuggestOrManual        = "suggest|manual"
	outcomeRefusedOrManual        = "refused|manual"
	outcomeSuggestIfAudit         = "suggest with --include-audit"
	outcomeSuggestOrProvisnl      = "suggest (provisional)|manual with --strict-paths"
)

// KindInfo is one row of the denial-kind table: how OpenShell reports the
// denial and what the suggester does with it.
type KindInfo struct {
	Kind Kind `json:"kind"`
	// Class is the OCSF class_uid: 4001 Network Activity, 4002 HTTP Activity.
	Class int `json:"class"`
	// Engine is the firewall_rule.type OpenShell sets.
	Engine string `json:"engine"`
	// Message is the OCSF message's shape (status_detail or message is the
	// shorthand's [reason:...]).
	Message string `json:"message"`
	// Outcome is what suggest does: suggest, manual, refused or ignored.
	Outcome string `json:"outcome"`
	// Why says, for a human, why that is the outcome.
	Why string `json:"why"`
	// Source is where OpenShell v0.0.111 emits it.
	Source string `json:"source"`
}

// Kinds is the denial-kind table, the contract of `policy suggest`
// (docs/policy-suggest.md prints the same table). Every row was read in
// OpenShell's source at v0.0.111 (paths are relative to NVIDIA/OpenShell);
// v0.0.83 emits the same messages from the same files unless a row says
// otherwise.
var Kinds = []KindInfo{
	{KindL4NoEndpoint, 4001, "opa", "CONNECT denied H:P; reason `endpoint H:P is not allowed by any policy` (`no matching policy` in older docs)", outcomeSuggestOrProvisnl,
		"HTTPS at L4 shows no path: a provisional access: read-only endpoint for the exact host and port, risk medium",
		"crates/openshell-supervisor-network/src/proxy.rs:1854-1871; crates/openshell-supervisor-network/data/sandbox-policy.rego:37-44"},
	{KindBinary, 4001, "opa", "CONNECT denied H:P; reason `binary 'B' not allowed in policy 'N' (ancestors: [...], cmdline: [...]). SYMLINK HINT: ...`", outcomeSuggestOrManual,
		"the binary is added to the endpoint that owns N, unless a policy binary is its symlink (manual)",
		"crates/openshell-supervisor-network/data/sandbox-policy.rego:46-62"},
	{KindNoNetwork, 4001, "opa", "CONNECT denied H:P; reason `network connections not allowed by policy`", outcomeSuggestOrProvisnl,
		"as l4-no-endpoint; the suggestion reports the tier it raises the agent to",
		"crates/openshell-supervisor-network/data/sandbox-policy.rego:64-69"},
	{KindSSRF, 4001, "ssrf", "CONNECT blocked: internal address H:P | CONNECT blocked: <detail> for H:P; reason `H resolves to always-blocked address IP`, `H resolves to IP which is not in allowed_ips`, `H resolves to internal address IP`, `port N is a blocked control-plane port`, `DNS resolution failed for H:P`", outcomeRefusedOrManual,
		"always-blocked, metadata and control-plane destinations are enforced whatever the policy (refused); allowed_ips is a human decision (manual, naming the IP)",
		"crates/openshell-supervisor-network/src/proxy.rs:1490-1531,3869-3955"},
	{KindForward, 4002, "opa", "FORWARD denied M H:P/path (plain http:// through HTTP_PROXY)", outcomeSuggest,
		"a new endpoint for the exact host and port with the observed METHOD /path rules",
		"crates/openshell-supervisor-network/src/proxy.rs:1459-1488,4946-4970"},
	{KindL7Deny, 4002, "l7", "L7_REQUEST deny M H:P/path reason=M /path not permitted by policy (FORWARD_L7 deny ... on the forward path)", outcomeSuggest,
		"one METHOD /path rule on the sandbox endpoint that owns the policy, placeholders put back",
		"crates/openshell-supervisor-network/src/l7/relay.rs:1375-1415; proxy.rs:5456-5504; crates/openshell-supervisor-network/data/sandbox-policy.rego:465-472"},
	{KindL7DenyRule, 4002, "l7", "L7_REQUEST deny ... reason=M /path blocked by deny rule", outcomeIgnored,
		"the author denied it on purpose; suggest never proposes removing a deny rule",
		"crates/openshell-supervisor-network/data/sandbox-policy.rego:457-463"},
	{KindAudit, 4002, "l7", "L7_REQUEST audit M H:P/path reason=...: action Allowed, severity Informational, visible in OCSF JSONL only", outcomeSuggestIfAudit,
		"an enforcement: audit endpoint let the request through; with --include-audit it is treated as l7-deny",
		"crates/openshell-supervisor-network/src/l7/relay.rs:1375-1397"},
	{KindL7Other, 4002, "l7-graphql|l7-jsonrpc|l7-mcp", "GraphQL, JSON-RPC and MCP denials (GRAPHQL_L7_REQUEST, WEBSOCKET_L7_REQUEST, ...)", outcomeManual,
		"the sandbox: block states REST rules only",
		"crates/openshell-supervisor-network/src/l7/relay.rs:2064; l7/websocket.rs:2086; crates/openshell-supervisor-network/data/sandbox-policy.rego:420-455"},
	{KindNonCanonical, 4002, "l7", "FORWARD_L7 denied non-canonical request-target for M H:P/path", outcomeManual,
		"the fix is allow_encoded_slash, which the sandbox: block does not expose",
		"crates/openshell-supervisor-network/src/proxy.rs:1423-1456"},
	{KindTunnelProtocol, 4001, "l7", "CONNECT_L7 blocked unsupported tunnel protocol for H:P", outcomeManual,
		"the endpoint's protocol is wrong for the traffic: configuration, not a grant",
		"crates/openshell-supervisor-network/src/proxy.rs:2314-2342"},
	{KindCredentials, 4001, "credentials", "CONNECT refused for H:P: uninspected credential traffic", outcomeManual,
		"a credentialed endpoint needs L7 inspection; never allow_uninspected_credentials",
		"crates/openshell-supervisor-network/src/proxy.rs:2024-2066"},
	{KindTLS, 4001, "tls", "CONNECT refused for H:P: <TLS termination unavailable>", outcomeManual,
		"TLS termination is a runtime problem; never tls: skip",
		"crates/openshell-supervisor-network/src/proxy.rs:1989-2021,2241-2269"},
	{KindBypass, 4001, "nftables", "BYPASS_DETECT ip:port proto=tcp binary=B action=reject reason=...", outcomeManual,
		"the tool ignored HTTPS_PROXY and connected directly: make it honour the proxy",
		"crates/openshell-supervisor-process/src/bypass_monitor/mod.rs:80-107"},
	{KindTransparentTCP, 4001, "opa", "Transparent TCP denied H:P | Transparent TCP denied: <err>", outcomeManual,
		"transparent TCP is not a REST grant",
		"crates/openshell-supervisor-network/src/proxy.rs:904-944"},
	{KindReloadRace, 0, "", "... policy changed ... | ... generation is stale ...", outcomeIgnored,
		"the policy was being replaced; the request would be decided again",
		"crates/openshell-supervisor-network/src/proxy.rs:3403-3428 (reject_stale_connect_policy)"},
	{KindUnknownDenial, 0, "", "any other Denied OCSF network or HTTP event", outcomeManual,
		"suggest does not know this denial: read it",
		"-"},
}

// kindInfo returns the table row of k.
func kindInfo(k Kind) KindInfo {
	for _, r := range Kinds {
		if r.Kind == k {
			return r
		}
	}
	return KindInfo{Kind: k, Outcome: outcomeManual}
}
