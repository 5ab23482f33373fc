package decide

import (
	"fmt"
	"testing"
)

// BenchmarkDecide measures one policy-test decision.
func BenchmarkDecide(b *testing.B) {
	p := decidePolicy(b)
	r, err := ParseRequest("GET https://api.github.com/search/issues?q=repo:acme/widgets+x from /usr/bin/curl via /usr/bin/bash via /usr/bin/gh")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if d := Decide(p, r); !d.Allowed {
			b.Fatal(d.Reason)
		}
	}
}

// benchRequests are the request lines of the 10,000-request batch: a mix of
// allowed and denied REST calls, L4 connections and SSRF checks.
func benchRequests() []string {
	base := []string{
		"GET https://api.github.com/repos/acme/widgets/issues/%d from /usr/bin/gh",
		"POST https://api.github.com/repos/acme/widgets/issues/%d/comments from /usr/bin/gh",
		"GET https://api.github.com/search/issues?q=repo:acme/widgets+is:open&page=%d from /usr/bin/gh",
		"GET https://x%d.googleapis.com/v1/models from /usr/local/bin/claude",
		"CONNECT github.com:22 from /usr/bin/git via /usr/bin/ssh via /proc/%d",
		"DELETE https://api.github.com/repos/acme/widgets/git/refs/heads/fullsend/fix-%d from /usr/bin/gh",
		"GET http://host.docker.internal:8081/repos/%d from /usr/bin/curl at 172.17.0.1",
		"GET https://evil%d.example.com/ from /usr/bin/curl",
	}
	out := make([]string, 0, 10000)
	for i := 0; len(out) < 10000; i++ {
		out = append(out, fmt.Sprintf(base[i%len(base)], i))
	}
	return out
}

// BenchmarkDecideBatch10k parses and decides 10,000 requests against one
// policy, as `policy test --requests` does (target: under 0.5 s).
func BenchmarkDecideBatch10k(b *testing.B) {
	p := decidePolicy(b)
	lines := benchRequests()
	for b.Loop() {
		d, err := New(p, "")
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range lines {
			r, err := ParseRequest(s)
			if err != nil {
				b.Fatal(err)
			}
			_ = d.Decide(r)
		}
	}
}
