package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// TestPolicySchema: the command prints the embedded CUE (the cue CLI side
// is policycue's TestCUEVetCLI on the same functions' output).
func TestPolicySchema(t *testing.T) {
	whole, err := policycue.OpenShellSchemaCUE("")
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := policycue.OpenShellSchemaCUE("v0.0.83")
	if err != nil {
		t.Fatal(err)
	}
	input, err := policycue.InputSchemaCUE()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string // the whole output when code is 0; a substring otherwise
	}{
		{"openshell", []string{"openshell"}, 0, string(whole)},
		{"openshell -o cue", []string{"openshell", "-o", "cue"}, 0, string(whole)},
		{"openshell pinned", []string{"openshell", "--openshell-version", "0.0.83"}, 0, string(pinned)},
		{"input", []string{"input"}, 0, string(input)},
		{"json", []string{"openshell", "-o", "json"}, 2, "-o json is not offered"},
		{"input json", []string{"input", "-o", "json"}, 2, "use -o cue"},
		{"yaml", []string{"input", "-o", "yaml"}, 2, `unknown output format "yaml"`},
		{"bad version", []string{"openshell", "--openshell-version", "v0.0.999"}, 2, "unsupported OpenShell version"},
		{"input has no version", []string{"input", "--openshell-version", "v0.0.83"}, 2, "unknown flag"},
		{"extra argument", []string{"openshell", "x.yaml"}, 2, "unknown command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := newRootCmd()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs(append([]string{"policy", "schema"}, tc.args...))
			err := cmd.Execute()
			if tc.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if out.String() != tc.want {
					t.Errorf("output differs from the library's:\n%s", out.String())
				}
				return
			}
			if err == nil || exitCode(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v (exit %d), want exit %d and %q", err, exitCode(err), tc.code, tc.want)
			}
		})
	}
	for _, def := range []string{"#Policy:", "#PolicyAt:", "#Policy_v0_0_83:"} {
		if !strings.Contains(string(whole), "\n"+def) {
			t.Errorf("openshell schema lacks %s", def)
		}
	}
	for _, def := range []string{"#ClaudeAgent:", "#OpenCodeAgent:", "#Skill:", "#Sandbox:", "package input"} {
		if !strings.Contains(string(input), def) {
			t.Errorf("input schema lacks %s", def)
		}
	}
}
