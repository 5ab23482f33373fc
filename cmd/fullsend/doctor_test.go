package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestDoctor runs `fullsend doctor -o json` against the fake: a job
// container with everything, then one missing the pinned images and with no
// gateway registered and no podman to start one.
func TestDoctor(t *testing.T) {
	bin, project := runEnv(t)
	pinned := "ghcr.io/fullsend-ai/agent-sandbox@sha256:" + strings.Repeat("1", 64)
	for _, tc := range []struct {
		name     string
		env      map[string]string
		args     []string
		wantExit int
		wantFail []string // names of failed checks
	}{
		{name: "ready", wantExit: 0, args: []string{"--set", "ISSUE_NUMBER=1", "--set", "OWNER=acme", "--set", "REPO_NAME=widgets", "--set", "FORGE_HOST=api.github.com"},
			env: map[string]string{"OPENSHELL_FAKE_GATEWAY": "up", "FULLSEND_SANDBOX_IMAGE": pinned}},
		{name: "missing pieces", wantExit: 1,
			env:      map[string]string{"FULLSEND_SANDBOX_IMAGE": "ghcr.io/fullsend-ai/agent-sandbox:latest", "PATH": bin},
			wantFail: []string{"sandbox image", "supervisor image", "agent triage: placeholders"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"OPENSHELL_FAKE_STATE": t.TempDir()}
			for k, v := range tc.env {
				env[k] = v
			}
			args := append([]string{"doctor", "--dir", project, "-o", "json"}, tc.args...)
			cmd := fullsendCmd(bin, env, args...)
			if p, ok := tc.env["PATH"]; ok {
				cmd.Env = append(cmd.Env, "PATH="+p)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if got := exitStatus(err); got != tc.wantExit {
				t.Fatalf("exit %d, want %d\n%s\n%s", got, tc.wantExit, stdout.String(), stderr.String())
			}
			var rep doctorReport
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("%v\n%s", err, stdout.String())
			}
			failedNames := map[string]bool{}
			for _, c := range rep.Checks {
				if !c.OK {
					failedNames[c.Name] = true
					if c.Fix == "" && c.Name != "agent triage: placeholders" {
						t.Errorf("check %s failed without saying what to fix", c.Name)
					}
				}
			}
			for _, n := range tc.wantFail {
				if !failedNames[n] {
					t.Errorf("check %q did not fail: %s", n, stdout.String())
				}
			}
			if len(tc.wantFail) == 0 && len(failedNames) > 0 {
				t.Errorf("failed checks %v:\n%s", failedNames, stdout.String())
			}
		})
	}
}
