package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
)

// TestPolicyTestBatch: --requests reads one request a line and writes JSON
// Lines; a line that does not parse is reported in place and exits 1; a
// v0.0.111 policy with an endpoint path and network_middlewares loads.
func TestPolicyTestBatch(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(pol, []byte(`version: 1
network_policies:
  gh:
    name: gh
    endpoints:
      - host: api.github.com
        path: "/repos/**"
        port: 443
        protocol: rest
        enforcement: enforce
        access: read-only
    binaries:
      - path: /usr/bin/gh
network_middlewares:
  log:
    middleware: log
    order: 1
    endpoints: {include: ["api.github.com"]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	reqs := filepath.Join(dir, "reqs.txt")
	if err := os.WriteFile(reqs, []byte("# comment\nGET https://api.github.com/repos/o/r from /usr/bin/gh\n\nPOST https://api.github.com/repos/o/r from /usr/bin/gh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runCLI(t, "", "policy", "test", "--policy", pol, "--requests", reqs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var got []decide.BatchResult
	for _, l := range lines {
		var r decide.BatchResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		got = append(got, r)
	}
	if got[0].Line != 2 || got[0].Verdict != "allow" || got[1].Line != 4 || got[1].Verdict != "deny" {
		t.Fatalf("results %+v", got)
	}
	if err := os.WriteFile(reqs, []byte("GET nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = runCLI(t, "", "policy", "test", "--policy", pol, "--requests", reqs)
	if code != 1 || !strings.Contains(out, `"error"`) {
		t.Fatalf("bad line: exit %d\n%s", code, out)
	}
	if _, code := runCLI(t, "", "policy", "test", "--policy", pol, "--requests", reqs, "--request", "GET https://x.com/ from /b"); code != 2 {
		t.Errorf("--request with --requests: exit %d, want 2", code)
	}
}
