package denial

import (
	"slices"
	"strings"
)

// IsAudit reports an enforcement: audit "would deny": an Allowed L7 event
// whose message is "L7_REQUEST audit ..." or "FORWARD_L7 audit ..."
// (crates/openshell-supervisor-network/src/l7/relay.rs:1375-1397@v0.0.111,
// proxy.rs:5462-5472@v0.0.111). The shorthand shows it as ALLOWED without a
// reason (shorthand.rs:282), so only JSONL carries it.
func IsAudit(ev Event) bool {
	if ev.Class != 4002 || ev.Action != "Allowed" {
		return false
	}
	verb, _ := l7Verdict(ev.Reason)
	return verb == "audit"
}

// l7Prefixes are the leading keywords of the messages of the REST L7
// decisions: L7_REQUEST (l7/relay.rs:1398-1413@v0.0.111,
// :885-900@v0.0.83), FORWARD_L7 (proxy.rs:5462-5503@v0.0.111),
// L7_REQUEST_TRANSFORMED (l7/relay.rs:2509-2524@v0.0.111), and of the
// GraphQL and WebSocket ones, which name their engine too.
var l7Prefixes = map[string]bool{
	"L7_REQUEST": true, "FORWARD_L7": true, "L7_REQUEST_TRANSFORMED": true,
	"FORWARD_GRAPHQL_L7": true, "GRAPHQL_L7_REQUEST": true, "WEBSOCKET_L7_REQUEST": true,
}

// l7Verdict reads "<PREFIX> <decision> M H:P/path reason=R", the message of
// every L7 decision, into the decision and R; "" when msg is not one.
func l7Verdict(msg string) (string, string) {
	prefix, rest, ok := strings.Cut(msg, " ")
	if !ok || !l7Prefixes[prefix] {
		return "", ""
	}
	verdict, rest, _ := strings.Cut(rest, " ")
	_, reason, _ := strings.Cut(rest, " reason=")
	return verdict, reason
}

// Classify maps an event to its row of the kind table; KindNone for an
// event that denies nothing. audit says whether audit "would deny" verdicts
// count (as KindAudit). It reads only the event, so the three log formats
// of one event classify alike, and it decides on the event's structure
// (class, engine, actor, the leading keyword of its reason), never on the
// end of a reason: OpenShell cuts a reason at 256 bytes (shorthand.rs:67,
// 121-128@v0.0.111), which a long host or path pushes its end past.
func Classify(ev Event, audit bool) Kind {
	if ev.Action != "Denied" {
		return allowedKind(ev, audit)
	}
	r := ev.Reason
	if isReloadRace(r) {
		return KindReloadRace
	}
	if k, ok := engineKinds[ev.Engine]; ok {
		return k
	}
	if ev.Policy == "bypass-detect" || strings.HasPrefix(r, "BYPASS_DETECT ") {
		return KindBypass
	}
	// status_detail transparent_tcp_*, else the message "Transparent TCP
	// denied ..." (proxy.rs:884-948@v0.0.111).
	if hasAnyPrefix(r, "transparent_tcp", "Transparent TCP denied") {
		return KindTransparentTCP
	}
	if ev.Class == 4001 {
		return networkKind(ev)
	}
	return httpKind(ev.Engine, r)
}

// reloadPrefixes are the messages of a tunnel closed because the policy
// was replaced (no status_detail, so the shorthand's reason is the
// message): "L7 tunnel closed after policy reload [host:H port:P
// captured_generation:N current_generation:M]" (l7/relay.rs:1644-1659
// @v0.0.111, :994-1015@v0.0.83) and "L7 tunnel closed before inspection
// because policy changed: ..." (proxy.rs:3388-3400@v0.0.111, from
// reject_stale_connect_policy :3403-3428).
var reloadPrefixes = []string{
	"L7 tunnel closed after policy reload",
	"L7 tunnel closed before inspection because policy changed",
}

// isReloadRace reports the reload race by its leading words; it also
// takes "CONNECT H:P not permitted because policy changed", the text of
// the 403 reject_stale_connect_policy answers (proxy.rs:3419-3425
// @v0.0.111), which OpenShell does not log but suggest's fixture
// noise.log quotes as a reason.
func isReloadRace(r string) bool {
	return hasAnyPrefix(r, reloadPrefixes...) ||
		strings.HasPrefix(r, "CONNECT ") && strings.HasSuffix(r, " not permitted because policy changed")
}

// allowedKind is the kind of an event that OpenShell let through:
// KindAudit for an audit "would deny" when audit verdicts count, else
// KindNone.
func allowedKind(ev Event, audit bool) Kind {
	if audit && IsAudit(ev) {
		return KindAudit
	}
	return KindNone
}

// hasAnyPrefix reports whether s begins with any of prefixes.
func hasAnyPrefix(s string, prefixes ...string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}

// engineKinds are the kinds of the denials that their engine alone
// decides, whatever the class and the reason; the engines whose denials
// the structure tells apart (opa, l7) and unknown ones are not in it.
// l7-websocket denials are class 4001 (l7/websocket.rs:1350-1361,
// 2077-2089,2104-2116,2146-2156@v0.0.111; :967,1014,1095@v0.0.83); a
// middleware's are class 4002 (l7/middleware.rs:769-811@v0.0.111).
var engineKinds = map[string]Kind{
	"ssrf":         KindSSRF,
	"credentials":  KindCredentials,
	"tls":          KindTLS,
	"nftables":     KindBypass,
	"l7-graphql":   KindL7Other,
	"l7-jsonrpc":   KindL7Other,
	"l7-mcp":       KindL7Other,
	"l7-websocket": KindL7Other,
	"middleware":   KindL7Other,
}

// networkKind classifies a Network Activity (4001) denial by its engine,
// its actor and its reason. Engine l7 on class 4001 is emitted three
// ways: CONNECT_L7 blocked unsupported tunnel protocol, with the actor
// (proxy.rs:2314-2331@v0.0.111); "HTTP request rejected before policy
// evaluation for H:P" with the parse error as status_detail and no actor
// (emit_parse_rejection, l7/relay.rs:375-394@v0.0.111, :121-134@v0.0.83),
// which no row of the table describes (unknown: the request never reached
// the policy, there is nothing to grant); and the reload race, above.
func networkKind(ev Event) Kind {
	switch ev.Engine {
	case "l7":
		if ev.Binary != "" {
			return KindTunnelProtocol
		}
		return KindUnknown
	case "opa":
		return opaKind(ev.Reason, KindL4NoEndpoint)
	}
	return KindUnknown
}

// httpKind classifies an HTTP Activity (4002) denial by its engine and
// reason. Engines credential-binding and request-authority (no
// http_request: proxy.rs:73-85, l7/relay.rs:166-179,206-234@v0.0.111) and
// an event without a rule (FORWARD rejected: unsupported scheme,
// proxy.rs:4859-4869@v0.0.111) are unknown.
func httpKind(engine, r string) Kind {
	switch engine {
	case "opa":
		// FORWARD denied M H:P/path: the Rego reasons of a CONNECT, or
		// the message when no status_detail came with it
		// (proxy.rs:1471-1487@v0.0.111, :3467-3485@v0.0.83).
		if strings.HasPrefix(r, "FORWARD denied ") {
			return KindForward
		}
		return opaKind(r, KindForward)
	case "l7":
		return l7Kind(r)
	}
	return KindUnknown
}

// h2cDetail is the status_detail of a refused h2c upgrade
// (UNSUPPORTED_H2C_UPGRADE_DETAIL, l7/rest.rs:64-65@v0.0.111,
// :43-44@v0.0.83; emitted at proxy.rs:5240-5261@v0.0.111,
// :3724-3745@v0.0.83): no row of the table, so unknown.
const h2cDetail = "HTTP/2 cleartext upgrade (h2c) is not supported"

// l7Kind classifies an HTTP denial of the L7 engine by its reason: an L7
// decision's message ("L7_REQUEST deny M H:P/path reason=R"), or the
// status_detail of a forward request refused before the decision.
func l7Kind(r string) Kind {
	verdict, why := l7Verdict(r)
	switch {
	case r == "", strings.HasPrefix(r, h2cDetail):
		// No reason: not a line OpenShell writes for a denial.
		return KindUnknown
	case verdict == "":
		// status_detail of a non-canonical request target
		// (proxy.rs:1423-1456@v0.0.111).
		return KindNonCanonical
	case verdict != "deny":
		return KindUnknown
	}
	return l7DenyKind(why)
}

// l7DenyKind reads R of an L7 deny, the Rego request_deny_reason
// (sandbox-policy.rego:440-472@v0.0.111): "GraphQL ..." and "JSON-RPC ..."
// are l7-other, "M /path blocked by deny rule" a deny rule, and every
// other one "M /path not permitted by policy". R follows the method and
// the path, so a long path pushes its end past the 256-byte cut: a cut R
// that does not show "blocked by deny rule" is read as the common case,
// and `policy suggest` checks any grant it derives with the decision
// engine, which a deny rule still refuses.
func l7DenyKind(why string) Kind {
	switch {
	case hasAnyPrefix(why, "GraphQL", "JSON-RPC"):
		return KindL7Other
	case strings.Contains(why, " blocked by deny rule"):
		return KindL7DenyRule
	}
	return KindL7Deny
}

// opaKind reads the Rego deny reasons by their leading words
// (crates/openshell-supervisor-network/data/sandbox-policy.rego:37-69
// @v0.0.111, the same lines @v0.0.83); noEndpoint is the kind of
// "endpoint H:P is not allowed by any policy" (or the docs' older
// "no matching policy", docs/observability/logging.mdx@v0.0.111).
func opaKind(r string, noEndpoint Kind) Kind {
	switch {
	case strings.HasPrefix(r, "binary '"):
		return KindBinary
	case strings.HasPrefix(r, "network connections not allowed by policy"):
		if noEndpoint == KindForward {
			return KindForward
		}
		return KindNoNetwork
	case strings.HasPrefix(r, "endpoint "), r == "no matching policy":
		return noEndpoint
	}
	return KindUnknown
}

// BinaryReason reads the first miss of the binary reason: "binary 'B' not
// allowed in policy 'N' (ancestors: [A -> ...], cmdline: [...]). SYMLINK
// HINT: ..." (sandbox-policy.rego:58@v0.0.111). The binary comes first, so
// the 256-byte cut does not reach it; ancestors are read when whole.
func BinaryReason(r string) (binary, policy string, ancestors []string) {
	rest, ok := strings.CutPrefix(r, "binary '")
	if !ok {
		return "", "", nil
	}
	binary, rest, ok = strings.Cut(rest, "' not allowed in policy '")
	if !ok {
		return "", "", nil
	}
	policy, rest, ok = strings.Cut(rest, "' (ancestors: [")
	if !ok {
		policy, _, _ = strings.Cut(policy, "'")
		return binary, policy, nil
	}
	if list, _, ok := strings.Cut(rest, "], cmdline: ["); ok && list != "" {
		// In the order OpenShell gives them: the decision engine matches
		// a policy binary against any of them.
		ancestors = strings.Split(list, " -> ")
	}
	return binary, policy, ancestors
}
