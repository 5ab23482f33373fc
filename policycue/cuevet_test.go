package policycue

import (
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

// TestCUEVetCLI checks that the schema works with the cue CLI on its own,
// as bench/compile.sh and users run it.
func TestCUEVetCLI(t *testing.T) {
	cue := cueCLI(t)
	schema := filepath.Join("schema", "openshell", "policy.cue")
	tests := []struct {
		file, def string
		ok        bool
	}{
		{"valid/v0.0.111.yaml", "#Policy", true},
		{"valid/v0.0.83.yaml", "#Policy_v0_0_83", true},
		{"valid/v0.0.111.yaml", "#Policy_v0_0_83", false},
		{"invalid/unknown_field.yaml", "#Policy", false},
		{"invalid/port_out_of_range.yaml", "#Policy", false},
		{"invalid/missing_version.yaml", "#Policy", false},
		{"invalid/protocol_unknown.yaml", "#Policy", false},
	}
	for _, tc := range tests {
		t.Run(tc.file+" "+tc.def, func(t *testing.T) {
			out, err := exec.Command(cue, "vet", "-c", schema, filepath.Join("..", "openshell", "testdata", "validate", tc.file), "-d", tc.def).CombinedOutput()
			if (err == nil) != tc.ok {
				t.Errorf("cue vet ok=%v, want %v:\n%s", err == nil, tc.ok, out)
			}
		})
	}
}
