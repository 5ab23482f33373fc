package policycue

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

// cueCLI finds the cue CLI (.ci/install.d/60-cue.sh installs it).
func cueCLI(t *testing.T) string {
	t.Helper()
	return testtool.Find(t, "cue", ".ci/install.d/60-cue.sh")
}

// writeSchema writes a printed schema to a temporary .cue file.
func writeSchema(t *testing.T, name string, src []byte, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, src, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCUEVetCLI checks that the schema works with the cue CLI on its own,
// as bench/compile.sh and users run it: the source file, and what
// `fullsend policy schema openshell` prints (OpenShellSchemaCUE), whole and
// pinned to a release.
func TestCUEVetCLI(t *testing.T) {
	cue := cueCLI(t)
	whole, err := OpenShellSchemaCUE("")
	printed := writeSchema(t, "policy.cue", whole, err)
	pinned83, err := OpenShellSchemaCUE("v0.0.83")
	printed83 := writeSchema(t, "policy-83.cue", pinned83, err)
	pinned111, err := OpenShellSchemaCUE("v0.0.111")
	printed111 := writeSchema(t, "policy-111.cue", pinned111, err)
	fixture := func(f string) string { return filepath.Join("..", "openshell", "validate", "testdata", f) }
	type vet struct {
		file, def string
		ok        bool
	}
	shapes := []vet{
		{"valid/v0.0.111.yaml", "#Policy", true},
		{"valid/v0.0.83.yaml", "#Policy_v0_0_83", true},
		{"valid/v0.0.111.yaml", "#Policy_v0_0_83", false},
		{"invalid/unknown_field.yaml", "#Policy", false},
		{"invalid/port_out_of_range.yaml", "#Policy", false},
		{"invalid/missing_version.yaml", "#Policy", false},
		{"invalid/protocol_unknown.yaml", "#Policy", false},
	}
	tests := []struct {
		name, schema string
		cases        []vet
	}{
		{"source", filepath.Join("schema", "openshell", "policy.cue"), shapes},
		{"printed", printed, shapes},
		{"printed v0.0.83", printed83, []vet{{"valid/v0.0.83.yaml", "#Policy", true}, {"valid/v0.0.111.yaml", "#Policy", false}}},
		{"printed v0.0.111", printed111, []vet{{"valid/v0.0.111.yaml", "#Policy", true}, {"invalid/unknown_field.yaml", "#Policy", false}}},
	}
	for _, tc := range tests {
		for _, c := range tc.cases {
			t.Run(tc.name+" "+c.file+" "+c.def, func(t *testing.T) {
				out, err := exec.Command(cue, "vet", "-c", tc.schema, fixture(c.file), "-d", c.def).CombinedOutput()
				if (err == nil) != c.ok {
					t.Errorf("cue vet ok=%v, want %v:\n%s", err == nil, c.ok, out)
				}
			})
		}
	}
	// The compiled example policies vet against the printed #Policy.
	policies, err := filepath.Glob(filepath.Join("..", "testdata", "*", "policies", "*.yaml"))
	if err != nil || len(policies) < 3 {
		t.Fatalf("example policies: %v %v", policies, err)
	}
	args := append(append([]string{"vet", "-c", printed}, policies...), "-d", "#Policy")
	if out, err := exec.Command(cue, args...).CombinedOutput(); err != nil {
		t.Errorf("cue vet of the example policies: %v\n%s", err, out)
	}
}
