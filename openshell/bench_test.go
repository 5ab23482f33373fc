package openshell

import "testing"

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
