package denial

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
)

// The lines are OpenShell's formats as its source writes them (see the
// citations in parse.go, testdata/README.md and
// ../suggest/testdata/logs/README.md).
func TestParseLine(t *testing.T) {
	tests := []struct {
		name string
		line string
		res  LineResult
		want Event
	}{
		{"shorthand L7 deny in a tunnel",
			`2026-04-01T04:04:32.190Z OCSF HTTP:POST [MED] DENIED POST http://host.docker.internal:8081/repos/a/b/issues/7/comments [policy:p engine:l7] [reason:L7_REQUEST deny POST host.docker.internal:8081/repos/a/b/issues/7/comments reason=POST /repos/a/b/issues/7/comments not permitted by policy]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4002, Action: "Denied", Host: "host.docker.internal", Port: 8081, Method: "POST",
				Path: "/repos/a/b/issues/7/comments", Policy: "p", Engine: "l7",
				Reason: "L7_REQUEST deny POST host.docker.internal:8081/repos/a/b/issues/7/comments reason=POST /repos/a/b/issues/7/comments not permitted by policy"}},
		{"shorthand HTTP with unmapped fields before the reason (shorthand.rs:158-172)",
			`2026-04-01T04:04:32.190Z OCSF HTTP:GET [MED] DENIED /usr/bin/curl(9) -> GET https://api.github.com/user [policy:gh engine:l7] [rule:x reason:FORWARD_L7 deny GET api.github.com:443/user reason=GET /user not permitted by policy]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4002, Action: "Denied", Host: "api.github.com", Port: 443, Method: "GET", Path: "/user",
				Binary: "/usr/bin/curl", PID: 9, Policy: "gh", Engine: "l7", Reason: "FORWARD_L7 deny GET api.github.com:443/user reason=GET /user not permitted by policy"}},
		{"shorthand HTTP middleware deny, unmapped fields then the reason (middleware.rs:769-811, shorthand.rs:158-171@v0.0.111)",
			`2026-04-01T04:04:32.190Z OCSF HTTP:POST [MED] DENIED POST http://api.example.com:443/v1/chat [policy:model_api engine:middleware] [transformed:false failed:false reason:prompt rejected by guard]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4002, Action: "Denied", Host: "api.example.com", Port: 443, Method: "POST", Path: "/v1/chat",
				Policy: "model_api", Engine: "middleware", Reason: "prompt rejected by guard"}},
		{"shorthand HTTP unmapped values escaped (escape_context_field, shorthand.rs:104-119@v0.0.111), a reason quoting reason:",
			`2026-04-01T04:04:32.190Z OCSF HTTP:GET [MED] DENIED GET http://h.example/x [policy:p engine:l7] [note:a\u{20}b\]c k\u{20}2:v reason:L7_REQUEST deny GET h.example:80/x reason=GET /x not permitted by policy reason:x]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4002, Action: "Denied", Host: "h.example", Port: 80, Method: "GET", Path: "/x",
				Policy: "p", Engine: "l7", Reason: "L7_REQUEST deny GET h.example:80/x reason=GET /x not permitted by policy reason:x"}},
		{"shorthand HTTP allowed with unmapped fields only (shorthand.rs test_http_activity_shorthand_includes_unmapped_attributes@v0.0.111)",
			`2026-04-01T04:04:32.190Z OCSF HTTP:POST [INFO] ALLOWED POST http://httpbin.org:443/anything [policy:httpbin engine:extension] [attempt:2 cached:true]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4002, Action: "Allowed", Host: "httpbin.org", Port: 443, Method: "POST", Path: "/anything",
				Policy: "httpbin", Engine: "extension"}},
		{"shorthand HTTP at v0.0.83: the reason bracket alone (shorthand.rs:203-207@v0.0.83)",
			`2026-04-01T04:04:32.190Z OCSF HTTP:PUT [MED] DENIED curl(1618) -> PUT http://169.254.169.254/latest/api/token [policy:aws_iam engine:ssrf] [reason:not in allowed_ips]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4002, Action: "Denied", Host: "169.254.169.254", Port: 80, Method: "PUT", Path: "/latest/api/token",
				Binary: "curl", PID: 1618, Policy: "aws_iam", Engine: "ssrf", Reason: "not in allowed_ips"}},
		{"shorthand NET deny with a binary path holding spaces and brackets",
			`2026-04-01T04:04:32.190Z OCSF NET:OPEN [MED] DENIED /opt/my tool [x](12) -> api.example.com:443 [policy:- engine:opa] [reason:endpoint api.example.com:443 is not allowed by any policy]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4001, Action: "Denied", Host: "api.example.com", Port: 443,
				Binary: "/opt/my tool [x]", PID: 12, Policy: "-", Engine: "opa", Reason: "endpoint api.example.com:443 is not allowed by any policy"}},
		{"shorthand bypass with /tcp",
			`2026-04-01T04:04:32.190Z OCSF NET:REFUSE [MED] DENIED /usr/bin/nc(5) -> 10.0.0.9:22/tcp [policy:bypass-detect engine:nftables] [reason:BYPASS_DETECT 10.0.0.9:22 proto=tcp binary=/usr/bin/nc action=reject reason=direct connection bypassed HTTP CONNECT proxy]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4001, Action: "Denied", Host: "10.0.0.9", Port: 22, Binary: "/usr/bin/nc", PID: 5,
				Policy: "bypass-detect", Engine: "nftables", Reason: "BYPASS_DETECT 10.0.0.9:22 proto=tcp binary=/usr/bin/nc action=reject reason=direct connection bypassed HTTP CONNECT proxy"}},
		{"shorthand transparent TCP without a firewall rule (proxy.rs:899-911)",
			`2026-04-01T04:04:32.190Z OCSF NET:OPEN [MED] DENIED 10.1.2.3:5432 [reason:transparent_tcp_destination_denied]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4001, Action: "Denied", Host: "10.1.2.3", Port: 5432, Reason: "transparent_tcp_destination_denied"}},
		{"shorthand allowed", `2026-04-01T04:04:32.190Z OCSF NET:OPEN [INFO] ALLOWED /usr/bin/curl(1) -> a.b:443 [policy:x engine:opa]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4001, Action: "Allowed", Host: "a.b", Port: 443, Binary: "/usr/bin/curl", PID: 1, Policy: "x", Engine: "opa"}},
		{"shorthand tracing line", `2026-04-01T04:04:32.190Z INFO openshell_sandbox: ready`, LineOther, Event{}},
		{"shorthand other OCSF class", `2026-04-01T04:04:32.190Z OCSF PROC:LAUNCH [INFO] x`, LineOther, Event{}},
		{"shorthand cut mid-line", `2026-04-01T04:04:32.190Z OCSF HTTP:POST [MED] DENIED POST http://h:8081/x`, LineUnparsed, Event{}},
		{"shorthand cut mid-reason", `2026-04-01T04:04:32.190Z OCSF NET:OPEN [MED] DENIED /b(1) -> h.example:443 [policy:- engine:opa] [reason:endpoint h.ex`, LineUnparsed, Event{}},
		{"bad timestamp", `2026-04-01T04:04:32Z OCSF NET:OPEN [MED] DENIED`, LineUnparsed, Event{}},
		{"cli line",
			`[1775016272.190] [sandbox] [OCSF ] [ocsf] NET:OPEN [MED] DENIED /usr/bin/curl(64) -> api.github.com:443 [policy:- engine:opa] [reason:no matching policy]`,
			LineEvent, Event{Format: FormatCLI, TimeMS: 1775016272190, Class: 4001, Action: "Denied", Host: "api.github.com", Port: 443, Binary: "/usr/bin/curl", PID: 64, Policy: "-", Engine: "opa", Reason: "no matching policy"}},
		{"cli non-OCSF line", `[1775016272.190] [gateway] [INFO ] [openshell_server] ready`, LineOther, Event{}},
		{"cli bad source", `[1775016272.190] [elsewhere] [OCSF ] [ocsf] NET:OPEN [MED] DENIED`, LineUnparsed, Event{}},
		{"jsonl with query and parents",
			`{"class_uid":4002,"time":5,"action_id":2,"message":"FORWARD denied GET d.example:80/f?token=s","status_detail":"endpoint d.example:80 is not allowed by any policy","http_request":{"http_method":"GET","url":{"hostname":"D.Example","path":"/f?token=s","port":80}},"actor":{"process":{"name":"/usr/bin/curl","pid":3,"parent_process":{"name":"/usr/bin/bash","parent_process":{"name":"/usr/local/bin/claude"}}}},"firewall_rule":{"name":"-","type":"opa"}}`,
			LineEvent, Event{Format: FormatJSONL, TimeMS: 5, Class: 4002, Action: "Denied", Host: "d.example", Port: 80, Method: "GET", Path: "/f", Binary: "/usr/bin/curl", PID: 3,
				Ancestors: []string{"/usr/bin/bash", "/usr/local/bin/claude"}, Policy: "-", Engine: "opa", Reason: "endpoint d.example:80 is not allowed by any policy"}},
		{"jsonl other class", `{"class_uid":6003,"action_id":1}`, LineOther, Event{}},
		{"jsonl not json", `{"class_uid":4001,`, LineUnparsed, Event{}},
		{"blank", "   ", LineOther, Event{}},
		{"garbage", "hello", LineUnparsed, Event{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, res := ParseLine([]byte(tc.line))
			if res != tc.res {
				t.Fatalf("result %d, want %d (%+v)", res, tc.res, got)
			}
			if res != LineEvent {
				return
			}
			if g, w := strings.Join(got.Ancestors, ","), strings.Join(tc.want.Ancestors, ","); g != w {
				t.Errorf("ancestors %q, want %q", g, w)
			}
			if got.line != cutRaw(tc.line) {
				t.Errorf("line %q, want the input", got.line)
			}
			got.Ancestors, tc.want.Ancestors, got.line = nil, nil, ""
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestReadLogLongLine(t *testing.T) {
	long := strings.Repeat("x", maxLine+10)
	in := "2026-04-01T04:05:00.000Z OCSF NET:OPEN [MED] DENIED /usr/bin/curl(64) -> a.example:443 [policy:- engine:opa] [reason:endpoint a.example:443 is not allowed by any policy]\n" + long + "\nlast"
	ev, st, err := ReadLog("x.log", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 1 || st.Unparsed != 2 || ev[0].Line != 1 {
		t.Errorf("events %d, stats %+v", len(ev), st)
	}
}

// Scan hands over the events ReadLog returns, in order, with the same
// counts.
func TestScanIsReadLog(t *testing.T) {
	data := fixture.ReadFile(t, upstreamLog)
	want, wst, err := ReadLog("u.log", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var got []Event
	st, err := Scan("u.log", bytes.NewReader(data), func(ev Event) { got = append(got, ev) })
	if err != nil || !reflect.DeepEqual(got, want) || st != wst {
		t.Errorf("Scan: %v %+v, %d events; ReadLog: %+v, %d events", err, st, len(got), wst, len(want))
	}
	if wst.Events != 7 || wst.Denials != 5 || wst.Format != FormatShorthand {
		t.Errorf("stats %+v", wst)
	}
}

// A read error names the input and the line.
func TestScanReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader("hello\n"), iotest.ErrReader(errors.New("disk gone")))
	_, err := Scan("sandbox.log", r, func(Event) {})
	if err == nil || !strings.Contains(err.Error(), "sandbox.log: line 2: disk gone") {
		t.Errorf("error %v", err)
	}
}

// A long JSONL record, whose events Scan holds for an injection's reach,
// with unparsed lines and barriers among them: every event is handed over
// once, in input order, and ReadLog returns them all (more than one chunk),
// nil when there are none.
func TestScanHeldEventsInOrder(t *testing.T) {
	var b strings.Builder
	want := 0
	for i := 1; i <= 5000; i++ {
		switch {
		case i%701 == 0:
			b.WriteString(`{"class_uid":` + "\n") // unparsed, JSON-shaped: the record goes on
		case i%1999 == 0:
			b.WriteString(`{"class_uid":6003,"message":"http://barrier"}` + "\n")
		default:
			want++
			b.WriteString(`{"class_uid":4001,"action_id":1,"time":` + itoa(i) + `,"message":"` + strings.Repeat("m", i%300) + `"}` + "\n")
		}
	}
	var lines []int
	st, err := Scan("j.log", strings.NewReader(b.String()), func(ev Event) { lines = append(lines, ev.Line) })
	if err != nil || len(lines) != want || st.Events != want {
		t.Fatalf("%v: %d events handed over, stats %+v, want %d", err, len(lines), st, want)
	}
	for i := 1; i < len(lines); i++ {
		if lines[i] <= lines[i-1] {
			t.Fatalf("line %d handed over after line %d", lines[i], lines[i-1])
		}
	}
	evs, _, err := ReadLog("j.log", strings.NewReader(b.String()))
	if err != nil || len(evs) != want || evs[0].Line != lines[0] || evs[want-1].Line != lines[want-1] {
		t.Fatalf("ReadLog: %v, %d events", err, len(evs))
	}
	if evs, _, err := ReadLog("e.log", strings.NewReader("\n")); err != nil || evs != nil {
		t.Errorf("ReadLog of no event: %v, %#v", err, evs)
	}
}

// reasonText puts a space for each line break, byte for byte, and cuts
// at 256 bytes on a rune boundary.
func TestReasonText(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		cut      bool
	}{
		{"plain", "plain", false},
		{"a\nb\r\nc\rd", "a b  c d", false},
		{"\xff\n\xfe", "\xff \xfe", false},
		{strings.Repeat("x", 256), strings.Repeat("x", 256), false},
		{strings.Repeat("x", 255) + "é", strings.Repeat("x", 255) + "...", true},
		{"\n" + strings.Repeat("x", 300), " " + strings.Repeat("x", 255) + "...", true},
	} {
		if got, cut := reasonText(tc.in); got != tc.want || cut != tc.cut {
			t.Errorf("reasonText(%q) = %q, %v; want %q, %v", tc.in, got, cut, tc.want, tc.cut)
		}
	}
}
