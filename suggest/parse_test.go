package suggest

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The lines are OpenShell's formats as its source writes them (see the
// citations in parse.go) and testdata/logs/README.md.
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
				Binary: "/usr/bin/curl", Policy: "gh", Engine: "l7", Reason: "FORWARD_L7 deny GET api.github.com:443/user reason=GET /user not permitted by policy"}},
		{"shorthand NET deny with a binary path holding spaces and brackets",
			`2026-04-01T04:04:32.190Z OCSF NET:OPEN [MED] DENIED /opt/my tool [x](12) -> api.example.com:443 [policy:- engine:opa] [reason:endpoint api.example.com:443 is not allowed by any policy]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4001, Action: "Denied", Host: "api.example.com", Port: 443,
				Binary: "/opt/my tool [x]", Policy: "-", Engine: "opa", Reason: "endpoint api.example.com:443 is not allowed by any policy"}},
		{"shorthand bypass with /tcp",
			`2026-04-01T04:04:32.190Z OCSF NET:REFUSE [MED] DENIED /usr/bin/nc(5) -> 10.0.0.9:22/tcp [policy:bypass-detect engine:nftables] [reason:BYPASS_DETECT 10.0.0.9:22 proto=tcp binary=/usr/bin/nc action=reject reason=direct connection bypassed HTTP CONNECT proxy]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4001, Action: "Denied", Host: "10.0.0.9", Port: 22, Binary: "/usr/bin/nc",
				Policy: "bypass-detect", Engine: "nftables", Reason: "BYPASS_DETECT 10.0.0.9:22 proto=tcp binary=/usr/bin/nc action=reject reason=direct connection bypassed HTTP CONNECT proxy"}},
		{"shorthand transparent TCP without a firewall rule (proxy.rs:899-911)",
			`2026-04-01T04:04:32.190Z OCSF NET:OPEN [MED] DENIED 10.1.2.3:5432 [reason:transparent_tcp_destination_denied]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4001, Action: "Denied", Host: "10.1.2.3", Port: 5432, Reason: "transparent_tcp_destination_denied"}},
		{"shorthand allowed", `2026-04-01T04:04:32.190Z OCSF NET:OPEN [INFO] ALLOWED /usr/bin/curl(1) -> a.b:443 [policy:x engine:opa]`,
			LineEvent, Event{Format: FormatShorthand, TimeMS: 1775016272190, Class: 4001, Action: "Allowed", Host: "a.b", Port: 443, Binary: "/usr/bin/curl", Policy: "x", Engine: "opa"}},
		{"shorthand tracing line", `2026-04-01T04:04:32.190Z INFO openshell_sandbox: ready`, LineOther, Event{}},
		{"shorthand other OCSF class", `2026-04-01T04:04:32.190Z OCSF PROC:LAUNCH [INFO] x`, LineOther, Event{}},
		{"shorthand cut mid-line", `2026-04-01T04:04:32.190Z OCSF HTTP:POST [MED] DENIED POST http://h:8081/x`, LineUnparsed, Event{}},
		{"shorthand cut mid-reason", `2026-04-01T04:04:32.190Z OCSF NET:OPEN [MED] DENIED /b(1) -> h.example:443 [policy:- engine:opa] [reason:endpoint h.ex`, LineUnparsed, Event{}},
		{"bad timestamp", `2026-04-01T04:04:32Z OCSF NET:OPEN [MED] DENIED`, LineUnparsed, Event{}},
		{"cli line",
			`[1775016272.190] [sandbox] [OCSF ] [ocsf] NET:OPEN [MED] DENIED /usr/bin/curl(64) -> api.github.com:443 [policy:- engine:opa] [reason:no matching policy]`,
			LineEvent, Event{Format: FormatCLI, TimeMS: 1775016272190, Class: 4001, Action: "Denied", Host: "api.github.com", Port: 443, Binary: "/usr/bin/curl", Policy: "-", Engine: "opa", Reason: "no matching policy"}},
		{"cli non-OCSF line", `[1775016272.190] [gateway] [INFO ] [openshell_server] ready`, LineOther, Event{}},
		{"cli bad source", `[1775016272.190] [elsewhere] [OCSF ] [ocsf] NET:OPEN [MED] DENIED`, LineUnparsed, Event{}},
		{"jsonl with query and parents",
			`{"class_uid":4002,"time":5,"action_id":2,"message":"FORWARD denied GET d.example:80/f?token=s","status_detail":"endpoint d.example:80 is not allowed by any policy","http_request":{"http_method":"GET","url":{"hostname":"D.Example","path":"/f?token=s","port":80}},"actor":{"process":{"name":"/usr/bin/curl","pid":3,"parent_process":{"name":"/usr/bin/bash","parent_process":{"name":"/usr/local/bin/claude"}}}},"firewall_rule":{"name":"-","type":"opa"}}`,
			LineEvent, Event{Format: FormatJSONL, TimeMS: 5, Class: 4002, Action: "Denied", Host: "d.example", Port: 80, Method: "GET", Path: "/f", Binary: "/usr/bin/curl",
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
			got.Ancestors, tc.want.Ancestors = nil, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		ev    Event
		audit bool
		want  Kind
	}{
		{Event{Class: 4001, Action: "Denied", Engine: "opa", Reason: "endpoint a:1 is not allowed by any policy"}, false, KindL4NoEndpoint},
		{Event{Class: 4001, Action: "Denied", Engine: "opa", Reason: "network connections not allowed by policy"}, false, KindNoNetwork},
		{Event{Class: 4001, Action: "Denied", Engine: "opa", Reason: "binary '/x' not allowed in policy 'p' (ancestors: [], cmdline: [])..."}, false, KindBinary},
		{Event{Class: 4001, Action: "Denied", Engine: "ssrf", Reason: "x"}, false, KindSSRF},
		{Event{Class: 4001, Action: "Denied", Engine: "credentials"}, false, KindCredentials},
		{Event{Class: 4001, Action: "Denied", Engine: "tls"}, false, KindTLS},
		{Event{Class: 4001, Action: "Denied", Engine: "l7", Reason: "unsupported"}, false, KindTunnelProtocol},
		{Event{Class: 4001, Action: "Denied", Engine: "nftables"}, false, KindBypass},
		{Event{Class: 4001, Action: "Denied", Reason: "transparent_tcp_identity_denied"}, false, KindTransparentTCP},
		{Event{Class: 4001, Action: "Denied", Engine: "opa", Reason: "CONNECT a:1 not permitted because policy changed"}, false, KindReloadRace},
		{Event{Class: 4002, Action: "Denied", Engine: "opa", Reason: "endpoint a:80 is not allowed by any policy"}, false, KindForward},
		{Event{Class: 4002, Action: "Denied", Engine: "l7", Reason: "L7_REQUEST deny GET a:1/x reason=GET /x not permitted by policy"}, false, KindL7Deny},
		{Event{Class: 4002, Action: "Denied", Engine: "l7", Reason: "FORWARD_L7 deny GET a:1/x reason=GET /x blocked by deny rule"}, false, KindL7DenyRule},
		{Event{Class: 4002, Action: "Denied", Engine: "l7", Reason: "request-target contains an encoded '/' (%2F)"}, false, KindNonCanonical},
		{Event{Class: 4002, Action: "Denied", Engine: "l7-graphql", Reason: "x"}, false, KindL7Other},
		{Event{Class: 4002, Action: "Allowed", Engine: "l7", Reason: "L7_REQUEST audit GET a:1/x reason=GET /x not permitted by policy"}, true, KindAudit},
		{Event{Class: 4002, Action: "Allowed", Engine: "l7", Reason: "L7_REQUEST audit GET a:1/x reason=GET /x not permitted by policy"}, false, kindNotDenial},
		{Event{Class: 4002, Action: "Allowed", Engine: "l7", Reason: "L7_REQUEST allow GET a:1/x reason="}, true, kindNotDenial},
	}
	for _, tc := range tests {
		if got := classify(tc.ev, tc.audit); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.ev, got, tc.want)
		}
	}
}

// Every kind of the table has a row, and the table cites its source.
func TestKindTable(t *testing.T) {
	seen := map[Kind]bool{}
	for _, r := range Kinds {
		if seen[r.Kind] {
			t.Errorf("%s twice", r.Kind)
		}
		seen[r.Kind] = true
		if r.Why == "" || r.Source == "" || r.Outcome == "" {
			t.Errorf("%s: incomplete row", r.Kind)
		}
	}
	for _, k := range []Kind{KindL4NoEndpoint, KindBinary, KindNoNetwork, KindSSRF, KindForward, KindL7Deny, KindL7DenyRule, KindAudit,
		KindNonCanonical, KindTunnelProtocol, KindCredentials, KindTLS, KindBypass, KindTransparentTCP, KindReloadRace, KindL7Other, KindUnknownDenial} {
		if !seen[k] {
			t.Errorf("%s has no row", k)
		}
	}
	// docs/policy-suggest.md carries the same table.
	doc, err := os.ReadFile(filepath.Join("..", "docs", "policy-suggest.md"))
	if err != nil {
		t.Fatal(err)
	}
	for k := range seen {
		if !bytes.Contains(doc, []byte("`"+string(k)+"`")) {
			t.Errorf("docs/policy-suggest.md does not describe %s", k)
		}
	}
}

func TestDeresolve(t *testing.T) {
	v := map[string]string{"OWNER": "acme", "REPO_NAME": "acme", "ISSUE_NUMBER": "7", "FORGE_HOST": "git.example.com", "HOST_IP": "172.17.0.1", "GCP_REGION": "us-east5"}
	for path, want := range map[string]string{
		"/repos/acme/acme/issues/7":           "/repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}",
		"/repos/acmex/w/issues/77":            "/repos/acmex/w/issues/77",
		"/v1/projects/p/locations/us-east5/x": "/v1/projects/p/locations/{{GCP_REGION}}/x",
	} {
		if got, _ := deresolvePath(path, v); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	for host, want := range map[string]string{
		"git.example.com": "{{FORGE_HOST}}", "172.17.0.1": "{{HOST_IP}}",
		"us-east5-aiplatform.googleapis.com": "{{GCP_REGION}}-aiplatform.googleapis.com", "api.github.com": "api.github.com",
	} {
		if got := deresolveHost(host, v); got != want {
			t.Errorf("%s: %s, want %s", host, got, want)
		}
	}
	// One-character values other than ISSUE_NUMBER are left alone.
	if got, _ := deresolvePath("/a/b", map[string]string{"OWNER": "a"}); got != "/a/b" {
		t.Errorf("short value substituted: %s", got)
	}
}

func TestLooksLikeID(t *testing.T) {
	for seg, want := range map[string]bool{"42": true, "7": false, "abc": false, "0123456789abcdef": true,
		"550e8400-e29b-41d4-a716-446655440000": true, "comments": false, "": false} {
		if got := looksLikeID(seg); got != want {
			t.Errorf("%q: %v", seg, got)
		}
	}
}

func TestSafe(t *testing.T) {
	for in, want := range map[string]string{"plain": "plain", "a\x1b[31mb": `a\x1b[31mb`, "é": `\u00e9`, "\xff": `\xff`, `a\b`: `a\\b`, "x\ny": `x\x0ay`} {
		if got := Safe(in); got != want {
			t.Errorf("Safe(%q) = %q, want %q", in, got, want)
		}
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

// Real lines from OpenShell's own tests and docs (testdata/logs/README.md)
// parse, and classify as their reasons say.
func TestUpstreamLines(t *testing.T) {
	data, err := os.ReadFile("testdata/logs/upstream.log")
	if err != nil {
		t.Fatal(err)
	}
	want := []Kind{kindNotDenial, "", KindUnknownDenial, kindNotDenial, KindUnknownDenial, KindForward, KindUnknownDenial, KindL4NoEndpoint}
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		ev, res := ParseLine([]byte(line))
		if i == 1 {
			if res != LineOther {
				t.Errorf("line 2: %d, want a tracing line", res)
			}
			continue
		}
		if res != LineEvent {
			t.Errorf("line %d does not parse: %s", i+1, line)
			continue
		}
		if got := classify(ev, false); got != want[i] {
			t.Errorf("line %d: kind %q, want %q", i+1, got, want[i])
		}
		if strings.Contains(ev.Path, "secret") {
			t.Errorf("line %d: the query reached the path", i+1)
		}
	}
}
