package decide

import (
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
)

// routePolicies are small policies for the route-selection, forward-proxy
// and destination cases below, each loadable at the tags its cases name.
var routePolicies = map[string]string{
	// Two L7 endpoints on one host:port; the second has tls: skip and is
	// not the first extended config. v0.0.111 refuses the pair (the
	// ambiguity check wants tls to agree), v0.0.83 loads it.
	"skip-second": `
version: 1
network_policies:
  a_api:
    name: a_api
    endpoints:
      - {host: api.example.com, port: 443, path: "/api/**", protocol: rest, enforcement: enforce, access: read-only}
    binaries: [{path: /usr/bin/curl}]
  b_skip:
    name: b_skip
    endpoints:
      - {host: api.example.com, port: 443, path: "/skip/**", protocol: rest, tls: skip, access: read-only}
    binaries: [{path: /usr/bin/curl}]
`,
	// The first extended config carries only allowed_ips; the L7 endpoint
	// of a later policy still inspects the connection. v0.0.111 refuses the
	// pair (protocol and enforcement disagree), v0.0.83 loads it.
	"ips-first": `
version: 1
network_policies:
  a_ips:
    name: a_ips
    endpoints:
      - {host: svc.example.com, port: 443, allowed_ips: ["10.1.0.0/16"]}
    binaries: [{path: /usr/bin/curl}]
  b_l7:
    name: b_l7
    endpoints:
      - {host: svc.example.com, port: 443, allowed_ips: ["10.1.0.0/16"], protocol: rest, enforcement: enforce, rules: [{allow: {method: GET, path: /ok}}]}
    binaries: [{path: /usr/bin/curl}]
`,
	// Equal path specificity (4 non-'*' characters each): the last config in
	// policy-name order, then endpoint order, handles the request. v0.0.111
	// refuses overlapping path selectors whose enforcement disagrees, which
	// makes the choice unobservable there.
	"tie": `
version: 1
network_policies:
  a_enforce:
    name: a_enforce
    endpoints:
      - {host: tie.example.com, port: 443, path: "/v1/*", protocol: rest, enforcement: enforce, rules: [{allow: {method: GET, path: /never}}]}
    binaries: [{path: /usr/bin/curl}]
  b_audit:
    name: b_audit
    endpoints:
      - {host: tie.example.com, port: 443, path: "/v*/x", protocol: rest, enforcement: audit, rules: [{allow: {method: GET, path: /never}}]}
      - {host: tie.example.com, port: 443, path: "/w*/x", protocol: rest, enforcement: audit, rules: [{allow: {method: GET, path: /never}}]}
      - {host: tie.example.com, port: 443, path: "/w1/*", protocol: rest, enforcement: enforce, rules: [{allow: {method: GET, path: /never}}]}
    binaries: [{path: /usr/bin/curl}]
`,
	// Forward-proxy differences.
	"forward": `
version: 1
network_policies:
  skip:
    name: skip
    endpoints:
      - {host: skip.example.com, port: 80, protocol: rest, tls: skip, enforcement: enforce, rules: [{allow: {method: GET, path: /ok}}]}
    binaries: [{path: /usr/bin/curl}]
  audited:
    name: audited
    endpoints:
      - {host: audit.example.com, port: 80, path: "/api/**", protocol: rest, access: read-only}
    binaries: [{path: /usr/bin/curl}]
  search:
    name: search
    endpoints:
      - {host: search.example.com, port: 80, protocol: rest, enforcement: enforce, rules: [{allow: {method: GET, path: /search}}]}
    binaries: [{path: /usr/bin/curl}]
  l4:
    name: l4
    endpoints:
      - {host: l4.example.com, port: 80}
      - {host: l4.example.com, port: 443}
    binaries: [{path: /usr/bin/curl}]
  public:
    name: public
    endpoints:
      - {host: example.com, port: 80, allowed_ips: ["93.184.0.0/16"]}
    binaries: [{path: /usr/bin/curl}]
  db:
    name: db
    endpoints:
      - {host: db.example.com, port: 5432, protocol: sql, enforcement: audit, rules: [{allow: {command: SELECT}}]}
    binaries: [{path: /usr/bin/curl}]
`,
	// Parse errors on audit endpoints.
	"parse": `
version: 1
network_policies:
  gql:
    name: gql
    endpoints:
      - {host: gql.example.com, port: 443, protocol: graphql, enforcement: audit, rules: [{allow: {operation_type: query}}]}
      - {host: mcp.example.com, port: 443, protocol: mcp, enforcement: audit, rules: [{allow: {method: tools/list}}]}
    binaries: [{path: /usr/bin/node}]
`,
	// Destination modes (proxy/destination.rs build_validation_plan).
	"destination": `
version: 1
network_policies:
  wild:
    name: wild
    endpoints:
      - {host: "*.k8s.example.net", port: 6443}
      - {host: exact.example.net, port: 6443}
    binaries: [{path: /usr/bin/kubectl}]
  both_ports:
    name: both_ports
    endpoints:
      - {host: ports.example.net, port: 80, ports: [8080]}
    binaries: [{path: /usr/bin/curl}]
  badips:
    name: badips
    endpoints:
      - {host: bad.example.net, port: 443, allowed_ips: ["10.0.0.0/8", "not-an-ip"]}
      - {host: loop.example.net, port: 443, allowed_ips: ["10.0.0.0/8", "127.0.0.0/8"]}
    binaries: [{path: /usr/bin/curl}]
`,
}

func TestDecideRouteForwardDestination(t *testing.T) {
	const curl = " from /usr/bin/curl"
	both, v83 := []string{"v0.0.83", "v0.0.111"}, []string{"v0.0.83"}
	cases := []struct {
		policy   string
		versions []string
		req      string
		want     string
		why      string
	}{
		// 1. A tls: skip L7 config that is not the first takes part in route
		// selection (parse_l7_config keeps it, l7/mod.rs:164 @ v0.0.83):
		// /skip/** routes to b_skip, whose enforcement (audit) decides.
		{"skip-second", []string{"v0.0.83"}, "DELETE https://api.example.com/skip/x" + curl, "audit", "b_skip"},
		{"skip-second", []string{"v0.0.83"}, "GET https://api.example.com/skip/x" + curl, "allow", "b_skip.endpoints[0].access"},
		{"skip-second", []string{"v0.0.83"}, "DELETE https://api.example.com/api/x" + curl, "deny", "a_api"},
		// ... and with two configs, a path neither endpoint path matches is
		// refused by route selection whatever the enforcement.
		{"skip-second", []string{"v0.0.83"}, "GET https://api.example.com/other" + curl, "deny", "no L7 endpoint path matched"},
		// 1. The first extended config has only allowed_ips: the L7 config
		// of b_l7 still inspects (the route is every L7 config).
		{"ips-first", v83, "GET https://svc.example.com/ok" + curl, "allow", "b_l7.endpoints[0].rules[0]"},
		{"ips-first", v83, "GET https://svc.example.com/nope" + curl, "deny", "no rule"},
		{"ips-first", v83, "GET https://svc.example.com/ok" + curl + " at 10.2.0.1", "deny", "allowed_ips"},
		{"ips-first", v83, "CONNECT svc.example.com:443" + curl, "allow", "L7 rules of network_policies.b_l7"},
		// 1. Specificity ties: max_by_key keeps the last, in policy-name and
		// then endpoint order.
		{"tie", v83, "GET https://tie.example.com/v1/x" + curl, "audit", "b_audit"},
		{"tie", v83, "GET https://tie.example.com/w1/x" + curl, "deny", "b_audit"},
		{"tie", v83, "GET https://tie.example.com/v1/y" + curl, "deny", "a_enforce"},
		// 2. Forward proxy: tls is not consulted, so a tls: skip endpoint is
		// inspected; inside a CONNECT tunnel it is relayed raw.
		{"forward", both, "forward GET http://skip.example.com/nope" + curl, "deny", "no rule"},
		{"forward", both, "forward GET http://skip.example.com/ok" + curl, "allow", "forward proxy"},
		{"forward", both, "GET http://skip.example.com/nope" + curl, "allow", "tls: skip"},
		// 2. Forward proxy: always routed by endpoint path, refused even
		// under audit when none matches.
		{"forward", both, "forward POST http://audit.example.com/api/x" + curl, "audit", "audited"},
		{"forward", both, "forward GET http://audit.example.com/other" + curl, "deny", "did not match an L7 endpoint path"},
		{"forward", both, "GET http://audit.example.com/other" + curl, "audit", "audited"},
		// 2. Forward proxy: an undecodable query is evaluated as no query.
		{"forward", both, "forward GET http://search.example.com/search?q=%zz" + curl, "allow", "forward proxy"},
		{"forward", both, "GET http://search.example.com/search?q=%zz" + curl, "deny", "query"},
		// 2. Forward proxy: v0.0.111 canonicalises even without L7.
		{"forward", []string{"v0.0.111"}, "forward GET http://l4.example.com/../etc" + curl, "deny", "400"},
		{"forward", []string{"v0.0.83"}, "forward GET http://l4.example.com/../etc" + curl, "allow", "L4"},
		{"forward", both, "forward GET http://l4.example.com/a/b" + curl, "allow", "L4"},
		// 2. Forward proxy: schemes. https is always refused; v0.0.111
		// refuses every scheme but http, v0.0.83 forwards them as HTTP to
		// port 80 (wss included).
		{"forward", both, "forward GET https://l4.example.com/" + curl, "deny", "use CONNECT"},
		{"forward", []string{"v0.0.111"}, "forward GET ftp://l4.example.com/" + curl, "deny", "must use http"},
		{"forward", []string{"v0.0.83"}, "forward GET ftp://l4.example.com/" + curl, "allow", "L4"},
		{"forward", []string{"v0.0.83"}, "forward GET wss://l4.example.com/" + curl, "allow", "L4"},
		// 2. Forward proxy: no private-only rule; public addresses inside
		// allowed_ips pass (test_forward_proxy_public_ip_denied's docstring
		// notwithstanding).
		{"forward", both, "forward GET http://example.com/" + curl + " at 93.184.215.14", "allow", "L4"},
		{"forward", both, "forward GET http://example.com/" + curl + " at 23.192.228.80", "deny", "allowed_ips"},
		// 2/3. A lone sql endpoint relays a tunnel uninspected (no SQL
		// provider), but a forward-proxy request is evaluated by Rego, which
		// has no command to match: audited.
		{"forward", both, "GET http://db.example.com:5432/x" + curl, "allow", "no SQL provider"},
		{"forward", both, "forward GET http://db.example.com:5432/x" + curl, "audit", "audited"},
		// 3. A request the route's parser cannot read is denied even under
		// audit: no GraphQL operation, a method GraphQL does not carry, a
		// body that is not JSON-RPC.
		{"parse", both, "POST https://gql.example.com/graphql from /usr/bin/node graphql mutation", "audit", "audited"},
		{"parse", both, "POST https://gql.example.com/graphql from /usr/bin/node", "deny", "no GraphQL operation"},
		{"parse", both, "PUT https://gql.example.com/graphql from /usr/bin/node graphql query", "deny", "unsupported GraphQL HTTP method PUT"},
		{"parse", both, "forward POST http://gql.example.com:443/graphql from /usr/bin/node", "deny", "no GraphQL operation"},
		{"parse", both, "POST https://mcp.example.com/mcp from /usr/bin/node rpc tools/call", "audit", "audited"},
		{"parse", both, "POST https://mcp.example.com/mcp from /usr/bin/node", "deny", "not a JSON-RPC message"},
		{"parse", both, "POST https://mcp.example.com/mcp from /usr/bin/node frame stream", "deny", "not a JSON-RPC message"},
		// 3. Control-plane ports: refused for exact hosts, allowed_ips and IP
		// literals; a wildcard host resolving to a public address is not
		// checked (reject_internal_resolved_addrs).
		{"destination", both, "CONNECT api.k8s.example.net:6443 from /usr/bin/kubectl", "allow", "L4"},
		{"destination", both, "CONNECT api.k8s.example.net:6443 from /usr/bin/kubectl at 8.8.8.8", "allow", "L4"},
		{"destination", both, "CONNECT api.k8s.example.net:6443 from /usr/bin/kubectl at 10.0.0.1", "deny", "private address"},
		{"destination", both, "CONNECT exact.example.net:6443 from /usr/bin/kubectl", "deny", "control-plane"},
		// 3. port beside ports is dropped by the protobuf-to-Rego conversion.
		{"destination", both, "CONNECT ports.example.net:8080" + curl, "allow", "L4"},
		{"destination", both, "CONNECT ports.example.net:80" + curl, "deny", "no network policy allows"},
		// 3. allowed_ips with a malformed or always-blocked entry refuse
		// every connection (parse_allowed_ips), even to a covered address.
		{"destination", both, "CONNECT bad.example.net:443" + curl + " at 10.1.2.3", "deny", "not-an-ip"},
		{"destination", both, "CONNECT bad.example.net:443" + curl, "deny", "malformed"},
		{"destination", both, "CONNECT loop.example.net:443" + curl + " at 10.1.2.3", "deny", "127.0.0.0/8"},
	}
	deciders := map[string]*Decider{}
	for _, c := range cases {
		for _, v := range c.versions {
			key := c.policy + "@" + v
			d, ok := deciders[key]
			if !ok {
				d = routeDecider(t, c.policy, v)
				deciders[key] = d
			}
			t.Run(v+"/"+c.req, func(t *testing.T) {
				checkDecision(t, d, c.req, c.want, c.why)
			})
		}
	}
}

// routeDecider builds a Decider for routePolicies[name] at version v,
// failing when OpenShell v would refuse to load the policy.
func routeDecider(t *testing.T, name, v string) *Decider {
	t.Helper()
	p, err := openshell.Unmarshal([]byte(routePolicies[name]))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, d := range validate.Policy(p, v) {
		if d.Severity == openshell.SeverityError {
			t.Fatalf("policy %s does not load at %s: %s", name, v, d)
		}
	}
	d, err := New(p, v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRouteV83OnlyPolicies pins why the skip-second, ips-first and tie cases
// run at v0.0.83 only: v0.0.111's ambiguity check refuses endpoints on one
// host:port whose tls, protocol or enforcement disagree.
func TestRouteV83OnlyPolicies(t *testing.T) {
	for _, name := range []string{"skip-second", "ips-first", "tie"} {
		p, err := openshell.Unmarshal([]byte(routePolicies[name]))
		if err != nil {
			t.Fatal(err)
		}
		refused := false
		for _, d := range validate.Policy(p, "v0.0.111") {
			refused = refused || d.Severity == openshell.SeverityError && d.Code == validate.CodeAmbiguousEndpoints
		}
		if !refused {
			t.Errorf("%s loads at v0.0.111; run its cases there too", name)
		}
	}
}

// TestUpstreamForwardFixturesLoad: the policies transcribed for the
// forward-proxy upstream cases load at the tags they cite.
func TestUpstreamForwardFixturesLoad(t *testing.T) {
	for _, fx := range readUpstreamFixtures(t, upstreamFile(t, "forward.yaml")) {
		p, err := openshell.Unmarshal([]byte(fx.Policy))
		if err != nil {
			t.Fatalf("%s: %v", fx.Data, err)
		}
		for _, v := range openshell.SupportedVersions() {
			for _, d := range validate.Policy(p, v) {
				if d.Severity == openshell.SeverityError {
					t.Errorf("%s does not load at %s: %s", fx.Data, v, d)
				}
			}
		}
	}
}
