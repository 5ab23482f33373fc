package denial

import (
	"net/netip"
	"strconv"
	"strings"
)

// parseShorthand reads OcsfEvent::format_shorthand's NET and HTTP lines
// (crates/openshell-ocsf/src/format/shorthand.rs:193-307@v0.0.111):
//
//	NET:<ACTIVITY> [SEV] <ACTION> <binary>(<pid>) -> <host>:<port>[/<proto>] [policy:P engine:E] [reason:R]
//	HTTP:<METHOD> [SEV] <ACTION> [<binary>(<pid>) -> ]<METHOD> <URL> [policy:P engine:E] [k:v ... reason:R]
//
// The reason is raw text (cut at 256 bytes, "]" not escaped): it runs to
// the line's last "]". Other OCSF classes are LineOther.
func parseShorthand(body string) (Event, LineResult) {
	class, res := shorthandClass(body)
	if res != LineEvent {
		return Event{}, res
	}
	ev := Event{Class: class}
	head, rest, ok := cutShorthandHead(body)
	if !ok {
		return Event{}, LineUnparsed
	}
	action, rest, _ := strings.Cut(rest, " ")
	if ev.Action = shorthandActions[action]; ev.Action == "" {
		return ev, LineOther
	}
	detail, ok := readBrackets(&ev, rest)
	if !ok {
		return Event{}, LineUnparsed
	}
	if class == 4001 {
		return parseNetDetail(ev, detail)
	}
	ev.Method = strings.TrimPrefix(head, "HTTP:")
	return parseHTTPDetail(ev, detail)
}

// shorthandClass reads the OCSF class from the shorthand's "NET:" or
// "HTTP:" prefix (LineEvent). Another upper-case class prefix ("PROC:",
// "FINDING:", ...) and a base event, "EVENT [SEV] msg"
// (shorthand.rs:494-517@v0.0.111, :390@v0.0.83), are LineOther; anything
// else is LineUnparsed.
func shorthandClass(body string) (int, LineResult) {
	switch {
	case strings.HasPrefix(body, "NET:"):
		return 4001, LineEvent
	case strings.HasPrefix(body, "HTTP:"):
		return 4002, LineEvent
	case strings.HasPrefix(body, "EVENT ["):
		return 0, LineOther
	}
	if i := strings.IndexByte(body, ':'); i > 0 && isUpperWord(body[:i]) {
		return 0, LineOther
	}
	return 0, LineUnparsed
}

// cutShorthandHead cuts "<CLASS>:<ACTIVITY> [SEV] " off the shorthand and
// returns "<CLASS>:<ACTIVITY>" and the rest. A NET activity is an
// upper-case word; an HTTP "activity" is the request's method, which
// keeps its case when it is not one of the nine standard ones
// (HttpMethod::Other, crates/openshell-ocsf/src/enums/http_method.rs
// @v0.0.111; shorthand.rs:262-265,307): any word without a space.
func cutShorthandHead(body string) (head, rest string, ok bool) {
	head, rest, ok = strings.Cut(body, " ")
	if !ok || !validActivity(head) {
		return "", "", false
	}
	sev, rest, ok := strings.Cut(rest, " ")
	if !ok || !strings.HasPrefix(sev, "[") || !strings.HasSuffix(sev, "]") {
		return "", "", false
	}
	return head, rest, true
}

// validActivity checks the "<CLASS>:<ACTIVITY>" word.
func validActivity(head string) bool {
	if m, ok := strings.CutPrefix(head, "HTTP:"); ok {
		return m != ""
	}
	return isUpperWord(strings.TrimPrefix(head, "NET:"))
}

// shorthandActions maps the shorthand's action words to Event.Action.
var shorthandActions = map[string]string{"DENIED": "Denied", "ALLOWED": "Allowed"}

// readBrackets reads the brackets after the detail, the policy's and the
// context's, into ev's Policy, Engine, Reason and Truncated, and returns
// the detail; false when the line was cut.
func readBrackets(ev *Event, rest string) (string, bool) {
	// The detail ends at the first " [policy:" followed by "P engine:E]"
	// and either the end or " [": the reason and the unmapped fields come
	// after it. Binary paths may hold spaces, hosts and URLs may not.
	detail, policy, engine, ctx := cutPolicyBracket(rest)
	ev.Policy, ev.Engine = policy, engine
	if ev.Engine == "" {
		// No firewall rule (transparent TCP, shorthand.rs:227-257): the
		// reason follows the destination.
		var ok bool
		if detail, ctx, ok = cutReasonBracket(detail); !ok && ev.Action == "Denied" {
			// Every denial carries a rule or a reason: this line was cut.
			return "", false
		}
	}
	if !readContextReason(ev, ctx) {
		return "", false // cut mid-reason
	}
	return detail, true
}

// cutPolicyBracket finds the first " [policy:P engine:E]" (P and E free of
// spaces and "[", followed by the end or " [") and returns the text before
// it, P, E and the text after it. Without one, detail is s and the rest
// are empty.
func cutPolicyBracket(s string) (detail, policy, engine, ctx string) {
	for off := 0; ; {
		i := strings.Index(s[off:], " [policy:")
		if i < 0 {
			return s, "", "", ""
		}
		i += off
		if policy, engine, ctx, ok := readPolicyBracket(s[i+len(" [policy:"):]); ok {
			return s[:i], policy, engine, ctx
		}
		off = i + 1
	}
}

// readPolicyBracket reads the "P engine:E]" after a " [policy:" and
// returns P, E and the text after the "]"; false unless P and E are free
// of spaces and "[", E is not empty and the end or " [" follows.
func readPolicyBracket(after string) (policy, engine, ctx string, ok bool) {
	end := strings.IndexByte(after, ']')
	if end <= 0 {
		return "", "", "", false
	}
	policy, engine, ok = strings.Cut(after[:end], " engine:")
	ctx = after[end+1:]
	// A space or "[" in P or in E.
	if !ok || engine == "" || strings.ContainsAny(policy+engine, " [") || !endsOrBrackets(ctx) {
		return "", "", "", false
	}
	return policy, engine, ctx, true
}

// endsOrBrackets reports whether s, what follows a bracket, is the end of
// the line or another " [" bracket.
func endsOrBrackets(s string) bool {
	return s == "" || strings.HasPrefix(s, " [")
}

// cutReasonBracket splits detail at its first " [reason:"; false (and
// detail whole) when there is none.
func cutReasonBracket(detail string) (string, string, bool) {
	i := strings.Index(detail, " [reason:")
	if i < 0 {
		return detail, "", false
	}
	return detail[:i], detail[i:], true
}

// readContextReason sets ev's Reason and Truncated from the context
// brackets ctx (" [k:v ... reason:R]", or empty); false when the bracket
// was cut before its "]".
func readContextReason(ev *Event, ctx string) bool {
	if ctx == "" {
		return true
	}
	inner := strings.TrimPrefix(ctx, " [")
	if !strings.HasSuffix(inner, "]") {
		return false
	}
	inner = inner[:len(inner)-1]
	if r, ok := reasonField(inner); ok {
		ev.Reason = r
		ev.Truncated = strings.HasSuffix(r, "...") && len(r) > maxReasonLen
	}
	return true
}

// reasonField finds "reason:" in a context bracket: at its start (NET, and
// HTTP at v0.0.83, shorthand.rs:203-207@v0.0.83), or after the unmapped
// fields, whose whitespace is escaped (HTTP at v0.0.111,
// shorthand.rs:104-119,158-172@v0.0.111).
func reasonField(inner string) (string, bool) {
	if r, ok := strings.CutPrefix(inner, "reason:"); ok {
		return r, true
	}
	if i := strings.Index(inner, " reason:"); i >= 0 {
		return inner[i+len(" reason:"):], true
	}
	return "", false
}

// isUpperWord reports whether s is a non-empty word of upper-case
// letters, digits, "_" and "-".
func isUpperWord(s string) bool {
	return s != "" && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == ""
}

// parseNetDetail reads "<binary>(<pid>) -> <host>:<port>[/<proto>]".
func parseNetDetail(ev Event, detail string) (Event, LineResult) {
	dst, ok := cutActor(&ev, detail)
	if !ok {
		return Event{}, LineUnparsed
	}
	if dst == "" {
		return ev, LineEvent
	}
	if i := strings.LastIndexByte(dst, '/'); i > 0 && !strings.Contains(dst[i:], ":") {
		dst = dst[:i] // the bypass monitor's "/tcp"
	}
	host, port, ok := splitHostPort(dst)
	if !ok {
		return Event{}, LineUnparsed
	}
	ev.Host, ev.Port = host, port
	return ev, LineEvent
}

// parseHTTPDetail reads "[<binary>(<pid>) -> ]<METHOD> <URL>". An event
// without http_request prints the method UNKNOWN and an empty URL
// (shorthand.rs:262-265,276-280@v0.0.111, :183-186,197-201@v0.0.83):
// credential binding (proxy.rs:73-85@v0.0.111), request authority
// (l7/relay.rs:166-179,206-234@v0.0.111), an unsupported scheme
// (proxy.rs:4859-4869@v0.0.111). Such an event has no Method, Host, Port
// nor Path.
func parseHTTPDetail(ev Event, detail string) (Event, LineResult) {
	req, ok := cutActor(&ev, detail)
	if !ok {
		return Event{}, LineUnparsed
	}
	method, u, ok := strings.Cut(req, " ")
	if !ok || method != ev.Method || strings.Contains(u, " ") {
		return Event{}, LineUnparsed
	}
	if u == "" && method == "UNKNOWN" {
		ev.Method = ""
		return ev, LineEvent
	}
	if !readURL(&ev, u) {
		return Event{}, LineUnparsed
	}
	return ev, LineEvent
}

// cutActor reads the "<binary>(<pid>) -> " before the destination or the
// request, when there is one, into ev's Binary and PID and returns what
// follows it; false when the actor is garbled.
func cutActor(ev *Event, detail string) (string, bool) {
	i := strings.LastIndex(detail, " -> ")
	if i < 0 {
		return detail, true
	}
	bin, pid, ok := parseActor(detail[:i])
	if !ok {
		return "", false
	}
	ev.Binary, ev.PID = bin, pid
	return detail[i+len(" -> "):], true
}

// defaultPorts are the ports an http(s) URL implies.
var defaultPorts = map[string]int{"http": 80, "https": 443}

// readURL reads an http or https URL into ev's Host, Port and Path (query
// stripped, "/" when empty); false for any other URL.
func readURL(ev *Event, u string) bool {
	scheme, hostPath, ok := strings.Cut(u, "://")
	defaultPort, known := defaultPorts[scheme]
	if !ok || !known {
		return false
	}
	hp, path := hostPath, "/"
	if i := strings.IndexByte(hostPath, '/'); i >= 0 {
		hp, path = hostPath[:i], hostPath[i:]
	}
	// Url::to_display_string omits the port only for http:80 and
	// https:443 (crates/openshell-ocsf/src/objects/http.rs:65-76 at both
	// tags) and prints the hostname as it is, an IPv6 address without
	// brackets.
	host, port, ok := splitHostPort(hp)
	if !ok {
		host, port = asciiLower(hp), defaultPort
	}
	ev.Host, ev.Port, ev.Path = host, port, stripQuery(path)
	return true
}

// parseActor reads "<name>(<pid>)"; name is the executable path, pid a
// number or "-" (0).
func parseActor(s string) (string, int64, bool) {
	i := strings.LastIndexByte(s, '(')
	if i <= 0 || !strings.HasSuffix(s, ")") {
		return "", 0, false
	}
	var pid int64
	if p := s[i+1 : len(s)-1]; p != "" && p != "-" {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return "", 0, false
		}
		pid = n
	}
	return s[:i], pid, true
}

// splitHostPort splits "host:port", "[v6]:port" and "v6:port": OpenShell
// prints the CONNECT target without brackets (parse_target strips them,
// proxy.rs:6100-6124, logged at :1855-1870@v0.0.111) and the bypass
// monitor an IP's display form (bypass_monitor/mod.rs:94-107@v0.0.111).
// The host is lowercased in ASCII only.
func splitHostPort(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return "", 0, false
	}
	port, ok := parsePort(s[i+1:])
	if !ok {
		return "", 0, false
	}
	host, ok := unbracket(s[:i])
	if !ok {
		return "", 0, false
	}
	return asciiLower(host), port, true
}

// parsePort reads a decimal TCP port, 1 to 65535.
func parsePort(s string) (int, bool) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	port, err := strconv.Atoi(s)
	return port, err == nil && port > 0 && port <= 65535
}

// unbracket returns the address inside "[v6]"; a host outside brackets
// may hold a ':' only when it is an IPv6 address.
func unbracket(host string) (string, bool) {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		return host[1 : len(host)-1], true
	}
	if !strings.Contains(host, ":") {
		return host, true
	}
	a, err := netip.ParseAddr(host)
	return host, err == nil && a.Is6()
}
