package openshell

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

// TestUnmarshalV0111Fields: every field of OpenShell v0.0.111's policy file
// (crates/openshell-policy/src/lib.rs:55-397 and middleware.rs:23-50 @
// v0.0.111) decodes into the model and survives a Marshal round trip, and
// Clone shares nothing with its source. The document follows the shape of
// OpenShell's own round_trip_preserves_network_middlewares test
// (lib.rs:1763 @ v0.0.111) and its MCP conformance policy template.
func TestUnmarshalV0111Fields(t *testing.T) {
	const doc = `version: 1
network_policies:
  mcp:
    name: mcp
    endpoints:
      - host: mcp.example.com
        path: /mcp
        port: 443
        protocol: mcp
        enforcement: enforce
        rules:
          - allow:
              method: tools/call
              tool: {any: [search, fetch]}
              params:
                arguments:
                  repo: "org/*"
                limit: "1*"
        deny_rules:
          - method: tools/call
            tool: delete_*
        mcp:
          max_body_bytes: 65536
          strict_tool_names: true
          allow_all_known_mcp_methods: false
        credential_binding:
          provider: github
      - host: api.github.com
        path: /graphql
        port: 443
        protocol: graphql
        persisted_queries: allow_registered
        graphql_persisted_queries:
          abc123:
            operation_type: query
            operation_name: Viewer
            fields: [viewer]
        graphql_max_body_bytes: 1024
        allow_encoded_slash: true
        rules:
          - allow:
              operation_type: query
              fields: [repository, viewer]
    binaries:
      - path: /usr/bin/gh
        harness: true
network_middlewares:
  global-redactor:
    name: redactor
    middleware: redact
    order: 10
    on_error: fail_closed
    config:
      patterns: [secret, token]
      nested: {depth: 2}
    endpoints:
      include: ["*.example.com"]
      exclude: [internal.example.com]
`
	p, err := Unmarshal([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	ep := p.NetworkPolicies["mcp"].Endpoints[0]
	if ep.Path != "/mcp" || ep.MCP == nil || ep.MCP.StrictToolNames == nil || !*ep.MCP.StrictToolNames {
		t.Errorf("endpoint path/mcp not decoded: %+v", ep)
	}
	allow := ep.Rules[0].Allow
	if allow.Tool == nil || len(allow.Tool.Any) != 2 {
		t.Errorf("tool matcher not decoded: %+v", allow.Tool)
	}
	if m := allow.Params["arguments"]; m.Matcher != nil || m.Object["repo"].Matcher == nil || m.Object["repo"].Matcher.Glob != "org/*" {
		t.Errorf("nested params not decoded as an object: %+v", m)
	}
	if m := allow.Params["limit"]; m.Matcher == nil || m.Matcher.Glob != "1*" {
		t.Errorf("scalar param not decoded as a matcher: %+v", m)
	}
	mw := p.NetworkMiddlewares["global-redactor"]
	if mw.Order != 10 || mw.Endpoints == nil || len(mw.Endpoints.Include) != 1 {
		t.Errorf("middleware not decoded: %+v", mw)
	}

	out, err := Marshal(p, "")
	if err != nil {
		t.Fatal(err)
	}
	again, err := Unmarshal(out)
	if err != nil {
		t.Fatalf("re-decoding our own output: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(stripHarness(again), stripHarness(p)) {
		t.Errorf("round trip changed the policy:\n%s", out)
	}
	if bytes.Contains(out, []byte("harness")) {
		t.Errorf("harness is never serialized by OpenShell (lib.rs:394 @ v0.0.111), got:\n%s", out)
	}

	cp := p.Clone()
	cp.NetworkPolicies["mcp"].Endpoints[0].Rules[0].Allow.Params["arguments"].Object["repo"].Matcher.Glob = "changed"
	*cp.NetworkPolicies["mcp"].Endpoints[0].MCP.StrictToolNames = false
	cp.NetworkMiddlewares["global-redactor"].Config["nested"].(map[string]any)["depth"] = 3
	cp.NetworkMiddlewares["global-redactor"].Endpoints.Include[0] = "changed"
	if !reflect.DeepEqual(stripHarness(again), stripHarness(p)) {
		t.Error("mutating a Clone changed its source")
	}
}

// stripHarness clears the one field OpenShell reads but never writes.
func stripHarness(p *Policy) *Policy {
	p = p.Clone()
	for k, np := range p.NetworkPolicies {
		bins := append([]Binary(nil), np.Binaries...)
		for i := range bins {
			bins[i].Harness = false
		}
		np.Binaries = bins
		p.NetworkPolicies[k] = np
	}
	return p
}

// TestMarshalDecodesToSamePolicy encodes every policy file in the repository's test
// data (compiled goldens, hand-written fragments, the lint corpus, the
// decision tests' policies) and decodes the result: it must be the
// same policy (Difference), which is the invariant the compiler checks on
// every file it writes.
func TestMarshalDecodesToSamePolicy(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../testdata/*/policies/*.yaml", "../compile/testdata/*/*.yaml",
		"../compile/testdata/*/*/*.yaml", "../lint/testdata/*/*.yaml", "decide/testdata/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	policies := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Unmarshal(data)
		if err != nil {
			continue // not a policy, or a deliberately broken one
		}
		policies++
		out, err := Marshal(p, "header")
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		back, err := Unmarshal(out)
		if err != nil {
			t.Fatalf("%s: the encoded policy does not decode: %v\n%s", f, err, out)
		}
		if d := Difference(p, back); d != "" {
			t.Errorf("%s: the encoded policy decodes to another one at %s", f, d)
		}
	}
	if policies < 50 {
		t.Fatalf("found %d policies in the test data; the globs are stale", policies)
	}
}

// BenchmarkMarshal encodes a compiled-shape policy with Marshal.
func BenchmarkMarshal(b *testing.B) {
	data, err := os.ReadFile("../testdata/triage/policies/completeness-assessor.yaml")
	if err != nil {
		b.Fatal(err)
	}
	p, err := Unmarshal(data)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(p, "header"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestUnmarshalRepeatedKeys: OpenShell loads a policy whose map field
// repeats a key and keeps the last entry (policy validate calls it a trap);
// a repeated struct field or a repeat inside a middleware's config refuses
// the file, as serde does.
func TestUnmarshalRepeatedKeys(t *testing.T) {
	data, err := os.ReadFile("validate/testdata/invalid/duplicate_policy_key.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Unmarshal(data)
	if err != nil {
		t.Fatalf("a repeated network policy name: %v", err)
	}
	if np := p.NetworkPolicies["github"]; np.Name != "github-write" || len(p.NetworkPolicies) != 1 {
		t.Errorf("want the last entry (github-write), got %+v", p.NetworkPolicies)
	}
	const base = "version: 1\nnetwork_policies:\n  a:\n    name: a\n    endpoints:\n      - host: h.example\n        port: 443\n        protocol: rest\n        rules:\n          - allow:\n              method: GET\n              path: /x\n              query:\n                q: one\n                q: two\n    binaries: [{path: /usr/bin/curl}]\n"
	p, err = Unmarshal([]byte(base))
	if err != nil {
		t.Fatalf("a repeated query key: %v", err)
	}
	if got := p.NetworkPolicies["a"].Endpoints[0].Rules[0].Allow.Query["q"].Glob; got != "two" {
		t.Errorf("query q = %q, want the last (two)", got)
	}
	for name, doc := range map[string]string{
		"repeated struct field": "version: 1\nversion: 1\n",
		"repeated port":         "version: 1\nnetwork_policies:\n  a:\n    name: a\n    endpoints: [{host: h.example, port: 443, port: 80}]\n    binaries: [{path: /usr/bin/curl}]\n",
		"repeat in config":      "version: 1\nnetwork_middlewares:\n  m:\n    middleware: x\n    config: {k: 1, k: 2}\n",
	} {
		if _, err := Unmarshal([]byte(doc)); err == nil || !strings.Contains(err.Error(), "already defined") {
			t.Errorf("%s: err = %v, want the repeat refused", name, err)
		}
	}
}
