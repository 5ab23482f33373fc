package denial

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		ev    Event
		audit bool
		want  Kind
	}{
		{Event{Class: 4001, Action: "Denied", Engine: "opa", Reason: "endpoint a:1 is not allowed by any policy"}, false, KindL4NoEndpoint},
		{Event{Class: 4001, Action: "Denied", Engine: "opa", Reason: "network connections not allowed by policy"}, false, KindNoNetwork},
		{Event{Class: 4001, Action: "Denied", Engine: "opa", Reason: "binary '/x' not allowed in policy 'p' (ancestors: [], cmdline: [])..."}, false, KindBinary},
		{Event{Class: 4001, Action: "Denied", Engine: "opa", Reason: "something else"}, false, KindUnknown},
		{Event{Class: 4001, Action: "Denied", Engine: "ssrf", Reason: "x"}, false, KindSSRF},
		{Event{Class: 4001, Action: "Denied", Engine: "credentials"}, false, KindCredentials},
		{Event{Class: 4001, Action: "Denied", Engine: "tls"}, false, KindTLS},
		{Event{Class: 4001, Action: "Denied", Engine: "l7", Binary: "/usr/bin/curl", Reason: "unsupported"}, false, KindTunnelProtocol},
		{Event{Class: 4001, Action: "Denied", Engine: "nftables"}, false, KindBypass},
		{Event{Class: 4001, Action: "Denied", Reason: "transparent_tcp_identity_denied"}, false, KindTransparentTCP},
		{Event{Class: 4001, Action: "Denied", Reason: "L7 tunnel closed before inspection because policy changed: policy changed while CONNECT was dialing upstream [captured_generation:1 current_generation:2]"}, false, KindReloadRace},
		{Event{Class: 4001, Action: "Denied", Engine: "l7", Reason: "L7 tunnel closed after policy reload [host:a port:1 captured_generation:3 current_generation:4]"}, false, KindReloadRace},
		{Event{Class: 4001, Action: "Denied", Engine: "l7", Reason: "malformed request line"}, false, KindUnknown},
		{Event{Class: 4002, Action: "Denied", Engine: "opa", Reason: "endpoint a:80 is not allowed by any policy"}, false, KindForward},
		{Event{Class: 4002, Action: "Denied", Engine: "opa", Reason: "network connections not allowed by policy"}, false, KindForward},
		{Event{Class: 4002, Action: "Denied", Engine: "l7", Reason: "L7_REQUEST deny GET a:1/x reason=GET /x not permitted by policy"}, false, KindL7Deny},
		{Event{Class: 4002, Action: "Denied", Engine: "l7", Reason: "FORWARD_L7 deny GET a:1/x reason=GET /x blocked by deny rule"}, false, KindL7DenyRule},
		{Event{Class: 4002, Action: "Denied", Engine: "l7", Reason: "request-target contains an encoded '/' (%2F)"}, false, KindNonCanonical},
		{Event{Class: 4002, Action: "Denied", Engine: "l7"}, false, KindUnknown},
		{Event{Class: 4002, Action: "Denied", Engine: "l7-graphql", Reason: "x"}, false, KindL7Other},
		{Event{Class: 4002, Action: "Denied", Engine: "middleware", Reason: "x"}, false, KindL7Other},
		{Event{Class: 4002, Action: "Allowed", Engine: "l7", Reason: "L7_REQUEST audit GET a:1/x reason=GET /x not permitted by policy"}, true, KindAudit},
		{Event{Class: 4002, Action: "Allowed", Engine: "l7", Reason: "L7_REQUEST audit GET a:1/x reason=GET /x not permitted by policy"}, false, KindNone},
		{Event{Class: 4002, Action: "Allowed", Engine: "l7", Reason: "L7_REQUEST allow GET a:1/x reason="}, true, KindNone},
		{Event{Class: 4001, Action: "Allowed", Engine: "l7", Reason: "L7_REQUEST audit GET a:1/x reason=y"}, true, KindNone},
	}
	for _, tc := range tests {
		if got := Classify(tc.ev, tc.audit); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.ev, got, tc.want)
		}
	}
}

// TestClassifyLines: at least one log line per row of the table, in the
// form OpenShell writes it (the rows' sources), parses and classifies as
// its row; the runner's counts and suggest's denials are these kinds.
func TestClassifyLines(t *testing.T) {
	const ts = "2026-04-01T04:04:32.190Z OCSF "
	tests := []struct {
		line string
		want Kind
	}{
		{ts + "NET:OPEN [MED] DENIED /usr/bin/curl(64) -> api.github.com:443 [policy:- engine:opa] [reason:endpoint api.github.com:443 is not allowed by any policy]", KindL4NoEndpoint},
		{ts + "NET:OPEN [MED] DENIED /usr/bin/curl(64) -> api.github.com:443 [policy:- engine:opa] [reason:no matching policy]", KindL4NoEndpoint},
		{ts + "NET:OPEN [MED] DENIED python3(9) -> h:8081 [policy:- engine:opa] [reason:binary '/usr/bin/python3.11' not allowed in policy 'p' (ancestors: [/usr/bin/bash -> /usr/local/bin/claude], cmdline: [])]", KindBinary},
		{ts + "NET:OPEN [MED] DENIED curl(1) -> h:443 [policy:- engine:opa] [reason:network connections not allowed by policy]", KindNoNetwork},
		{ts + "NET:OPEN [MED] DENIED curl(1618) -> 169.254.169.254:80 [policy:- engine:ssrf] [reason:169.254.169.254 resolves to always-blocked address 169.254.169.254, connection rejected]", KindSSRF},
		{ts + "HTTP:GET [MED] DENIED curl(2) -> GET http://h.example/p [policy:p engine:ssrf] [reason:h.example resolves to 10.0.3.7 which is not in allowed_ips, connection rejected]", KindSSRF},
		{ts + "HTTP:GET [MED] DENIED curl(2) -> GET http://h.example/p [policy:- engine:opa] [reason:endpoint h.example:80 is not allowed by any policy]", KindForward},
		{ts + "HTTP:POST [MED] DENIED POST http://h.example:8081/p [policy:p engine:l7] [reason:L7_REQUEST deny POST h.example:8081/p reason=POST /p not permitted by policy]", KindL7Deny},
		{ts + "HTTP:GET [MED] DENIED curl(3) -> GET http://h.example/p [policy:p engine:l7] [reason:FORWARD_L7 deny GET h.example:80/p reason=GET /p not permitted by policy]", KindL7Deny},
		{ts + "HTTP:DELETE [MED] DENIED DELETE http://h.example:443/p [policy:p engine:l7] [reason:L7_REQUEST deny DELETE h.example:443/p reason=DELETE /p blocked by deny rule]", KindL7DenyRule},
		{ts + "HTTP:POST [MED] DENIED POST http://h.example:8081/graphql [policy:p engine:l7-graphql] [reason:GRAPHQL_L7_REQUEST deny POST h.example:8081/graphql reason=x]", KindL7Other},
		{ts + "HTTP:GET [MED] DENIED curl(3) -> GET http://h.example/a%2Fb [policy:p engine:l7] [reason:request-target contains an encoded '/' (%2F)]", KindNonCanonical},
		{ts + "HTTP:UNKNOWN [HIGH] DENIED UNKNOWN  [policy:github engine:credential-binding] [reason:credential_endpoint_mismatch]", KindUnknown},
		{ts + "NET:OPEN [MED] DENIED curl(3) -> h.example:443 [policy:p engine:l7] [reason:CONNECT_L7 blocked unsupported tunnel protocol for h.example:443]", KindTunnelProtocol},
		{ts + "NET:OPEN [HIGH] DENIED curl(3) -> h.example:443 [policy:p engine:credentials] [reason:credentialed endpoint requires L7 inspection; raw tunnel is not explicitly allowed]", KindCredentials},
		{ts + "NET:OPEN [HIGH] DENIED curl(3) -> h.example:443 [policy:p engine:tls] [reason:x]", KindTLS},
		{ts + "NET:REFUSE [MED] DENIED node(4) -> 1.2.3.4:443/tcp [policy:bypass-detect engine:nftables] [reason:BYPASS_DETECT 1.2.3.4:443 proto=tcp binary=node action=reject reason=x]", KindBypass},
		{ts + "NET:OPEN [MED] DENIED /usr/bin/psql(5) -> db.example:5432 [policy:- engine:opa] [reason:transparent_tcp_identity_denied]", KindTransparentTCP},
		{ts + "NET:OPEN [MED] DENIED 10.1.2.3:5432 [reason:transparent_tcp_mapping_expired]", KindTransparentTCP},
		{ts + "NET:OPEN [MED] DENIED h.example:443 [reason:L7 tunnel closed before inspection because policy changed: policy changed while CONNECT was dialing upstream [captured_generation:1 current_generation:2]]", KindReloadRace},
		{ts + "HTTP:POST [MED] DENIED POST http://api.example.com:443/v1/chat [policy:model_api engine:middleware] [transformed:false failed:false reason:prompt rejected]", KindL7Other},
		{`{"class_uid":4002,"action_id":1,"message":"L7_REQUEST audit GET api.github.com:443/user reason=GET /user not permitted by policy","http_request":{"http_method":"GET","url":{"hostname":"api.github.com","path":"/user","port":443}},"firewall_rule":{"name":"github","type":"l7"}}`, KindAudit},
		{`[1775016272.190] [sandbox] [OCSF ] [ocsf] HTTP:GET [INFO] ALLOWED GET http://api.github.com:443/user [policy:github engine:l7]`, KindNone},
		{ts + "NET:OPEN [INFO] ALLOWED curl(64) -> h.example:8081 [policy:p engine:opa]", KindNone},
	}
	seen := map[Kind]bool{}
	for _, tc := range tests {
		ev, res := ParseLine([]byte(tc.line))
		if res != LineEvent {
			t.Errorf("%s: does not parse (%d)", tc.line, res)
			continue
		}
		got := Classify(ev, true)
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.line, got, tc.want)
		}
		seen[got] = true
	}
	for _, r := range Kinds() {
		if !seen[r.Kind] {
			t.Errorf("no line of kind %s", r.Kind)
		}
	}
}

func TestKindDenied(t *testing.T) {
	for _, r := range Kinds() {
		if r.Kind.Denied() != (r.Kind != KindAudit) {
			t.Errorf("%s: Denied %v", r.Kind, r.Kind.Denied())
		}
	}
	if KindNone.Denied() {
		t.Error("KindNone denied")
	}
}

// Every kind has one complete row that cites its source, and the table
// is a copy.
func TestKindTable(t *testing.T) {
	seen := map[Kind]bool{}
	for _, r := range Kinds() {
		if seen[r.Kind] || r.Kind == KindNone {
			t.Errorf("%q twice or empty", r.Kind)
		}
		seen[r.Kind] = true
		if r.Message == "" || r.Source == "" {
			t.Errorf("%s: incomplete row", r.Kind)
		}
		if got, ok := Lookup(r.Kind); !ok || got != r {
			t.Errorf("Lookup(%s) = %+v, %v", r.Kind, got, ok)
		}
	}
	for _, k := range []Kind{KindL4NoEndpoint, KindBinary, KindNoNetwork, KindSSRF, KindForward, KindL7Deny, KindL7DenyRule, KindAudit,
		KindNonCanonical, KindTunnelProtocol, KindCredentials, KindTLS, KindBypass, KindTransparentTCP, KindReloadRace, KindL7Other, KindUnknown} {
		if !seen[k] {
			t.Errorf("%s has no row", k)
		}
	}
	if len(seen) != 17 {
		t.Errorf("%d rows", len(seen))
	}
	k := Kinds()
	k[0].Kind = "changed"
	if Kinds()[0].Kind == "changed" {
		t.Error("Kinds returns the table itself")
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup of an unknown kind")
	}
}

// docKindRows reads the Markdown table that follows heading in a doc:
// each row's first cell (the kind, in backticks) and its whole text;
// a row with an empty first cell continues the one before.
func docKindRows(t *testing.T, doc, heading string) ([]Kind, map[Kind]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", doc))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), heading)
	if !ok {
		t.Fatalf("docs/%s has no %q", doc, heading)
	}
	var order []Kind
	text := map[Kind]string{}
	inTable := false
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(line, "|")
		first := strings.TrimSpace(cells[1])
		if first == "kind" || strings.HasPrefix(first, "---") {
			continue
		}
		if first == "" {
			if len(order) > 0 {
				text[order[len(order)-1]] += line
			}
			continue
		}
		k := Kind(strings.Trim(first, "`"))
		order = append(order, k)
		text[k] = line
	}
	return order, text
}

// citation is a path:lines reference, as the Go table and the docs write
// them; the docs shorten paths, so files compare by base name.
var citation = regexp.MustCompile("([A-Za-z0-9_./-]+\\.(?:rs|rego)):([0-9][0-9,-]*[0-9])")

func citations(s string) []string {
	var out []string
	for _, m := range citation.FindAllStringSubmatch(s, -1) {
		out = append(out, filepath.Base(m[1])+":"+m[2])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestDocsKindTables keeps the docs' kind tables equal to the Go table:
// docs/policy-suggest.md (the contract) has every kind in the table's
// order with the same OpenShell citations, docs/runner.md (what result.json
// counts) every kind in the same order.
func TestDocsKindTables(t *testing.T) {
	var want []Kind
	for _, r := range Kinds() {
		want = append(want, r.Kind)
	}
	order, text := docKindRows(t, "policy-suggest.md", "## The denial kinds")
	if !slices.Equal(order, want) {
		t.Errorf("docs/policy-suggest.md kinds\n%q\nwant the Go table's\n%q", order, want)
	}
	for _, r := range Kinds() {
		if got, w := citations(text[r.Kind]), citations(r.Source); !slices.Equal(got, w) {
			t.Errorf("docs/policy-suggest.md %s cites %q, the Go table %q", r.Kind, got, w)
		}
	}
	order, _ = docKindRows(t, "runner.md", "Denials are counted by kind")
	if !slices.Equal(order, want) {
		t.Errorf("docs/runner.md kinds\n%q\nwant the Go table's\n%q", order, want)
	}
}

// Real lines from OpenShell's own tests and docs (testdata/README.md)
// parse, and classify as their reasons say.
func TestUpstreamLines(t *testing.T) {
	data := fixture.ReadFile(t, upstreamLog)
	want := []Kind{KindNone, KindNone, KindUnknown, KindNone, KindUnknown, KindForward, KindUnknown, KindL4NoEndpoint}
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
		if got := Classify(ev, false); got != want[i] {
			t.Errorf("line %d: kind %q, want %q", i+1, got, want[i])
		}
		if strings.Contains(ev.Path, "secret") {
			t.Errorf("line %d: the query reached the path", i+1)
		}
	}
}
