package validate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"

	"gopkg.in/yaml.v3"
)

// FuzzValidate: Validate never panics, and every diagnostic names the file,
// a line and a column, a known severity and a code.
func FuzzValidate(f *testing.F) {
	for _, dir := range []string{"valid", "invalid"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			// Large seeds stall the mutator (every exec copies the
			// coverage map of cue and yaml); small ones cover every rule.
			if len(data) < 1<<10 {
				f.Add(data, uint8(0))
			}
		}
	}
	f.Add([]byte("a: &a [*a]\n"), uint8(1))
	f.Add([]byte("version: 1\nnetwork_policies: {x: {endpoints: [{host: '**.a.b', ports: [1, 1]}, {host: '**.b', port: 1}]}}\n"), uint8(2))
	// One seed per class of the fidelity table: rule bodies and middlewares.
	for i, tc := range fidelityCases {
		f.Add(oneEndpoint(tc.ep, tc.extra), uint8(i))
	}
	f.Add([]byte("version: 1\nnetwork_middlewares: {a: {middleware: x, order: -3, config: {k: [1]}, endpoints: {include: ['[a-z]?.**.b'], exclude: ['**']}}}\nnetwork_policies: {p: {endpoints: [{host: 'x.b', port: 1, tls: skip}]}}\n"), uint8(4))
	versions := []string{"v0.0.22", "v0.0.53", "v0.0.83", "v0.0.97", "v0.0.111"}
	f.Fuzz(func(t *testing.T, data []byte, v uint8) {
		version := versions[int(v)%len(versions)]
		diags := File("fuzz.yaml", data, version)
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil && !openshell.HasErrors(diags) {
			t.Fatalf("YAML that does not parse (%v) passed validation", err)
		}
		if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 && doc.Content[0].Kind != yaml.MappingNode && !openshell.HasErrors(diags) {
			t.Fatal("a document that is not a mapping passed validation")
		}
		// A repeated map key that OpenShell loads (a trap, no error) does
		// not stop the decoder policy test, lint and the runner use: it
		// keeps the last entry, as OpenShell does.
		if !openshell.HasErrors(diags) {
			if _, err := openshell.Unmarshal(data); err != nil && strings.Contains(err.Error(), "already defined") {
				t.Fatalf("validation passed but Unmarshal refused a repeated key: %v", err)
			}
		}
		for _, d := range diags {
			if d.File != "fuzz.yaml" || d.Line < 1 || d.Column < 1 || d.Code == "" || d.Message == "" ||
				(d.Severity != openshell.SeverityError && d.Severity != openshell.SeverityWarning) || (d.Trap && d.Severity != openshell.SeverityWarning) {
				t.Fatalf("malformed diagnostic %+v", d)
			}
		}
	})
}

// largePolicy builds a realistic large policy: n network policies with
// REST, GraphQL and TCP endpoints, rules with query matchers, deny rules
// and several binaries each.
func largePolicy(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`version: 1
filesystem_policy:
  include_workdir: true
  read_only: [/usr, /lib, /proc, /dev/urandom, /app, /etc, /var/log]
  read_write: [/sandbox, /tmp, /dev/null]
landlock: {compatibility: best_effort}
process: {run_as_user: sandbox, run_as_group: sandbox}
network_policies:
`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `  service_%[1]d:
    name: service-%[1]d
    endpoints:
      - host: api%[1]d.example.com
        port: 443
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: "/repos/acme/widget-%[1]d/issues/**", query: {state: open, labels: {any: ["bug*", triage]}}}
          - allow: {method: POST, path: "/repos/acme/widget-%[1]d/issues/*/comments"}
          - allow: {method: GET, path: "/repos/acme/widget-%[1]d/pulls/**"}
        deny_rules:
          - {method: DELETE, path: "/**"}
      - host: "*.cdn%[1]d.example.com"
        ports: [443, 8443]
        protocol: rest
        enforcement: enforce
        access: read-only
      - host: db%[1]d.example.com
        port: 5432
        protocol: tcp
      - host: 10.%[2]d.%[3]d.5
        port: 8080
        allowed_ips: [10.%[2]d.%[3]d.5/32]
    binaries:
      - path: /usr/bin/gh
      - path: /usr/bin/git
      - path: /usr/local/bin/claude
`, i, i/250, i%250)
	}
	return b.Bytes()
}

func BenchmarkValidate(b *testing.B) {
	for _, n := range []int{10, 100} {
		data := largePolicy(n)
		if diags := File("large.yaml", data, ""); len(diags) != 0 {
			b.Fatalf("benchmark policy is not valid:\n%s", render(diags))
		}
		b.Run(fmt.Sprintf("policies=%d/bytes=%d", n, len(data)), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				File("large.yaml", data, "")
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkValidateTypicalAgents validates 100 typical agent policies (the
// size of the triage agent's) per iteration, on all cores, the way the
// compiler does.
func BenchmarkValidateTypicalAgents(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "valid", "v0.0.111.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := processCPU()
	defer func() { b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op") }()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			for range 100 {
				if diags := File("agent.yaml", data, ""); len(diags) != 0 {
					panic(strings.Join([]string{diags[0].String()}, ""))
				}
			}
		}
	})
}

// BenchmarkValidateAll1000 is `fullsend policy validate` on 1000 distinct
// realistic policies (the v0.0.111 fixture with renamed hosts and keys,
// as bench/validate.sh generates them) without process start-up: one op is
// the whole batch. The target is 0.3 s wall; cpu-ns/op is the CPU time,
// which does not depend on machine load.
func BenchmarkValidateAll1000(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("testdata", "valid", "v0.0.111.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	inputs := make([]Input, 1000)
	for i := range inputs {
		s := strings.ReplaceAll(string(src), "acme", fmt.Sprintf("org%d", i))
		s = strings.ReplaceAll(s, "example.com", fmt.Sprintf("example%d.com", i))
		inputs[i] = Input{File: fmt.Sprintf("policy-%d.yaml", i), Data: []byte(s)}
	}
	for _, r := range All(inputs[:1], "") {
		if openshell.HasErrors(r.Diagnostics) {
			b.Fatalf("benchmark policy is not valid:\n%s", render(r.Diagnostics))
		}
	}
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		All(inputs, "")
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}
