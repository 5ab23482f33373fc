package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
)

var updateValidateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/")

const fixtures = "../../openshell/validate/testdata"

// runCLI runs the fullsend command tree with args and returns stdout and
// the process exit code main would use.
func runCLI(t *testing.T, stdin string, args ...string) (string, int) {
	t.Helper()
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetIn(bytes.NewBufferString(stdin))
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		return out.String(), exitCode(err)
	}
	return out.String(), 0
}

func TestPolicyValidateTextGolden(t *testing.T) {
	args := []string{"policy", "validate"}
	for _, f := range []string{
		"valid/v0.0.111.yaml",
		"invalid/access_without_protocol.yaml",
		"invalid/ambiguous_enforcement.yaml",
		"invalid/enforcement_omitted.yaml",
		"invalid/host_tld_wildcard.yaml",
		"invalid/port_quoted.yaml",
		"invalid/tls_terminate.yaml",
		"invalid/unknown_field.yaml",
	} {
		args = append(args, filepath.Join(fixtures, f))
	}
	got, code := runCLI(t, "", args...)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	golden := filepath.Join("testdata", "policy-validate", "text.golden")
	if *updateValidateGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("text output differs from %s (go test -update rewrites it):\n--- got\n%s--- want\n%s", golden, got, want)
	}
}

func TestPolicyValidateExitCodes(t *testing.T) {
	valid := filepath.Join(fixtures, "valid", "v0.0.111.yaml")
	warnOnly := filepath.Join(fixtures, "invalid", "tls_terminate.yaml")
	trapOnly := filepath.Join(fixtures, "invalid", "enforcement_omitted.yaml") // OpenShell loads it: audit
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"valid", []string{valid}, 0},
		{"valid on older release", []string{"--openshell-version", "v0.0.83", valid}, 1},
		{"warnings pass", []string{warnOnly}, 0},
		{"warnings fail with --strict", []string{"--strict", warnOnly}, 1},
		{"traps load: warnings", []string{trapOnly}, 0},
		{"traps fail with --strict", []string{"--strict", trapOnly}, 1},
		{"bad version", []string{"--openshell-version", "latest", valid}, 2},
		{"bad output", []string{"-o", "yaml", valid}, 2},
		{"missing file", []string{"no-such-policy.yaml"}, 2},
		{"no files", nil, 2},
		{"directory of valid policies", []string{filepath.Join(fixtures, "valid")}, 0},
		{"directory without policies", []string{"testdata"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, code := runCLI(t, "", append([]string{"policy", "validate"}, tc.args...)...)
			if code != tc.want {
				t.Errorf("exit code %d, want %d; output:\n%s", code, tc.want, out)
			}
		})
	}
}

func TestPolicyValidateJSONAndStdin(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures, "invalid", "sql_enforce.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, code := runCLI(t, string(data), "policy", "validate", "-o", "json", "--openshell-version", "0.0.83", "-")
	if code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	var r validate.Report
	if err := json.NewDecoder(bytes.NewBufferString(out)).Decode(&r); err != nil {
		t.Fatalf("output is not a JSON report: %v\n%s", err, out)
	}
	if r.OpenShellVersion != "v0.0.83" || len(r.Files) != 1 || r.Files[0].File != "-" || r.Errors != 1 ||
		r.Files[0].Diagnostics[0].Code != validate.CodeSQLEnforce {
		t.Fatalf("unexpected report: %+v", r)
	}
}

func TestReadPolicyFileLimit(t *testing.T) {
	big := bytes.Repeat([]byte("#"), openshell.MaxPolicyBytes*2)
	data, err := readPolicyFile(bytes.NewReader(big), "-")
	if err != nil || len(data) != openshell.MaxPolicyBytes+1 {
		t.Fatalf("read %d bytes, %v", len(data), err)
	}
	if _, err := readPolicyFile(nil, filepath.Join(t.TempDir(), "none.yaml")); !errors.As(err, new(usageError)) {
		t.Fatalf("missing file: %v", err)
	}
}
