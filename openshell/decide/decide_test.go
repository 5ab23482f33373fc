package decide

import (
	"os"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

func decidePolicy(t testing.TB) *openshell.Policy {
	t.Helper()
	data, err := os.ReadFile("testdata/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := openshell.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDecide is the table of OpenShell decisions: verdict, and a fragment of
// the reason or deciding path.
func TestDecide(t *testing.T) {
	p := decidePolicy(t)
	const gh = " from /usr/bin/gh"
	const issues = "GET https://api.github.com/repos/acme/widgets/issues"
	cases := []struct {
		req, want, why string
	}{
		// Exact rules, ** across segments, GET -> HEAD.
		{issues + "/5" + gh, "allow", "rules[0]"},
		{issues + "/5/comments" + gh, "allow", "rules[0]"},
		{issues + gh, "deny", "no rule"},
		{"HEAD https://api.github.com/repos/acme/widgets/issues/5" + gh, "allow", "rules[0]"},
		{"OPTIONS https://api.github.com/repos/acme/widgets/issues/5" + gh, "deny", "no rule"},
		{"get https://API.GITHUB.COM/repos/acme/widgets/issues/7" + gh, "allow", "rules[0]"},
		// The root dot stays (proxy.rs:6106 parse_target): no policy host matches.
		{"get https://API.GITHUB.COM./repos/acme/widgets/issues/7" + gh, "deny", "no network policy"},
		{"GET https://api.github.com/repos/acme/other/issues/5" + gh, "deny", "no rule"},
		{"GET https://api.github.com/repos/acme/widgets/pulls/5" + gh, "deny", "no rule"},
		// The orchestrator may comment on its own issue only.
		{"POST https://api.github.com/repos/acme/widgets/issues/5/comments" + gh, "allow", "rules[1]"},
		{"POST https://api.github.com/repos/acme/widgets/issues/6/comments" + gh, "deny", "no rule"},
		{"POST https://api.github.com/repos/acme/widgets/issues/55/comments" + gh, "deny", "no rule"},
		{"PATCH https://api.github.com/repos/acme/widgets/issues/5/comments" + gh, "deny", "no rule"},
		{"DELETE https://api.github.com/repos/acme/widgets/issues/5/comments" + gh, "deny", "no rule"},
		{"POST https://api.github.com/repos/acme/widgets/issues/5/comments/" + gh, "deny", "no rule"},
		// Query globs, {any: [...]}, repeated parameters.
		{"GET https://api.github.com/search/issues?q=repo:acme/widgets+is:open" + gh, "allow", "rules[2]"},
		{"GET https://api.github.com/search/issues?q=repo:evil/x" + gh, "deny", "no rule"},
		{"GET https://api.github.com/search/issues" + gh, "deny", "no rule"},
		{"GET https://api.github.com/search/issues?q=repo:acme/widgets+x&q=repo:evil/x+y" + gh, "deny", "no rule"},
		{"GET https://api.github.com/search/issues?q=repo:acme/widgets+x&page=2" + gh, "allow", "rules[2]"},
		{"GET https://api.github.com/repos/acme/widgets/labels?per_page=100" + gh, "allow", "rules[3]"},
		{"GET https://api.github.com/repos/acme/widgets/labels?per_page=10" + gh, "allow", "rules[3]"},
		{"GET https://api.github.com/repos/acme/widgets/labels?per_page=50" + gh, "deny", "no rule"},
		// Method "*" and single-segment "*".
		{"DELETE https://api.github.com/repos/acme/widgets/git/refs/heads/fullsend/fix-1" + gh, "allow", "rules[4]"},
		{"PUT https://api.github.com/repos/acme/widgets/git/refs/heads/fullsend/fix-1" + gh, "allow", "rules[4]"},
		{"DELETE https://api.github.com/repos/acme/widgets/git/refs/heads/fullsend/a/b" + gh, "deny", "no rule"},
		{"DELETE https://api.github.com/repos/acme/widgets/git/refs/heads/main" + gh, "deny", "no rule"},
		// deny_rules win over allow rules.
		{"PUT https://api.github.com/repos/acme/widgets/issues/5/lock" + gh, "deny", "deny_rules[0]"},
		{issues + "/5/lock" + gh, "deny", "deny_rules[0]"},
		// Binaries: process and ancestors.
		{issues + "/5 from /usr/bin/curl", "deny", "allows binary"},
		{issues + "/5 from /usr/bin/python3 via /usr/bin/gh", "allow", "rules[0]"},
		{issues + "/5 from /usr/bin/curl via /usr/bin/bash via /usr/bin/gh", "allow", "rules[0]"},
		{issues + "/5 from /usr/bin/curl via /usr/bin/bash", "deny", "allows binary"},
		{issues + "/5 from /usr/bin/ghx", "deny", "allows binary"},
		// Access presets: read-write has no DELETE.
		{"POST https://uploads.github.com/x" + gh, "allow", "access"},
		{"PUT https://uploads.github.com:8443/x" + gh, "allow", "access"},
		{"PATCH https://uploads.github.com/x" + gh, "allow", "access"},
		{"DELETE https://uploads.github.com/x" + gh, "deny", "no rule"},
		{"GET https://uploads.github.com:444/x" + gh, "deny", "no network policy allows"},
		// Host globs: * one label, ** one or more, never the apex.
		{"GET https://aiplatform.googleapis.com/v1/models from /usr/local/bin/claude", "allow", "read-only"},
		{"GET https://a.b.googleapis.com/v1 from /usr/local/bin/claude", "deny", "no network policy"},
		{"GET https://googleapis.com/v1 from /usr/local/bin/claude", "deny", "no network policy"},
		{"POST https://aiplatform.googleapis.com/v1/x from /usr/local/bin/claude", "deny", "no rule"},
		{"GET https://us-docker.pkg.dev/v2/ from /usr/local/bin/claude", "allow", "read-only"},
		{"GET https://a.b.c.pkg.dev/v2/ from /usr/local/bin/claude", "allow", "read-only"},
		{"GET https://pkg.dev/v2/ from /usr/local/bin/claude", "deny", "no network policy"},
		{"GET https://evilpkg.dev/ from /usr/local/bin/claude", "deny", "no network policy"},
		// Binary globs: ** crosses /, * does not.
		{"GET https://x.googleapis.com/ from /opt/tools/bin/deep/tool", "allow", "read-only"},
		{"GET https://pypi.org/simple/ from /usr/bin/pip3", "allow", "read-only"},
		{"GET https://pypi.org/simple/ from /usr/bin/pipx/sub", "deny", "allows binary"},
		// Audit enforcement: denied requests are allowed and reported.
		{"POST https://pypi.org/legacy/ from /usr/bin/pip", "audit", "audited"},
		// SSRF guard and private addresses.
		{"CONNECT 169.254.169.254:80 from /usr/bin/curl", "deny", "SSRF"},
		{"GET http://169.254.169.254/latest/meta-data/ from /usr/bin/gh", "deny", "SSRF"},
		{"GET http://127.0.0.1:8081/ from /usr/bin/curl", "deny", "SSRF"},
		{"GET http://[::1]:8081/ from /usr/bin/curl", "deny", "SSRF"},
		{"GET http://0.0.0.0:8081/ from /usr/bin/curl", "deny", "SSRF"},
		{"GET https://api.github.com/repos/acme/widgets/issues/5 from /usr/bin/gh at 169.254.169.254", "deny", "SSRF"},
		{"GET http://host.docker.internal:8081/repos from /usr/bin/curl at 172.17.0.1", "allow", "read-only"},
		{"GET http://host.docker.internal:8081/repos from /usr/bin/curl at 172.17.0.2", "deny", "private address"},
		{"GET http://host.docker.internal:8081/repos from /usr/bin/curl", "allow", "read-only"},
		{"POST http://host.docker.internal:8081/repos from /usr/bin/curl", "deny", "no rule"},
		{"CONNECT 10.0.0.7:5432 from /usr/bin/curl", "allow", "L4"},
		{"CONNECT 10.0.0.8:5432 from /usr/bin/curl", "deny", "no network policy"},
		// L4 endpoints: the whole connection, any request.
		{"CONNECT github.com:22 from /usr/bin/ssh", "allow", "L4"},
		{"CONNECT github.com:22 from /usr/bin/git via /usr/bin/ssh", "allow", "L4"},
		{"DELETE https://registry.npmjs.org/anything from /usr/bin/npm", "allow", "L4"},
		{"CONNECT github.com:443 from /usr/bin/ssh", "deny", "no network policy"},
		// ... parsed by the passthrough relay with strict canonicalisation
		// (l7/relay.rs:2614 relay_passthrough_with_credentials @ v0.0.111):
		// npm's scoped-package URL carries %2F and is refused, with or
		// without credentials; dot segments resolve unless they climb.
		{"GET https://registry.npmjs.org/@acme%2Fwidgets from /usr/bin/npm", "deny", "encoded slash"},
		{"GET https://registry.npmjs.org/../etc/passwd from /usr/bin/npm", "deny", "climbs"},
		{"GET https://registry.npmjs.org/a/%2e%2e/%2e%2e/b from /usr/bin/npm", "deny", "passthrough relay"},
		{"GET https://registry.npmjs.org/a/../b/./c from /usr/bin/npm", "allow", "L4"},
		{"GET https://registry.npmjs.org/x?q=%zz from /usr/bin/npm", "deny", "query"},
		{"CONNECT registry.npmjs.org:443 from /usr/bin/npm", "allow", "L4"},
		// Control-plane ports are refused for an exact declared host, even
		// when listed; an unlisted port is refused by the L4 decision first.
		{"CONNECT db.internal:6443 from /usr/bin/ssh", "deny", "control-plane"},
		{"CONNECT api.github.com:10250 from /usr/bin/gh", "deny", "no network policy allows"},
		// A bare connection to an L7 endpoint is allowed; requests are checked.
		{"CONNECT api.github.com:443 from /usr/bin/gh", "allow", "connection is allowed"},
		// Paths are canonicalized first, as OpenShell's L7 parser does.
		{"GET https://api.github.com/repos//acme/widgets/./issues/5" + gh, "allow", "rules[0]"},
		{"GET https://api.github.com/repos/acme/widgets/issues/5/%2e%2e/%2e%2e/pulls/1" + gh, "deny", "no rule of endpoint api.github.com allows GET /repos/acme/widgets/pulls/1"},
		{"GET https://api.github.com/repos/acme/widgets/issues/..%2F..%2Fpulls" + gh, "deny", "encoded slash"},
		{"GET https://api.github.com/../../etc" + gh, "deny", "climbs"},
		{"HEAD https://api.github.com/repos/acme/widgets/issues/5/lock" + gh, "deny", "deny_rules[0]"},
		// Unknown hosts.
		{"GET https://example.com/ from /usr/bin/gh", "deny", "no network policy allows example.com:443"},
	}
	if len(cases) < 60 {
		t.Fatalf("%d cases, want at least 60", len(cases))
	}
	for _, c := range cases {
		t.Run(c.req, func(t *testing.T) {
			r, err := ParseRequest(c.req)
			if err != nil {
				t.Fatal(err)
			}
			d := Decide(p, r)
			if d.Verdict() != c.want {
				t.Fatalf("verdict %s (%s at %s), want %s", d.Verdict(), d.Reason, d.Path, c.want)
			}
			if !strings.Contains(d.Reason+" "+d.Path, c.why) && !strings.Contains(strings.ToUpper(d.Reason), strings.ToUpper(c.why)) {
				t.Errorf("reason %q / path %q does not mention %q", d.Reason, d.Path, c.why)
			}
		})
	}
}

func TestParseRequestErrors(t *testing.T) {
	for _, s := range []string{
		"", "GET", "GET https://x.com/", "GET https://x.com/ from gh", "FETCH https://x.com/ from /usr/bin/gh",
		"GET ftp://x.com/ from /usr/bin/gh", "GET https://u:p@x.com/ from /usr/bin/gh", "GET https://x.com:0/ from /b",
		"GET https://x.com:70000/ from /b", "CONNECT x.com from /b", "GET https://x.com/ from /b via", "GET https://x.com/ from /b at nope",
		"GET https://x.com/ from /b from /c", "GET https://*.com/ from /b", "GET https://x.com/#frag from /b",
		"GET https://x.com/ from /b via rel", "GET https://x.com/ to /b",
		"forward", "forward GET http://x.com/", "forward CONNECT x.com:80 from /b", "forward WEBSOCKET_TEXT ws://x.com/ from /b",
		"forward GET http://x.com/ from /b sql SELECT", "forward forward GET http://x.com/ from /b", "forward GET x.com:80/a from /b",
		"forward GET ftp:///a from /b", "GET ftp://x.com/ from /b",
		"GET https://x.com/ from /b graphql fetch", "GET https://x.com/ from /b graphql persisted",
		"GET https://x.com/ from /b graphql persisted:", "GET https://x.com/ from /b graphql query:Q:a,,b",
		"GET https://x.com/ from /b credentialed p credentialed p", "GET https://x.com/ from /b rpc a rpc b",
		"GET https://x.com/ from /b frame bogus", "GET https://x.com/ from /b frame stream frame stream",
	} {
		if _, err := ParseRequest(s); err == nil {
			t.Errorf("ParseRequest(%q) succeeded, want an error", s)
		}
	}
}

func TestRequestStringRoundTrip(t *testing.T) {
	for _, s := range []string{
		"GET https://api.github.com/repos/o/r/issues/5 from /usr/bin/gh",
		"POST http://host.docker.internal:8081/x?a=1 from /usr/bin/curl via /usr/bin/bash at 172.17.0.1",
		"CONNECT github.com:22 from /usr/bin/ssh",
		"forward GET http://10.0.0.5:8080/status?a=1 from /usr/bin/curl",
		"forward POST ftp://x.com/a from /b rpc tools/call",
		"forward GET wss://x.com/ from /b",
		"forward GET https://x.com/ from /b",
	} {
		r, err := ParseRequest(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.String(); got != s {
			t.Errorf("String() = %q, want %q", got, s)
		}
	}
}

// TestParseForwardRequest: the forward prefix sets Forward, and the target
// takes parse_proxy_uri's default ports (443 for https, 80 for any other
// scheme, wss included), unlike a tunnelled URL.
func TestParseForwardRequest(t *testing.T) {
	for _, c := range []struct {
		req     string
		forward bool
		scheme  string
		port    int
	}{
		{"forward GET http://x.com/ from /b", true, "http", 80},
		{"Forward GET https://x.com/ from /b", true, "https", 443},
		{"forward GET wss://x.com/ from /b", true, "wss", 80},
		{"forward GET ftp://x.com/ from /b", true, "ftp", 80},
		{"forward GET http://x.com:8080/ from /b", true, "http", 8080},
		{"GET wss://x.com/ from /b", false, "wss", 443},
	} {
		r, err := ParseRequest(c.req)
		if err != nil {
			t.Fatalf("%s: %v", c.req, err)
		}
		if r.Forward != c.forward || r.Scheme != c.scheme || r.Port != c.port {
			t.Errorf("%s: forward %v scheme %s port %d, want %v %s %d", c.req, r.Forward, r.Scheme, r.Port, c.forward, c.scheme, c.port)
		}
	}
}
