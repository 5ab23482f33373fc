package runner

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// TestOpenShellFake checks that the fake keeps the CLI contract strictly,
// so that the runner tests cannot pass against a lenient stand-in.
func TestOpenShellFake(t *testing.T) {
	bin := filepath.Join(fakeBin(t), "openshell")
	good, err := openshell.Marshal(testPolicy(), "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goodFile := filepath.Join(dir, "good.yaml")
	os.WriteFile(goodFile, good, 0o600)
	badFile := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badFile, append(append([]byte(nil), good...), []byte("no_such_field: 1\n")...), 0o600)
	changed := testPolicy()
	changed.Process.RunAsUser = "1000"
	changedBytes, _ := openshell.Marshal(changed, "")
	changedFile := filepath.Join(dir, "changed.yaml")
	os.WriteFile(changedFile, changedBytes, 0o600)

	type step struct {
		args   []string
		code   int
		stdout string // substring
	}
	create := func(name string, extra ...string) []string {
		return append([]string{"sandbox", "create", "--name", name, "--policy", goodFile, "--no-tty"}, extra...)
	}
	for _, tc := range []struct {
		name    string
		version string
		env     map[string]string
		steps   []step
	}{
		{name: "status exits 0 when the gateway is down", env: map[string]string{"OPENSHELL_FAKE_GATEWAY": ""},
			steps: []step{{args: []string{"status", "-o", "json"}, code: 0, stdout: `"status":"disconnected"`},
				{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 1}}},
		{name: "v0.0.83 has no -o json and no --detach", version: "0.0.83",
			steps: []step{{args: []string{"status", "-o", "json"}, code: 2},
				{args: []string{"status"}, code: 0, stdout: "Connected"},
				{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 2},
				{args: create("fs-a", "--", "true"), code: 0},
				{args: []string{"sandbox", "get", "fs-a", "-o", "json"}, code: 2},
				{args: []string{"sandbox", "get", "fs-a"}, code: 0, stdout: "Phase:\x1b[0m Ready"}}},
		{name: "sandbox names", steps: []step{
			{args: create("fs-twenty-characters"), code: 1},
			{args: create("fs--a"), code: 1},
			{args: create("FS-a"), code: 1},
			{args: create("fs-nineteen-chars-x", "--detach", "--", "sleep", "infinity"), code: 0}}},
		{name: "strict flags and policy", steps: []step{
			{args: append(create("fs-a"), "--bogus"), code: 2},
			{args: []string{"sandbox", "create", "--name", "fs-b", "--policy", badFile, "--detach", "--", "sleep", "infinity"}, code: 1},
			{args: create("fs-c", "--detach", "--", "sleep", "infinity"), code: 0},
			{args: create("fs-c", "--detach", "--", "sleep", "infinity"), code: 1}}},
		{name: "phases and exec exit status", steps: []step{
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0},
			{args: []string{"sandbox", "exec", "-n", "fs-a", "--", "true"}, code: 1}, // not Ready yet
			{args: []string{"sandbox", "get", "fs-a", "-o", "json"}, code: 0, stdout: `"phase":"Ready"`},
			{args: []string{"sandbox", "exec", "-n", "fs-a", "--no-tty", "--", "sh", "-c", "exit 7"}, code: 7},
			{args: []string{"sandbox", "delete", "fs-a"}, code: 0},
			{args: []string{"sandbox", "delete", "fs-a"}, code: 1}}},
		{name: "v0.0.111 without --detach: the command is the main process", steps: []step{
			{args: create("fs-a", "--", "true"), code: 0},
			{args: []string{"sandbox", "get", "fs-a", "-o", "json"}, code: 0, stdout: `"phase":"Stopped"`}}},
		{name: "policy set exit codes", env: map[string]string{"OPENSHELL_FAKE_FAIL": "policy-pending"}, steps: []step{
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0},
			{args: []string{"policy", "set", "fs-a", "--policy", changedFile, "--wait"}, code: 1}, // static sections changed
			{args: []string{"policy", "set", "fs-a", "--policy", goodFile, "--wait"}, code: 124},
			{args: []string{"policy", "get", "fs-a", "--rev", "2", "-o", "json"}, code: 0, stdout: `"status": "pending"`}}},
		{name: "policy set failed", env: map[string]string{"OPENSHELL_FAKE_FAIL": "policy-failed"}, steps: []step{
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0},
			{args: []string{"policy", "set", "fs-a", "--policy", goodFile, "--wait"}, code: 1},
			{args: []string{"policy", "get", "fs-a", "-o", "json"}, code: 0, stdout: `"status": "effective"`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			env := []string{"PATH=" + os.Getenv("PATH"), "OPENSHELL_FAKE_STATE=" + state, "OPENSHELL_FAKE_GATEWAY=up"}
			if tc.version != "" {
				env = append(env, "OPENSHELL_FAKE_VERSION="+tc.version)
			}
			for k, v := range tc.env {
				env = append(env, k+"="+v)
			}
			for _, s := range tc.steps {
				cmd := exec.Command(bin, s.args...)
				cmd.Env = env
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				err := cmd.Run()
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != s.code || !strings.Contains(out.String(), s.stdout) {
					t.Fatalf("openshell %s: exit %d (want %d)\nstdout: %s\nstderr: %s", strings.Join(s.args, " "), code, s.code, out.String(), errb.String())
				}
			}
			if data, _ := os.ReadFile(filepath.Join(state, "calls.jsonl")); bytes.Count(data, []byte("\n")) != len(tc.steps) {
				t.Errorf("the fake recorded %d calls for %d steps", bytes.Count(data, []byte("\n")), len(tc.steps))
			}
		})
	}
}
