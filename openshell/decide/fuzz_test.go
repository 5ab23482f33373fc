package decide

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// FuzzParseRequest: the request syntax never panics, and what it accepts
// renders back to a request that parses to the same thing.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		"GET https://api.github.com/repos/o/r/issues/5 from /usr/bin/gh",
		"POST http://host.docker.internal:8081/x?a=1&a=2 from /usr/bin/curl via /bin/bash at 172.17.0.1",
		"CONNECT [::1]:22 from /usr/bin/ssh",
		"get wss://x.example:9/%2e%2e/a;b from /a via /b via /c",
		"POST https://gw.example.com/graphql from /usr/bin/node graphql query:Q:a,b graphql mutation",
		"POST https://mcp.example.com/mcp from /usr/bin/node rpc tools/call tool search_web frame response",
		"POST https://db.example.com:5432/ from /usr/bin/node sql SELECT at 10.0.0.1",
		"WEBSOCKET_TEXT wss://ws.example.com/socket from /usr/bin/node",
		"forward GET http://10.0.0.5:8080/x?q=%zz from /usr/bin/curl at 10.0.0.5",
		"FORWARD post FTP://Api.Example.com/a;b from /b rpc tools/call tool t",
		"forward GET wss://h.example/ from /b frame stream",
		"forward GET https://h.example:443/ from /b",
		"CONNECT api.example.com:443 from /usr/bin/curl credentialed github credentialed l4",
		"GET https://registry.npmjs.org/@acme%2Fwidgets?x=%zz from /usr/bin/npm credentialed raw",
		"POST https://api.example.com/ from /usr/bin/curl sql SELECT",
	} {
		f.Add(s)
	}
	d1, err := New(decidePolicy(f), "")
	if err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile("testdata/classes.yaml")
	if err != nil {
		f.Fatal(err)
	}
	p2, err := openshell.Unmarshal(data)
	if err != nil {
		f.Fatal(err)
	}
	d2, err := New(p2, "v0.0.83")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRequest(s)
		if err != nil {
			return
		}
		// Must not panic on anything the parser accepts.
		_, _ = d1.Decide(r), d2.Decide(r)
		if r.Forward && (r.Method == "" || r.Method == "WEBSOCKET_TEXT" || r.Command != "") {
			t.Fatalf("accepted forward-proxy request %q is not one plain HTTP request", s)
		}
		again, err := ParseRequest(r.String())
		if err != nil {
			t.Fatalf("String() %q of accepted %q does not parse: %v", r.String(), s, err)
		}
		if again.String() != r.String() {
			t.Fatalf("round trip changed %q to %q", r.String(), again.String())
		}
	})
}

// FuzzParseExpectFile: expectation files never panic the parser, and every
// accepted case carries a parsed request and a known verdict.
func FuzzParseExpectFile(f *testing.F) {
	f.Add([]byte(expectOK))
	f.Add([]byte("agent: a\ntests:\n  - {request: 'CONNECT h:1 from /b', expect: audit}\n"))
	f.Add([]byte("agent: a\nset: {HOST_IP: 10.0.0.1}\ntests: [{}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := ParseExpectFile("f.policytest.yaml", data)
		if err != nil {
			// Every problem is an ExpectFileError, in line order.
			var many ExpectFileErrors
			if !errors.Is(err, ErrExpectFile) || (errors.As(err, &many) && !slices.IsSortedFunc(many, func(a, b *ExpectFileError) int { return a.Line - b.Line })) {
				t.Fatalf("error %v", err)
			}
			return
		}
		for _, c := range ef.Tests {
			if c.Request == nil || (c.Expect != "allow" && c.Expect != "deny" && c.Expect != "audit") {
				t.Fatalf("accepted case %+v", c)
			}
		}
	})
}

// FuzzCanonicalPath: v0.0.111 canonical paths are absolute, without empty
// or dot segments (percent-decoding runs once, so they need not be fixed
// points), and canonicalising is idempotent on them.
func FuzzCanonicalPath(f *testing.F) {
	for _, s := range []string{"/a/../b", "/a//b/./c;x=1/", "/%2e%2e/x", "/a%2Fb", "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := canonicalRequestPath(s, false, "v0.0.111")
		if err != nil {
			return
		}
		if again, err := canonicalRequestPath(c, false, "v0.0.111"); err != nil && !strings.Contains(c, "%") {
			t.Fatalf("canonical %q of %q is rejected: %v", c, s, err)
		} else if err == nil && !strings.Contains(c, "%") && again != c {
			t.Fatalf("canonical %q of %q canonicalises to %q", c, s, again)
		}
		if c == "" || c[0] != '/' {
			t.Fatalf("canonicalPath(%q) = %q, not absolute", s, c)
		}
		for i, seg := range strings.Split(strings.TrimSuffix(c[1:], "/"), "/") {
			if (seg == "" && c != "/") || seg == "." || seg == ".." {
				t.Fatalf("canonicalPath(%q) = %q has segment %d %q", s, c, i, seg)
			}
		}
	})
}
