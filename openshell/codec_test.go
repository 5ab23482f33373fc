package openshell

import (
	"bytes"
	"testing"
)

func TestMarshalRoundTrip(t *testing.T) {
	p := &Policy{
		Version:          1,
		FilesystemPolicy: &FilesystemPolicy{IncludeWorkdir: true, ReadOnly: []string{"/usr"}, ReadWrite: []string{"/tmp"}},
		Landlock:         &Landlock{Compatibility: LandlockBestEffort},
		Process:          &Process{RunAsUser: "sandbox", RunAsGroup: "sandbox"},
		NetworkPolicies: map[string]NetworkPolicy{
			"github_api": {
				Name: "github-api",
				Endpoints: []Endpoint{{
					Host: "api.github.com", Port: 443, Protocol: ProtocolREST, Enforcement: EnforcementEnforce,
					Rules: []Rule{{Allow: Match{Method: "GET", Path: "/repos/o/r/**", Query: map[string]QueryMatch{
						"state": {Glob: "open"}, "labels": {Any: []string{"bug", "kind/*"}},
					}}}},
				}},
				Binaries: []Binary{{Path: "/usr/bin/gh"}},
			},
		},
	}
	a, err := Marshal(p, "generated")
	if err != nil {
		t.Fatal(err)
	}
	q, err := Unmarshal(a)
	if err != nil {
		t.Fatalf("unmarshal: %v\n%s", err, a)
	}
	b, err := Marshal(q, "generated")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("round trip changed bytes:\n%s\n---\n%s", a, b)
	}
}

func TestUnmarshalStrict(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"unknown top-level key", "version: 1\nbogus: true\n"},
		{"unknown endpoint key", "version: 1\nnetwork_policies:\n  a:\n    name: a\n    endpoints: [{host: x.example.com, port: 443, colour: red}]\n    binaries: []\n"},
		{"two documents", "version: 1\n---\nversion: 1\n"},
		{"empty", ""},
		{"bad query", "version: 1\nnetwork_policies:\n  a:\n    name: a\n    endpoints: [{host: x.example.com, port: 443, rules: [{allow: {method: GET, path: /, query: {q: {all: [x]}}}}]}]\n    binaries: []\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Unmarshal([]byte(tt.doc)); err == nil {
				t.Fatal("want error, got none")
			}
		})
	}
}
