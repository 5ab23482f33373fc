package secretscan

import (
	"strings"
	"testing"
)

// benchComment is the forge proxy benchmark's comment (forge/bench_test.go).
var benchComment = strings.Repeat("This looks like a duplicate of #3. ", 25)

// benchProse is issue-like text full of the generic rules' keywords.
var benchProse = `Steps to reproduce: run the server with --token and the api key set in the environment. The password prompt appears, then it crashes with a secret key error. Expected: it starts. Version 1.2.3, commit abcdef0123456789abcdef0123456789abcdef01. The auth header is Bearer xyz.`

func BenchmarkFind(b *testing.B) {
	s := Default()
	key := fakeKeys()["anthropic"]
	for _, tc := range []struct{ name, text string }{
		{"comment", benchComment},
		{"prose", benchProse},
		{"comment-with-key", benchComment + key},
		{"newline-split-key", benchComment + key[:40] + "\n" + key[40:]},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			for b.Loop() {
				s.Find(tc.text)
			}
		})
	}
}

func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(Rules(), GlobalAllow()); err != nil {
			b.Fatal(err)
		}
	}
}
