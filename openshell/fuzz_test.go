package openshell

import (
	"strings"
	"testing"
)

// FuzzParseRequest: the request syntax never panics, and what it accepts
// renders back to a request that parses to the same thing.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		"GET https://api.github.com/repos/o/r/issues/5 from /usr/bin/gh",
		"POST http://host.docker.internal:8081/x?a=1&a=2 from /usr/bin/curl via /bin/bash at 172.17.0.1",
		"CONNECT [::1]:22 from /usr/bin/ssh",
		"get wss://x.example:9/%2e%2e/a;b from /a via /b via /c",
		"POST https://api.github.com/graphql graphql query/IssueByNumber:repository graphql mutation:addComment,x from /usr/bin/gh",
	} {
		f.Add(s)
	}
	p := decidePolicy(f)
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRequest(s)
		if err != nil {
			return
		}
		_ = Decide(p, r) // must not panic on anything the parser accepts
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
			return
		}
		for _, c := range ef.Tests {
			if c.Request == nil || (c.Expect != "allow" && c.Expect != "deny" && c.Expect != "audit") {
				t.Fatalf("accepted case %+v", c)
			}
		}
	})
}

// FuzzCanonicalPath: canonical paths are absolute, without empty or dot
// segments (percent-decoding runs once, so they need not be fixed points).
func FuzzCanonicalPath(f *testing.F) {
	for _, s := range []string{"/a/../b", "/a//b/./c;x=1/", "/%2e%2e/x", "/a%2Fb", "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := canonicalPath(s)
		if err != nil {
			return
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
