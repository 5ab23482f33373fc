package denial

// Kind names one kind of OpenShell denial. The values are stable: they are
// the keys of a run's result.json "denials" and the "kind" of
// `policy suggest -o json` (fullsend.policy-suggest/v1).
type Kind string

// The denial kinds. Kinds describes each, with the OpenShell source that
// emits it.
const (
	KindL4NoEndpoint   Kind = "l4-no-endpoint"
	KindBinary         Kind = "binary-not-allowed"
	KindNoNetwork      Kind = "no-network"
	KindSSRF           Kind = "ssrf"
	KindForward        Kind = "forward-deny"
	KindL7Deny         Kind = "l7-deny"
	KindL7DenyRule     Kind = "l7-deny-rule"
	KindAudit          Kind = "l7-audit"
	KindL7Other        Kind = "l7-other"
	KindNonCanonical   Kind = "non-canonical"
	KindTunnelProtocol Kind = "tunnel-protocol"
	KindCredentials    Kind = "uninspected-credentials"
	KindTLS            Kind = "tls-unavailable"
	KindBypass         Kind = "bypass"
	KindTransparentTCP Kind = "transparent-tcp"
	KindReloadRace     Kind = "reload-race"
	KindUnknown        Kind = "unknown"
	// KindNone is Classify's answer for an event that denies nothing.
	KindNone Kind = ""
)

// Denied reports whether OpenShell refused the request: every kind but
// KindAudit (an enforcement: audit endpoint let the request through and
// logged what it would have denied) and KindNone.
func (k Kind) Denied() bool {
	return k != KindNone && k != KindAudit
}

// KindInfo is one row of the denial-kind table: how OpenShell reports the
// denial and where its source emits it.
type KindInfo struct {
	Kind Kind `json:"kind"`
	// Class is the OCSF class_uid: 4001 Network Activity, 4002 HTTP
	// Activity; 0 for any.
	Class int `json:"class"`
	// Engine is the firewall_rule.type OpenShell sets.
	Engine string `json:"engine"`
	// Message is the OCSF message's shape (status_detail or message is the
	// shorthand's [reason:...]).
	Message string `json:"message"`
	// Source is where OpenShell v0.0.111 emits it, relative to
	// NVIDIA/OpenShell ("-" for none).
	Source string `json:"source"`
}

// kinds is the denial-kind table. Every row was read in OpenShell's source
// at v0.0.111 (paths relative to NVIDIA/OpenShell); v0.0.83 emits the same
// messages from the same files unless a row says otherwise.
// docs/policy-suggest.md and docs/runner.md print the same kinds
// (TestDocsKindTables).
var kinds = [...]KindInfo{
	{KindL7Deny, 4002, "l7", "L7_REQUEST deny M H:P/path reason=M /path not permitted by policy (FORWARD_L7 deny ... on the forward path, L7_REQUEST_TRANSFORMED deny ... after a request transform)",
		"crates/openshell-supervisor-network/src/l7/relay.rs:1375-1415,2509-2524; crates/openshell-supervisor-network/src/proxy.rs:5456-5504; crates/openshell-supervisor-network/data/sandbox-policy.rego:465-472"},
	{KindAudit, 4002, "l7", "L7_REQUEST audit M H:P/path reason=...: action Allowed, severity Informational, visible in OCSF JSONL only",
		"crates/openshell-supervisor-network/src/l7/relay.rs:1375-1397"},
	{KindForward, 4002, "opa", "FORWARD denied M H:P/path (plain http:// through HTTP_PROXY)",
		"crates/openshell-supervisor-network/src/proxy.rs:1459-1488,4946-4970"},
	{KindL4NoEndpoint, 4001, "opa", "CONNECT denied H:P; reason `endpoint H:P is not allowed by any policy` (`no matching policy` in older docs)",
		"crates/openshell-supervisor-network/src/proxy.rs:1854-1871; crates/openshell-supervisor-network/data/sandbox-policy.rego:37-44"},
	{KindNoNetwork, 4001, "opa", "CONNECT denied H:P; reason `network connections not allowed by policy`",
		"crates/openshell-supervisor-network/data/sandbox-policy.rego:64-69"},
	{KindBinary, 4001, "opa", "CONNECT denied H:P; reason `binary 'B' not allowed in policy 'N' (ancestors: [...], cmdline: [...]). SYMLINK HINT: ...`",
		"crates/openshell-supervisor-network/data/sandbox-policy.rego:46-62"},
	{KindSSRF, 0, "ssrf", "CONNECT blocked: internal address H:P | CONNECT blocked: <detail> for H:P | FORWARD blocked: <detail> for H:P; reason `H resolves to always-blocked address IP`, `H resolves to IP which is not in allowed_ips`, `H resolves to internal address IP`, `port N is a blocked control-plane port`, `DNS resolution failed for H:P`",
		"crates/openshell-supervisor-network/src/proxy.rs:1490-1571,3869-3955"},
	{KindL7DenyRule, 4002, "l7", "L7_REQUEST deny ... reason=M /path blocked by deny rule",
		"crates/openshell-supervisor-network/data/sandbox-policy.rego:457-463"},
	{KindL7Other, 0, "l7-graphql|l7-jsonrpc|l7-mcp|l7-websocket|middleware", "GraphQL, JSON-RPC and MCP denials (GRAPHQL_L7_REQUEST, ...; 4002), WebSocket denials (WEBSOCKET_L7_REQUEST, ...; 4001), a request middleware's denial (MIDDLEWARE N I decision=Deny, status_detail its reason; 4002)",
		"crates/openshell-supervisor-network/src/l7/relay.rs:2064; crates/openshell-supervisor-network/src/l7/websocket.rs:2077-2089; crates/openshell-supervisor-network/src/l7/middleware.rs:769-811; crates/openshell-supervisor-network/data/sandbox-policy.rego:420-455"},
	{KindNonCanonical, 4002, "l7", "FORWARD_L7 denied non-canonical request-target for M H:P/path",
		"crates/openshell-supervisor-network/src/proxy.rs:1423-1456"},
	{KindTunnelProtocol, 4001, "l7", "CONNECT_L7 blocked unsupported tunnel protocol for H:P (the one 4001 l7 denial with an actor)",
		"crates/openshell-supervisor-network/src/proxy.rs:2314-2342"},
	{KindCredentials, 4001, "credentials", "CONNECT refused for H:P: uninspected credential traffic",
		"crates/openshell-supervisor-network/src/proxy.rs:2024-2066"},
	{KindTLS, 4001, "tls", "CONNECT refused for H:P: <TLS termination unavailable>",
		"crates/openshell-supervisor-network/src/proxy.rs:1989-2021,2241-2269"},
	{KindBypass, 4001, "nftables", "BYPASS_DETECT ip:port proto=tcp binary=B action=reject reason=...",
		"crates/openshell-supervisor-process/src/bypass_monitor/mod.rs:80-107"},
	{KindTransparentTCP, 4001, "opa|", "Transparent TCP denied H:P | Transparent TCP denied: <err>; reason `transparent_tcp_*`",
		"crates/openshell-supervisor-network/src/proxy.rs:884-948"},
	{KindReloadRace, 4001, "l7|", "L7 tunnel closed after policy reload [host:H port:P captured_generation:N current_generation:M] | L7 tunnel closed before inspection because policy changed: ...",
		"crates/openshell-supervisor-network/src/l7/relay.rs:1644-1659; crates/openshell-supervisor-network/src/proxy.rs:3388-3428"},
	{KindUnknown, 0, "", "any other Denied OCSF network or HTTP event: HTTP request rejected before policy evaluation (4001 l7 without an actor), an h2c upgrade, credential binding, request authority, an unsupported scheme",
		"-"},
}

// Kinds returns the denial-kind table, one row per kind, in the order the
// docs print it.
func Kinds() []KindInfo {
	return append([]KindInfo(nil), kinds[:]...)
}

// Lookup returns the table row of k.
func Lookup(k Kind) (KindInfo, bool) {
	for _, r := range kinds {
		if r.Kind == k {
			return r, true
		}
	}
	return KindInfo{}, false
}
