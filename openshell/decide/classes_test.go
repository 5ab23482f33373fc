package decide

import (
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// TestDecideClasses holds one table case per disagreement class of issue
// 10, each written from OpenShell's source with its citation (rego lines
// are crates/openshell-supervisor-network/data/sandbox-policy.rego @
// v0.0.111; l7/ is crates/openshell-supervisor-network/src/l7/).
func TestDecideClasses(t *testing.T) {
	data, err := os.ReadFile("testdata/classes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := openshell.Unmarshal(data) // endpoint path and network_middlewares load
	if err != nil {
		t.Fatal(err)
	}
	const gh, node = " from /usr/bin/gh", " from /usr/bin/node"
	cases := []struct {
		version, req, want, why string
	}{
		// Globs: regorus glob.match is globset (package glob; rego:736 path_matches).
		{"", "GET https://api.example.com/files/a.json" + gh, "allow", "rules[0]"},
		{"", "GET https://api.example.com/files/a/b.json" + gh, "deny", "no rule"},
		{"", "GET https://api.example.com/repos/pulls" + gh, "allow", "rules[1]"},
		{"", "GET https://api.example.com/repos/o/r/pulls" + gh, "allow", "rules[1]"},
		{"", "GET https://api.example.com/o/r.git/info/refs?service=git-upload-pack" + gh, "allow", "rules[2]"},
		{"", "GET https://api.example.com/info/refs" + gh, "allow", "rules[2]"},
		// Query values: glob.match(m, [], v) is delimiter '.' (rego:796).
		{"", "GET https://api.example.com/search?q=repo:acme/widgets+foo" + gh, "allow", "rules[3]"},
		{"", "GET https://api.example.com/search?q=repo:acme/widgets+foo.bar" + gh, "deny", "no rule"},
		// Path canonicalisation (l7/path.rs:115): ;params stripped per
		// segment, the trailing slash kept.
		{"", "GET https://api.example.com/x/;p" + gh, "allow", "rules[4]"},
		{"", "GET https://api.example.com//x/" + gh, "allow", "rules[4]"},
		{"", "GET https://api.example.com/y/..;/x/" + gh, "allow", "rules[4]"},
		// v0.0.83 strips ;params only when rebuilding: "/y/..;/x/" is not resolved.
		{"v0.0.83", "GET https://api.example.com/y/..;/x/" + gh, "deny", "no rule"},
		{"", "GET https://api.example.com/a%2Fb" + gh, "deny", "encoded slash"},
		{"", "GET https://slash.example.com/a%2Fb" + node, "allow", "access"},
		{"", "GET https://slash.example.com/a/..%2Fb" + node, "deny", "still contains"},
		{"", "GET https://api.example.com/%2e%2e/x" + gh, "deny", "climbs"},
		// L4/L7 selection (rego:892 _matching_endpoint_configs over the
		// policies whose binaries match, opa.rs:545 authorize_egress): when a
		// process matches both a_l4 (L4) and b_l7 (L7) on the same host:port,
		// the connection is inspected and only L7 rules allow requests; the
		// L4 endpoint adds no rules. curl alone matches only a_l4: L4.
		{"", "CONNECT api.example.com:443 from /usr/bin/curl", "allow", "L4"},
		{"", "GET https://api.example.com/files/a/b.json from /usr/bin/curl", "allow", "without request inspection"},
		// Requests on the L4 tunnel meet the passthrough relay's strict
		// parser (l7/relay.rs:2614 @ v0.0.111, :1702 @ v0.0.83), TLS
		// terminated or plaintext, websocket upgrades included: %2F is
		// refused, a `..` above the root too. v0.0.83 strips ;params only
		// when rebuilding (l7/path.rs), so "/..;/etc" is not a climb there.
		{"", "GET https://api.example.com/a%2Fb from /usr/bin/curl", "deny", "passthrough relay"},
		{"v0.0.83", "GET https://api.example.com/a%2Fb from /usr/bin/curl", "deny", "encoded slash"},
		{"", "GET wss://api.example.com/a%2Fb from /usr/bin/curl", "deny", "encoded slash"},
		{"", "GET https://api.example.com/..;/etc from /usr/bin/curl", "deny", "climbs"},
		{"v0.0.83", "GET https://api.example.com/..;/etc from /usr/bin/curl", "allow", "without request inspection"},
		{"", "GET https://api.example.com/x?a=%G0 from /usr/bin/curl", "deny", "query"},
		{"", "GET http://host.openshell.internal:8080/a%2Fb from /usr/bin/curl at 169.254.1.2", "deny", "encoded slash"},
		// Not TLS, not HTTP: raw (proxy.rs:2359); inside TLS the parser closes it.
		{"", "POST http://api.example.com:443/ from /usr/bin/curl sql SELECT", "allow", "relayed raw"},
		{"", "POST https://api.example.com/ from /usr/bin/curl sql SELECT", "deny", "not HTTP"},
		{"", "CONNECT api.example.com:443 from /usr/bin/curl via /usr/bin/gh", "allow", "L7 rules of network_policies.b_l7"},
		{"", "GET https://api.example.com/files/a/b.json from /usr/bin/curl via /usr/bin/gh", "deny", "no rule"},
		{"", "GET https://api.example.com/files/a.json from /usr/bin/curl via /usr/bin/gh", "allow", "b_l7"},
		// Endpoint path routing (rego:1012 endpoint_matches_l7_request).
		{"", "GET https://gw.example.com/v1/items" + node, "allow", "endpoints[1].access"},
		{"", "POST https://gw.example.com/v1/items" + node, "deny", "no rule"},
		{"", "GET https://gw.example.com/other" + node, "deny", "no L7 endpoint path matched"}, // l7/relay.rs:559 route selection,
		// GraphQL (rego:586 graphql_request_allowed, :357 authority).
		{"", "POST https://gw.example.com/graphql" + node + " graphql query:Q:viewer", "allow", "GraphQL"},
		{"", "POST https://gw.example.com/graphql" + node + " graphql mutation:AddIt:addComment", "allow", "GraphQL"},
		{"", "POST https://gw.example.com/graphql" + node + " graphql mutation:AddIt:addComment,deleteRepo", "deny", "GraphQL"},
		{"", "POST https://gw.example.com/graphql" + node + " graphql mutation:Remove:addComment", "deny", "GraphQL"},
		{"", "POST https://gw.example.com/graphql" + node + " graphql query graphql subscription", "deny", "GraphQL"},
		// Persisted queries (rego:607-640): a registered hash is its operation.
		{"", "POST https://gw.example.com/graphql" + node + " graphql persisted:abc123", "allow", "GraphQL"},
		{"", "POST https://gw.example.com/graphql" + node + " graphql persisted:def456", "deny", "GraphQL"},
		{"", "POST https://gw.example.com/graphql" + node + " graphql persisted:zzz", "deny", "GraphQL"},
		// WebSocket presets (l7/mod.rs:1580): read-only is GET only,
		// read-write adds WEBSOCKET_TEXT.
		{"", "GET wss://ws.example.com/socket" + node, "allow", "access"},
		{"", "WEBSOCKET_TEXT wss://ws.example.com/socket" + node, "deny", "no rule"},
		{"", "HEAD wss://ws.example.com/socket" + node, "allow", "access"}, // GET rule matches HEAD (rego:723)
		{"", "WEBSOCKET_TEXT wss://wsrw.example.com/socket" + node, "allow", "access"},
		{"", "POST wss://wsrw.example.com/socket" + node, "deny", "no rule"},
		// JSON-RPC: exact method (rego:807), response frames denied (:336).
		{"", "POST https://rpc.example.com/" + node + " rpc eth_call", "allow", "JSON-RPC"},
		{"", "POST https://rpc.example.com/" + node + " rpc eth_*", "deny", "no rule"},
		{"", "POST https://rpc.example.com/" + node + " frame response", "deny", "response frames"},
		{"", "GET https://rpc.example.com/" + node + " rpc eth_call", "deny", "no rule"},
		// MCP: glob methods (rego:812), tool is params.name (lib.rs:533).
		{"", "POST https://mcp.example.com/mcp" + node + " rpc tools/call tool search_web", "allow", "JSON-RPC"},
		{"", "POST https://mcp.example.com/mcp" + node + " rpc tools/call tool delete_all", "deny", "no rule"},
		{"", "POST https://mcp.example.com/mcp" + node + " rpc tools/list", "deny", "no rule"},
		{"", "POST https://mcp.example.com/mcp" + node + " rpc initialize", "allow", "JSON-RPC"},
		{"", "POST https://mcp.example.com/mcp" + node + " frame response", "allow", "MCP response"},
		{"", "GET https://mcp.example.com/mcp" + node + " frame stream", "allow", "receive stream"},
		// A GET that is not a receive stream has a body to parse, and none
		// is a JSON-RPC message: a parse error, denied even under audit
		// (l7/relay.rs:2261 l7_request_hard_deny_reason).
		{"", "GET https://mcp.example.com/mcp" + node, "deny", "not a JSON-RPC message"},
		// allow_all_known_mcp_methods (rego:509) allows any call but a
		// tools/call that a rule narrows by params.name: that one needs the rule.
		{"", "POST https://mcpall.example.com/mcp" + node + " rpc tools/list", "allow", "allow_all_known_mcp_methods"},
		{"", "POST https://mcpall.example.com/mcp" + node + " rpc tools/call tool search_web", "allow", "rules[0]"},
		{"", "POST https://mcpall.example.com/mcp" + node + " rpc tools/call tool delete_all", "deny", "no rule"},
		// SQL has no provider (l7/relay.rs:201 @ v0.0.83, :463 @ v0.0.111):
		// a lone sql endpoint relays TLS uninspected, whatever the command;
		// plaintext SQL is an unsupported tunnel protocol (proxy.rs:389).
		{"", "POST https://db.example.com:5432/" + node + " sql SELECT", "allow", "no SQL provider"},
		{"", "POST https://db.example.com:5432/" + node + " sql DROP", "allow", "no SQL provider"},
		{"", "POST http://db.example.com:5432/" + node + " sql SELECT", "deny", "unsupported tunnel protocol"},
		{"", "GET http://db.example.com:5432/x" + node, "allow", "no SQL provider"},
		// SQL bytes to a REST endpoint are not HTTP: refused.
		{"", "POST https://api.example.com/x" + gh + " sql SELECT", "deny", "cannot parse"},
		// An unknown protocol (v0.0.83 loads it) is not inspected (l7/mod.rs:35 @ v0.0.83).
		{"v0.0.83", "DELETE https://odd.example.com/x" + node, "allow", "without request inspection"},
		{"v0.0.83", "DELETE https://odd.example.com/a%2Fx" + node, "deny", "passthrough relay"},
		// tls: skip: no inspection (l7/mod.rs:181).
		{"", "DELETE https://skip.example.com/x" + node, "allow", "tls: skip"},
		{"", "DELETE https://skip.example.com/a%2Fx/../.." + node, "allow", "tls: skip"},
		// Trusted host gateway (proxy.rs:3643, :3448): a host alias on a
		// link-local address bypasses the SSRF tiers, never for metadata.
		{"", "GET http://host.openshell.internal:8080/x from /usr/bin/curl at 169.254.1.2", "allow", "without request inspection"},
		{"", "GET http://host.openshell.internal:8080/x from /usr/bin/curl at 169.254.169.254", "deny", "always blocked"},
		{"", "GET http://host.openshell.internal:8080/x from /usr/bin/curl at 127.0.0.1", "deny", "always blocked"},
		// Always blocked: only 0.0.0.0 itself is unspecified (net.rs:62).
		{"", "CONNECT 0.0.0.0:443" + node, "deny", "always blocked"},
		{"", "GET https://api.example.com/x/" + gh + " at 169.254.169.254", "deny", "always blocked"},
		{"", "GET https://api.example.com/x/" + gh + " at ::ffff:127.0.0.1", "deny", "always blocked"},
	}
	for _, c := range cases {
		name := c.req
		if c.version != "" {
			name = c.version + " " + name
		}
		t.Run(name, func(t *testing.T) {
			d, err := New(p, c.version)
			if err != nil {
				t.Fatal(err)
			}
			checkDecision(t, d, c.req, c.want, c.why)
		})
	}
}

func TestAlwaysBlockedIP(t *testing.T) {
	for s, want := range map[string]bool{
		"127.0.0.1": true, "127.255.0.1": true, "169.254.169.254": true, "0.0.0.0": true,
		"0.1.2.3": false, "::1": true, "::": true, "fe80::1": true, "::ffff:169.254.169.254": true,
		"::ffff:127.0.0.1": true, "::ffff:0.0.0.0": true, "10.0.0.1": false, "8.8.8.8": false,
		"fd00:ec2::254": false, "64:ff9b::a9fe:a9fe": false,
	} {
		if got := openshell.AlwaysBlockedIP(mustAddr(t, s)); got != want {
			t.Errorf("AlwaysBlockedIP(%s) = %v, want %v (net.rs:62 @ v0.0.111)", s, got, want)
		}
	}
}

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRelaxedBinaryIdentity: with binary identity relaxed (opa.rs:95 @
// v0.0.111) policies match any process (sandbox-policy.rego:143).
func TestRelaxedBinaryIdentity(t *testing.T) {
	p := decidePolicy(t)
	d, err := New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseRequest("GET https://api.github.com/repos/acme/widgets/issues/5 from /usr/bin/python3")
	if err != nil {
		t.Fatal(err)
	}
	if v := d.Decide(r).Verdict(); v != "deny" {
		t.Fatalf("required: %s, want deny", v)
	}
	if v := d.RelaxedBinaryIdentity().Decide(r).Verdict(); v != "allow" {
		t.Fatalf("relaxed: %s, want allow", v)
	}
}

// checkDecision decides req with d and checks the verdict, and that the
// reason or the deciding path mentions why; it returns the parsed request.
func checkDecision(t *testing.T, d *Decider, req, want, why string) *Request {
	t.Helper()
	r, err := ParseRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	got := d.Decide(r)
	if got.Verdict() != want {
		t.Fatalf("verdict %s (%s at %s), want %s", got.Verdict(), got.Reason, got.Path, want)
	}
	if !strings.Contains(got.Reason+" "+got.Path, why) {
		t.Errorf("reason %q / path %q does not mention %q", got.Reason, got.Path, why)
	}
	return r
}
