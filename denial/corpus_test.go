package denial

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// corpusCase is one OpenShell event of the regression corpus, with the
// kind and the fields every format must read from it.
type corpusCase struct {
	name string
	ev   ocsf
	want Kind
	// textNone: the text formats show no denial (an audit shows as
	// ALLOWED without its reason in the shorthand, shorthand.rs:282-307).
	textNone bool
}

const t0 = 1777600000000 // 2026-05-01T01:46:40Z

// connectDenied is proxy.rs:1855-1870@v0.0.111 (:706-721@v0.0.83).
func connectDenied(bin string, pid int64, host string, port int, detail string) ocsf {
	return ocsf{Class: 4001, Activity: "Open", Sev: "MED", Action: "Denied", HasActor: true, Binary: bin, PID: pid,
		Host: host, Port: port, Policy: "-", Engine: "opa", Message: "CONNECT denied " + host + ":" + itoa(port), Detail: detail}
}

func itoa(n int) string { return strconv.Itoa(n) }

// l7Request is an L7 decision inside a tunnel: no actor
// (l7/relay.rs:1398-1413@v0.0.111).
func l7Request(prefix, decision, method, host string, port int, path, engine, why string) ocsf {
	action, sev := "Denied", "MED"
	if decision != "deny" {
		action, sev = "Allowed", "INFO"
	}
	return ocsf{Class: 4002, Activity: "Other", Sev: sev, Action: action, Host: host, Port: port, Method: method, Path: path,
		Policy: "api", Engine: engine,
		Message: prefix + " " + decision + " " + method + " " + host + ":" + itoa(port) + path + " reason=" + why}
}

func corpus() []corpusCase {
	longPath := "/v1/" + strings.Repeat("segment-", 18)
	hugePath := "/blob/" + strings.Repeat("a", 8<<10)
	longHost := strings.Repeat("a", 62) + "." + strings.Repeat("b", 62) + "." + strings.Repeat("c", 62) + "." + strings.Repeat("d", 57) + ".example"
	return []corpusCase{
		{"IPv6 CONNECT target without brackets (proxy.rs:1855-1870, parse_target :6100-6124@v0.0.111)",
			connectDenied("/usr/lib/git-core/git-remote-https", 77440, "2606:4700:4700::1111", 443,
				"endpoint 2606:4700:4700::1111:443 is not allowed by any policy"), KindL4NoEndpoint, false},
		{"IPv6 bypass from an ip endpoint with /proto (bypass_monitor/mod.rs:94-107@v0.0.111)",
			ocsf{Class: 4001, Activity: "Refuse", Sev: "MED", Action: "Denied", HasActor: true, Binary: "/usr/bin/nc", PID: 5,
				Host: "2001:db8::5", IP: true, Port: 443, Proto: "tcp", Policy: "bypass-detect", Engine: "nftables",
				Message: "BYPASS_DETECT 2001:db8::5:443 proto=tcp binary=/usr/bin/nc action=reject reason=direct connection bypassed HTTP CONNECT proxy"},
			KindBypass, false},
		{"IPv4 bypass", ocsf{Class: 4001, Activity: "Refuse", Sev: "MED", Action: "Denied", HasActor: true, Binary: "/usr/bin/nc", PID: 5,
			Host: "10.0.0.9", IP: true, Port: 22, Proto: "tcp", Policy: "bypass-detect", Engine: "nftables",
			Message: "BYPASS_DETECT 10.0.0.9:22 proto=tcp binary=/usr/bin/nc action=reject reason=direct connection bypassed HTTP CONNECT proxy"},
			KindBypass, false},
		{"reload race: L7 tunnel closed after policy reload (l7/relay.rs:1644-1659@v0.0.111)",
			ocsf{Class: 4001, Activity: "Open", Sev: "MED", Action: "Denied", Host: "objects.githubusercontent.com", Port: 443, Policy: "github", Engine: "l7",
				Message: "L7 tunnel closed after policy reload [host:objects.githubusercontent.com port:443 captured_generation:3 current_generation:4]"},
			KindReloadRace, false},
		{"reload race before inspection, no rule (proxy.rs:3388-3400@v0.0.111)",
			ocsf{Class: 4001, Activity: "Open", Sev: "MED", Action: "Denied", Host: "api.github.com", Port: 443,
				Message: "L7 tunnel closed before inspection because policy changed: policy changed while CONNECT was dialing upstream [captured_generation:1 current_generation:2]"},
			KindReloadRace, false},
		{"HTTP request rejected before policy evaluation (l7/relay.rs:375-394@v0.0.111)",
			ocsf{Class: 4001, Activity: "Open", Sev: "MED", Action: "Denied", Host: "example.com", Port: 443, Policy: "github", Engine: "l7",
				Message: "HTTP request rejected before policy evaluation for example.com:443", Detail: "malformed request line"},
			KindUnknown, false},
		{"tunnel protocol, with the actor (proxy.rs:2314-2331@v0.0.111)",
			ocsf{Class: 4001, Activity: "Open", Sev: "MED", Action: "Denied", HasActor: true, Binary: "/usr/bin/curl", PID: 3, Host: "h.example", Port: 443,
				Policy: "p", Engine: "l7", Message: "CONNECT_L7 blocked unsupported tunnel protocol for h.example:443", Detail: "tunnel protocol is not HTTP"},
			KindTunnelProtocol, false},
		{"WebSocket denial, class 4001 engine l7-websocket (l7/websocket.rs:2077-2089@v0.0.111)",
			ocsf{Class: 4001, Activity: "Other", Sev: "MED", Action: "Denied", Host: "xn--bcher-kva.example", Port: 443, Policy: "chat", Engine: "l7-websocket",
				Message: "WEBSOCKET_L7_REQUEST deny WS_TEXT xn--bcher-kva.example:443/socket type=subscribe reason=message not permitted by policy"},
			KindL7Other, false},
		{"middleware denial (l7/middleware.rs:769-811@v0.0.111)",
			ocsf{Class: 4002, Activity: "Other", Sev: "MED", Action: "Denied", Host: "api.example.com", Port: 443, Method: "POST", Path: "/v1/chat",
				Policy: "model_api", Engine: "middleware", Unmapped: [][2]string{{"failed", "false"}, {"transformed", "false"}},
				Message: "MIDDLEWARE guard wasm decision=Deny", Detail: "prompt rejected by guard"},
			KindL7Other, false},
		{"L7 deny with a 150-byte path, reason cut (relay.rs:1398-1413, shorthand.rs:121-128@v0.0.111)",
			l7Request("L7_REQUEST", "deny", "POST", "api.example.com", 443, longPath, "l7", "POST "+longPath+" not permitted by policy"),
			KindL7Deny, false},
		{"L7 deny with an 8 KiB path",
			l7Request("L7_REQUEST", "deny", "PUT", "api.example.com", 443, hugePath, "l7", "PUT "+hugePath+" not permitted by policy"),
			KindL7Deny, false},
		{"L7 deny rule", l7Request("L7_REQUEST", "deny", "DELETE", "api.example.com", 443, "/x", "l7", "DELETE /x blocked by deny rule"),
			KindL7DenyRule, false},
		{"L7_REQUEST_TRANSFORMED deny (l7/relay.rs:2509-2524@v0.0.111)",
			l7Request("L7_REQUEST_TRANSFORMED", "deny", "POST", "example.com", 443, "/v1/messages", "l7", "POST /v1/messages not permitted by policy"),
			KindL7Deny, false},
		{"GraphQL denial", l7Request("GRAPHQL_L7_REQUEST", "deny", "POST", "api.github.com", 443, "/graphql", "l7-graphql", "GraphQL operation not permitted by policy"),
			KindL7Other, false},
		{"audit would-deny (relay.rs:1375-1397@v0.0.111)",
			l7Request("L7_REQUEST", "audit", "POST", "api.example.com", 443, "/x", "l7", "POST /x not permitted by policy"),
			KindAudit, true},
		{"FORWARD_L7 deny with the actor (proxy.rs:5486-5503@v0.0.111)",
			func() ocsf {
				e := l7Request("FORWARD_L7", "deny", "GET", "h.example", 8080, "/api", "l7", "GET /api not permitted by policy")
				e.HasActor, e.Binary, e.PID = true, "/usr/bin/curl", 12
				return e
			}(), KindL7Deny, false},
		{"h2c upgrade refused (proxy.rs:5240-5261@v0.0.111)",
			ocsf{Class: 4002, Activity: "Other", Sev: "MED", Action: "Denied", HasActor: true, Binary: "/usr/bin/curl", PID: 9, Host: "h.example", Port: 80,
				Method: "GET", Path: "/", Policy: "web", Engine: "l7", Message: "FORWARD_L7 denied unsupported h2c upgrade for GET h.example:80/",
				Detail: "HTTP/2 cleartext upgrade (h2c) is not supported for L7-inspected endpoints"},
			KindUnknown, false},
		{"non-canonical request target (proxy.rs:1423-1456@v0.0.111)",
			ocsf{Class: 4002, Activity: "Other", Sev: "MED", Action: "Denied", HasActor: true, Binary: "/usr/bin/curl", PID: 9, Host: "h.example", Port: 80,
				Method: "GET", Path: "/a%2Fb", Policy: "web", Engine: "l7", Message: "FORWARD_L7 denied non-canonical request-target for GET h.example:80/a%2Fb",
				Detail: "request-target contains an encoded '/' (%2F) which is not allowed on this endpoint"},
			KindNonCanonical, false},
		{"credential binding, no http_request (proxy.rs:73-85@v0.0.111)",
			ocsf{Class: 4002, Activity: "Fail", Sev: "HIGH", Action: "Denied", Host: "api.github.com", Port: 443, Policy: "github", Engine: "credential-binding",
				Message: "Credential use denied: credential is not authorized for api.github.com:443", Detail: "credential_endpoint_mismatch"},
			KindUnknown, false},
		{"unsupported scheme, no rule, no http_request (proxy.rs:4859-4869@v0.0.111)",
			ocsf{Class: 4002, Activity: "Refuse", Sev: "INFO", Action: "Denied", Host: "ftp.example", Port: 21,
				Message: "FORWARD rejected: unsupported scheme ftp for ftp.example:21"},
			KindUnknown, false},
		{"lower-case non-standard method (proxy.rs:1471-1487@v0.0.111, HttpMethod::Other)",
			ocsf{Class: 4002, Activity: "Other", Sev: "MED", Action: "Denied", HasActor: true, Binary: "/usr/bin/python3.11", PID: 6129, Host: "files.example", Port: 80,
				Method: "propfind", Path: "/dav", Policy: "-", Engine: "opa", Message: "FORWARD denied propfind files.example:80/dav",
				Detail: "endpoint files.example:80 is not allowed by any policy"},
			KindForward, false},
		{"FORWARD denied at v0.0.83, no status_detail (proxy.rs:3467-3485@v0.0.83)",
			ocsf{Class: 4002, Activity: "Other", Sev: "MED", Action: "Denied", HasActor: true, Binary: "/usr/bin/curl", PID: 7, Host: "d.example", Port: 80,
				Method: "GET", Path: "/f", Policy: "-", Engine: "opa", Message: "FORWARD denied GET d.example:80/f"},
			KindForward, false},
		{"non-ASCII host keeps its case (to_ascii_lowercase, proxy.rs:1763@v0.0.111)",
			connectDenied("/usr/bin/curl", 4, "Äpi.example.de", 443, "endpoint Äpi.example.de:443 is not allowed by any policy"), KindL4NoEndpoint, false},
		{"255-byte host, reason cut before its end",
			connectDenied("/usr/bin/curl", 4, longHost, 443, "endpoint "+longHost+":443 is not allowed by any policy"), KindL4NoEndpoint, false},
		{"binary not allowed, reason cut (sandbox-policy.rego:46-62@v0.0.111)",
			connectDenied("/usr/bin/python3.11", 8, "h.example", 8081, "binary '/usr/bin/python3.11' not allowed in policy 'p' (ancestors: [/usr/bin/bash -> /usr/local/bin/claude], cmdline: [/usr/bin/python3.11]). SYMLINK HINT: "+strings.Repeat("x", 200)),
			KindBinary, false},
		{"no network", connectDenied("/usr/bin/curl", 4, "h.example", 443, "network connections not allowed by policy"), KindNoNetwork, false},
		{"SSRF (proxy.rs:1518-1530@v0.0.111)",
			ocsf{Class: 4001, Activity: "Open", Sev: "MED", Action: "Denied", HasActor: true, Binary: "/usr/bin/curl", PID: 1618, Host: "169.254.169.254", Port: 80,
				Policy: "-", Engine: "ssrf", Message: "CONNECT blocked: internal address 169.254.169.254:80", Detail: "169.254.169.254 resolves to always-blocked address 169.254.169.254"},
			KindSSRF, false},
		{"transparent TCP without a rule (proxy.rs:900-910@v0.0.111)",
			ocsf{Class: 4001, Activity: "Open", Sev: "MED", Action: "Denied", Host: "10.1.2.3", IP: true, Port: 5432,
				Message: "Transparent TCP denied 10.1.2.3:5432", Detail: "transparent_tcp_destination_denied"},
			KindTransparentTCP, false},
		{"unknown binary -(0)", connectDenied("-", 0, "h.example", 443, "endpoint h.example:443 is not allowed by any policy"), KindL4NoEndpoint, false},
		{"CONNECT allowed (proxy.rs:1369-1380@v0.0.111)",
			ocsf{Class: 4001, Activity: "Open", Sev: "INFO", Action: "Allowed", HasActor: true, Binary: "/usr/bin/curl", PID: 2, Host: "api.github.com", Port: 443,
				Policy: "github", Engine: "opa", Message: "CONNECT allowed api.github.com:443"},
			KindNone, false},
	}
}

// wantFields are the fields a format reads from e: an HTTP event without
// a request shows no destination in the text formats.
func wantFields(e ocsf, f Format) Event {
	w := Event{Class: e.Class, Action: e.Action, Host: e.Host, Port: e.Port, Method: e.Method, Path: e.Path,
		Policy: e.Policy, Engine: e.Engine}
	if e.HasActor {
		w.Binary, w.PID = e.Binary, e.PID
	}
	if e.Class == 4002 && e.Method == "" && f != FormatJSONL {
		w.Host, w.Port = "", 0
	}
	return w
}

// corpusLines renders a case in the four forms.
func corpusLines(e ocsf) map[string]string {
	return map[string]string{
		"shorthand v0.0.111": e.fileLine(true),
		"shorthand v0.0.83":  e.fileLine(false),
		"cli":                e.cliLine(),
		"jsonl":              e.jsonLine(),
	}
}

// TestCorpus: every case of the corpus, in each of the four forms, reads
// as one event of its kind with its fields.
func TestCorpus(t *testing.T) {
	for i, tc := range corpus() {
		tc.ev.TimeMS = t0 + int64(i)
		for form, line := range corpusLines(tc.ev) {
			got, res := ParseLine([]byte(line))
			if res != LineEvent {
				t.Errorf("%s, %s: result %d for\n%s", tc.name, form, res, line)
				continue
			}
			checkCorpusEvent(t, tc, form, got)
		}
	}
}

func checkCorpusEvent(t *testing.T, tc corpusCase, form string, got Event) {
	t.Helper()
	want := tc.want
	if got.Format != FormatJSONL && tc.textNone {
		want = KindNone
	}
	if k := Classify(got, true); k != want {
		t.Errorf("%s, %s: kind %q, want %q (reason %q)", tc.name, form, k, want, got.Reason)
	}
	w := wantFields(tc.ev, got.Format)
	g := Event{Class: got.Class, Action: got.Action, Host: got.Host, Port: got.Port, Method: got.Method, Path: got.Path,
		Binary: got.Binary, PID: got.PID, Policy: got.Policy, Engine: got.Engine}
	if len(w.Path) > 0 && len(w.Path) != len(g.Path) {
		t.Errorf("%s, %s: path of %d bytes, want %d", tc.name, form, len(g.Path), len(w.Path))
	}
	g.Path, w.Path = "", ""
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s, %s:\n got %+v\nwant %+v", tc.name, form, g, w)
	}
	if got.TimeMS != tc.ev.TimeMS {
		t.Errorf("%s, %s: time %d, want %d", tc.name, form, got.TimeMS, tc.ev.TimeMS)
	}
}

// noiseLines are the other lines of a sandbox log: tracing lines, other
// OCSF classes, a base event (shorthand.rs:494-517@v0.0.111).
var noiseLines = []string{
	"2026-05-01T01:46:40.000Z INFO openshell_sandbox: sandbox ready",
	"2026-05-01T01:46:40.001Z OCSF PROC:LAUNCH [INFO] /usr/local/bin/claude(7) [cmd:claude -p]",
	"2026-05-01T01:46:40.002Z OCSF EVENT [INFO] Network namespace created [ns:openshell-sandbox-abc123]",
	"2026-05-01T01:46:40.003Z OCSF CONFIG:LOADED [INFO] policy loaded",
	"",
}

// TestCorpusFiles: the corpus as whole files, one per form, with the
// noise between the events: every event is read, in order, of its kind;
// nothing is unparsed; with the JSONL file, every text event is
// corroborated.
func TestCorpusFiles(t *testing.T) {
	cases := corpus()
	files := map[string]*strings.Builder{}
	for i := range cases {
		cases[i].ev.TimeMS = t0 + int64(i)*10
		for form, line := range corpusLines(cases[i].ev) {
			b := files[form]
			if b == nil {
				b = &strings.Builder{}
				files[form] = b
			}
			if form != "jsonl" {
				b.WriteString(noiseLines[i%len(noiseLines)] + "\n")
			}
			b.WriteString(line + "\n")
		}
	}
	var all []Event
	for form, b := range files {
		evs, st, err := ReadLog(form, strings.NewReader(b.String()))
		if err != nil || st.Unparsed != 0 || len(evs) != len(cases) {
			t.Fatalf("%s: %v, %+v, %d events of %d", form, err, st, len(evs), len(cases))
		}
		for i, ev := range evs {
			checkCorpusEvent(t, cases[i], form+" file", ev)
		}
		all = append(all, evs...)
	}
	if n := Assess(all); n != 0 {
		t.Errorf("%d suspect events in a clean evidence", n)
	}
	for _, ev := range all {
		if want := map[bool]Trust{true: TrustStructured, false: TrustCorroborated}[ev.Format == FormatJSONL]; ev.Trust != want {
			t.Errorf("%s:%d: trust %q, want %q (%s)", ev.File, ev.Line, ev.Trust, want, ev.Suspect)
		}
	}
}
