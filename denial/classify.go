package denial

import (
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

// l7Verdict reads "<PREFIX> <decision> M H:P/path reason=R", the message of
// every L7 decision (relay.rs:968,1410, proxy.rs:5471@v0.0.111;
// relay.rs:557,899@v0.0.83), into the decision and R.
func l7Verdict(msg string) (string, string) {
	prefix, rest, ok := strings.Cut(msg, " ")
	if !ok {
		return "", ""
	}
	switch prefix {
	case "L7_REQUEST", "FORWARD_L7", "FORWARD_GRAPHQL_L7", "GRAPHQL_L7_REQUEST", "WEBSOCKET_L7_REQUEST":
	default:
		return "", ""
	}
	verdict, rest, _ := strings.Cut(rest, " ")
	_, reason, _ := strings.Cut(rest, " reason=")
	return verdict, reason
}

// Classify maps an event to its row of the kind table; KindNone for an
// event that denies nothing. audit says whether audit "would deny" verdicts
// count (as KindAudit). It reads only the event, so the three log formats
// of one event classify alike.
func Classify(ev Event, audit bool) Kind {
	r := ev.Reason
	if ev.Action != "Denied" {
		if audit && IsAudit(ev) {
			return KindAudit
		}
		return KindNone
	}
	// A request decided while the policy was being replaced
	// (reject_stale_connect_policy, proxy.rs:3403-3428@v0.0.111).
	if strings.Contains(r, "policy changed") || strings.Contains(r, "generation is stale") {
		return KindReloadRace
	}
	if k, ok := engineKind(ev.Engine); ok {
		return k
	}
	if ev.Policy == "bypass-detect" || strings.HasPrefix(r, "BYPASS_DETECT ") {
		return KindBypass
	}
	// status_detail transparent_tcp_*, else the message "Transparent TCP
	// denied ..." (proxy.rs:884-948@v0.0.111).
	if strings.HasPrefix(r, "transparent_tcp") || strings.HasPrefix(r, "Transparent TCP denied") {
		return KindTransparentTCP
	}
	if ev.Class == 4001 {
		return networkKind(ev.Engine, r)
	}
	return httpKind(ev.Engine, r)
}

// engineKind is the kind of a denial that its engine alone decides,
// whatever the class and the reason; false for the engines whose denials
// the reason tells apart (opa, l7) and for unknown ones.
func engineKind(engine string) (Kind, bool) {
	switch engine {
	case "ssrf":
		return KindSSRF, true
	case "credentials":
		return KindCredentials, true
	case "tls":
		return KindTLS, true
	case "nftables":
		return KindBypass, true
	case "l7-graphql", "l7-jsonrpc", "l7-mcp":
		return KindL7Other, true
	}
	return KindNone, false
}

// networkKind classifies a Network Activity (4001) denial by its engine
// and reason.
func networkKind(engine, r string) Kind {
	switch engine {
	case "l7":
		return KindTunnelProtocol
	case "opa":
		return opaKind(r, KindL4NoEndpoint)
	}
	return KindUnknown
}

// httpKind classifies an HTTP Activity (4002) denial by its engine and
// reason.
func httpKind(engine, r string) Kind {
	switch engine {
	case "opa":
		// FORWARD denied M H:P/path: the Rego reasons of a CONNECT, or
		// the message when no status_detail came with it.
		if strings.HasPrefix(r, "FORWARD denied ") {
			return KindForward
		}
		return opaKind(r, KindForward)
	case "l7":
		return l7Kind(r)
	}
	return KindUnknown
}

// l7Kind classifies an HTTP denial of the L7 engine by its reason.
func l7Kind(r string) Kind {
	verdict, why := l7Verdict(r)
	switch {
	case r == "":
		// No reason at all: not a line OpenShell writes for a denial
		// (the message is the fallback, shorthand.rs:130-135).
		return KindUnknown
	case verdict == "":
		// status_detail of a non-canonical request target
		// (proxy.rs:1423-1456@v0.0.111).
		return KindNonCanonical
	case strings.HasSuffix(why, " blocked by deny rule"):
		return KindL7DenyRule
	case strings.HasSuffix(why, " not permitted by policy") && !strings.HasPrefix(why, "GraphQL"):
		return KindL7Deny
	}
	return KindL7Other
}

// opaKind reads the Rego deny reasons
// (crates/openshell-supervisor-network/data/sandbox-policy.rego:37-69
// @v0.0.111, the same lines @v0.0.83); noEndpoint is the kind of
// "endpoint H:P is not allowed by any policy" (or the docs' older
// "no matching policy", docs/observability/logging.mdx@v0.0.111).
func opaKind(r string, noEndpoint Kind) Kind {
	switch {
	case strings.HasPrefix(r, "binary '") && strings.Contains(r, "' not allowed in policy '"):
		return KindBinary
	case strings.HasPrefix(r, "network connections not allowed by policy"):
		if noEndpoint == KindForward {
			return KindForward
		}
		return KindNoNetwork
	case strings.HasSuffix(r, " is not allowed by any policy") && strings.HasPrefix(r, "endpoint "),
		r == "no matching policy":
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
