package compile

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// The spawn-containment projects: a parent that reaches the forge proxy
// and may spawn a child; the child's block is the case.
const (
	spawnParent = `---
name: lead
description: d
tools: Bash(curl *), Agent(helper)
sandbox:
  tier: full
  endpoints:
    - host: api.example.com
      rules: ["GET /repos/**"]
  filesystem:
    read_write: [/srv]
%s---
body
`
	spawnChild = `---
name: helper
description: d
tools: Bash(curl *)
sandbox:
  tier: full
%s---
body
`
)

// TestSpawnContainment compiles a parent and a child end to end: a child
// that reaches what its parent may not fails the compile at the child's
// line, naming the parent's Agent(...) line, unless the parent declares
// the widening, which the manifest records. Before issue 33 §3 every
// wider child compiled.
func TestSpawnContainment(t *testing.T) {
	tests := []struct {
		name, parent, child string
		// errs are fragments of the error diagnostics, in order; warn a
		// fragment of a warning.
		errs  []string
		warn  string
		wider []string
	}{
		{name: "contained", child: "  endpoints:\n    - host: api.example.com\n      rules: [\"GET /repos/o/r/issues\"]\n"},
		{name: "wider host", child: "  endpoints:\n    - host: exfil.example.net\n      rules: [\"GET /**\"]\n",
			errs: []string{"agents/helper.md:8:7: error: agent helper is spawned by lead (agents/lead.md:4:22: Agent(helper)) and may do what lead may not: /usr/bin/curl to exfil.example.net:443: GET /** (network_policies.exfil_example_net_443.endpoints[0]): the parent has no endpoint for exfil.example.net:443"}},
		{name: "wider path", child: "  endpoints:\n    - host: api.example.com\n      rules: [\"DELETE /repos/o/r\"]\n",
			errs: []string{"agents/helper.md:9:15: error: agent helper is spawned by lead (agents/lead.md:4:22: Agent(helper)) and may do what lead may not: /usr/bin/curl to api.example.com:443: DELETE /repos/o/r (network_policies.api_example_com_443.endpoints[0].rules[0]): no rule of the parent's endpoints for api.example.com allows it"}},
		{name: "filesystem write", child: "  filesystem:\n    read_write: [/data]\n",
			errs: []string{"agents/helper.md:8:18: error: agent helper is spawned by lead (agents/lead.md:4:22: Agent(helper)) and may do what lead may not: read-write /data"}},
		{name: "declared", parent: "  spawn-widening:\n    - {agent: helper, hosts: [exfil.example.net], paths: [/data]}\n",
			child: "  endpoints:\n    - host: exfil.example.net\n      rules: [\"GET /**\"]\n  filesystem:\n    read_write: [/data]\n",
			wider: []string{"helper filesystem /data", "helper network exfil.example.net"}},
		{name: "declared host does not cover a path", parent: "  spawn-widening:\n    - {agent: helper, hosts: [exfil.example.net]}\n",
			child: "  endpoints:\n    - host: exfil.example.net\n      rules: [\"GET /**\"]\n  filesystem:\n    read_write: [/data]\n",
			errs:  []string{"read-write /data"}},
		{name: "unused declaration", parent: "  spawn-widening:\n    - {agent: helper, hosts: [exfil.example.net]}\n",
			warn: `declared widening "helper network exfil.example.net" is not needed`, wider: []string{"helper network exfil.example.net"}},
		{name: "declaration for an agent not spawned", parent: "  spawn-widening:\n    - {agent: other, process: true}\n",
			errs: []string{"agents/lead.md:13:15: error: sandbox.spawn-widening: agent lead does not spawn other"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeMapFS(t, fstest.MapFS{
				"agents/lead.md":   {Data: []byte(strings.Replace(spawnParent, "%s", tc.parent, 1))},
				"agents/helper.md": {Data: []byte(strings.Replace(spawnChild, "%s", tc.child, 1))},
			})
			out, err := CompileDir(context.Background(), dir, ProjectOptions{})
			if len(tc.errs) > 0 {
				checkSpawnErrors(t, err, tc.errs)
				return
			}
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			if got := out.Manifest.Agents["lead"].SpawnWidening; !slices.Equal(got, tc.wider) {
				t.Errorf("manifest spawn_widening = %q, want %q", got, tc.wider)
			}
			explained := Explain(out.Agents["lead"])
			if !slices.Equal(explained.SpawnWidening, tc.wider) {
				t.Errorf("explain spawn_widening = %q, want %q", explained.SpawnWidening, tc.wider)
			}
			for _, w := range tc.wider {
				if !strings.Contains(explained.String(), "declared spawn widening (beyond this policy): "+w+"\n") {
					t.Errorf("explain text lacks the widening %q:\n%s", w, explained)
				}
			}
			if tc.warn != "" && !strings.Contains(out.Warnings.Error(), tc.warn) {
				t.Errorf("warnings %q lack %q", out.Warnings.Error(), tc.warn)
			}
		})
	}
}

// checkSpawnErrors wants err to be a failed compile whose error
// diagnostics start with want, in order.
func checkSpawnErrors(t *testing.T, err error, want []string) {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("want a compile failure, got %v", err)
	}
	errs := f.Diagnostics.Errors()
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(errs), len(want), errs.Error())
	}
	for i, d := range errs {
		if !strings.Contains(d.String(), want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s", i, d, want[i])
		}
	}
	if !strings.Contains(errs[0].Hint, "spawn-widening") && !strings.Contains(errs[0].Hint, "Agent(...)") {
		t.Errorf("hint %q does not name spawn-widening", errs[0].Hint)
	}
}
