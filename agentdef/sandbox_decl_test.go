package agentdef

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// TestSandboxDeclErrors checks each syntax rule of the sandbox block with
// its position and field.
func TestSandboxDeclErrors(t *testing.T) {
	const head = "---\nname: a\ndescription: d\ntools: Bash(curl *)\nsandbox:\n"
	tests := []struct {
		name, block, pos, field, msg string
	}{
		{"not a mapping", "  - tier", "6:3", "sandbox", "want a mapping or a policy file path, got a list"},
		{"unknown key", "  teir: full", "6:3", "sandbox.teir", `unknown field "teir"`},
		{"absolute policy file", "", "", "", ""},
		{"bad provider", "  provider: Vertex AI", "6:13", "sandbox.provider", `invalid name "Vertex AI"`},
		{"bad profile", "  profiles: [forge_read]", "6:14", "sandbox.profiles[0]", `invalid name "forge_read"`},
		{"endpoints not a list", "  endpoints: {host: x.io}", "6:14", "sandbox.endpoints", "want a list of endpoints"},
		{"missing host", "  endpoints:\n    - port: 443", "7:7", "sandbox.endpoints[0].host", "missing required field host"},
		{"upper-case host", "  endpoints:\n    - host: API.github.com", "7:13", "sandbox.endpoints[0].host", "upper-case"},
		{"trailing dot", "  endpoints:\n    - host: api.github.com.", "7:13", "sandbox.endpoints[0].host", "ends with a dot"},
		{"star host", "  endpoints:\n    - host: \"*\"", "7:13", "sandbox.endpoints[0].host", `invalid host "*"`},
		{"wildcard in later label", "  endpoints:\n    - host: api.*.com", "7:13", "sandbox.endpoints[0].host", "invalid host"},
		{"placeholder plus text", "  endpoints:\n    - host: \"{{FORGE_HOST}}.evil.io\"", "7:13", "sandbox.endpoints[0].host", "mixes a placeholder with text"},
		{"path placeholder as host", "  endpoints:\n    - host: \"{{OWNER}}\"", "7:13", "sandbox.endpoints[0].host", "{{OWNER}} may not appear in a host field"},
		{"port as string", "  endpoints:\n    - host: x.io\n      port: \"443\"", "8:13", "sandbox.endpoints[0].port", `want an integer, got a string "443"`},
		{"port zero", "  endpoints:\n    - host: x.io\n      port: 0", "8:13", "sandbox.endpoints[0].port", "from 1 to 65535"},
		{"bad protocol", "  endpoints:\n    - host: x.io\n      protocol: http", "8:17", "sandbox.endpoints[0].protocol", `invalid value "http"`},
		{"bad access", "  endpoints:\n    - host: x.io\n      access: readonly", "8:15", "sandbox.endpoints[0].access", `invalid value "readonly"`},
		{"empty rules", "  endpoints:\n    - host: x.io\n      rules: []", "8:14", "sandbox.endpoints[0].rules", "rules is empty"},
		{"rule without path", "  endpoints:\n    - host: x.io\n      rules: [GET]", "8:15", "sandbox.endpoints[0].rules[0]", "is not METHOD /path"},
		{"rule with query string", "  endpoints:\n    - host: x.io\n      rules: [\"GET /s?q=1\"]", "8:15", "sandbox.endpoints[0].rules[0]", "query string"},
		{"unknown method", "  endpoints:\n    - host: x.io\n      rules: [\"FETCH /x\"]", "8:15", "sandbox.endpoints[0].rules[0].method", `invalid method "FETCH"`},
		{"dot step in rule path", "  endpoints:\n    - host: x.io\n      rules: [\"GET /a/./b\"]", "8:15", "sandbox.endpoints[0].rules[0].path", `contains a "." step`},
		{"rule map without method", "  endpoints:\n    - host: x.io\n      rules:\n        - {path: /x}", "9:11", "sandbox.endpoints[0].rules[0]", "needs method and path"},
		{"query value placeholder", "  endpoints:\n    - host: x.io\n      rules:\n        - {method: GET, path: /x, query: {q: \"{{NOPE}}\"}}", "9:46", "sandbox.endpoints[0].rules[0].query.q", "unknown placeholder {{NOPE}}"},
		{"bad allowed ip", "  endpoints:\n    - host: x.io\n      allowed_ips: [10.0.0.300]", "8:21", "sandbox.endpoints[0].allowed_ips[0]", `invalid allowed_ips entry "10.0.0.300"`},
		{"relative binary", "  endpoints:\n    - host: x.io\n      binaries: [curl]", "8:18", "sandbox.endpoints[0].binaries[0]", `"curl" is not absolute`},
		{"placeholder in binary", "  endpoints:\n    - host: x.io\n      binaries: [\"/opt/{{OWNER}}/bin\"]", "8:18", "sandbox.endpoints[0].binaries[0]", "contains a placeholder"},
		{"writable root", "  filesystem:\n    read_write: [/]", "7:18", "sandbox.filesystem.read_write", "/ may not be writable"},
		{"relative read_only", "  filesystem:\n    read_only: [data]", "7:17", "sandbox.filesystem.read_only[0]", "not absolute"},
		{"unknown filesystem key", "  filesystem:\n    rw: [/x]", "7:5", "sandbox.filesystem.rw", `unknown field "rw"`},
		{"relative output", "  outputs: [out.json]", "6:13", "sandbox.outputs[0]", "not absolute"},
		{"control character", "  outputs: [\"/out\\tx\"]", "6:13", "sandbox.outputs[0]", "control character"},
		{"widening not a list", "  spawn-widening: {agent: b}", "6:19", "sandbox.spawn-widening", "want a list of spawn widenings"},
		{"widening without agent", "  spawn-widening:\n    - hosts: [x.io]", "7:7", "sandbox.spawn-widening[0].agent", "missing required field agent"},
		{"widening names nothing", "  spawn-widening:\n    - agent: b", "7:7", "sandbox.spawn-widening[0]", "the widening of b names nothing"},
		{"widening bad host", "  spawn-widening:\n    - agent: b\n      hosts: [API.x.io]", "8:15", "sandbox.spawn-widening[0].hosts[0]", "upper-case"},
		{"widening relative path", "  spawn-widening:\n    - agent: b\n      paths: [data]", "8:15", "sandbox.spawn-widening[0].paths[0]", "not absolute"},
		{"widening process not bool", "  spawn-widening:\n    - agent: b\n      process: yes please", "8:16", "sandbox.spawn-widening[0].process", "want true or false"},
		{"widening unknown key", "  spawn-widening:\n    - agent: b\n      ports: [1]", "8:7", "sandbox.spawn-widening[0].ports", `unknown field "ports"`},
		{"widening agent twice", "  spawn-widening:\n    - {agent: b, process: true}\n    - {agent: b, paths: [/x]}", "8:7", "sandbox.spawn-widening[1]", `agent "b" is named twice`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			content := head + tc.block + "\n---\n"
			if tc.name == "absolute policy file" {
				content = "---\nname: a\ndescription: d\ntools: Read\nsandbox: /etc/policy.yaml\n---\n"
				tc.pos, tc.field, tc.msg = "5:10", "sandbox", "is absolute"
			}
			_, err := Load(fstest.MapFS{"agents/a.md": {Data: []byte(content)}})
			var ds Diagnostics
			if !errors.As(err, &ds) {
				t.Fatalf("want Diagnostics, got %v", err)
			}
			d := ds[0]
			if d.Pos.String() != "agents/a.md:"+tc.pos || d.Field != tc.field || !strings.Contains(d.Message, tc.msg) {
				t.Errorf("got  %s\nwant agents/a.md:%s: %s: ...%s...", d, tc.pos, tc.field, tc.msg)
			}
		})
	}
}
