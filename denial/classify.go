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
	if ev.Action != "Denied" {
		return allowedKind(ev, audit)
	}
	r := ev.Reason
	// A request decided while the policy was being replaced
	// (reject_stale_connect_policy, proxy.rs:3403-3428@v0.0.111).
	if containsAny(r, "policy changed", "generation is stale") {
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
		return networkKind(ev.Engine, r)
	}
	return httpKind(ev.Engine, r)
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

// containsAny reports whether s contains any of subs.
func containsAny(s string, subs ...string) bool {
	return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(s, sub) })
}

// hasAnyPrefix reports whether s begins with any of prefixes.
func hasAnyPrefix(s string, prefixes ...string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
}

// engineKinds are the kinds of the denials that their engine alone
// decides, whatever the class and the reason; the engines whose denials
// the reason tells apart (opa, l7) and unknown ones are not in it.
var engineKinds = map[string]Kind{
	"ssrf":        KindSSRF,
	"credentials": KindCredentials,
	"tls":         KindTLS,
	"nftables":    KindBypass,
	"l7-graphql":  KindL7Other,
	"l7-jsonrpc":  KindL7Other,
	"l7-mcp":      KindL7Other,
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
