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
	// netFile changes only the network section: a live update the gateway
	// takes as a new revision.
	net := testPolicy()
	net.NetworkPolicies["extra"] = openshell.NetworkPolicy{Name: "extra",
		Endpoints: []openshell.Endpoint{{Host: "example.org", Port: 443}}, Binaries: []openshell.Binary{{Path: "/usr/bin/curl"}}}
	netBytes, _ := openshell.Marshal(net, "")
	netFile := filepath.Join(dir, "net.yaml")
	os.WriteFile(netFile, netBytes, 0o600)
	// roFile makes /sandbox read-only, as the tiers below full do.
	ro := testPolicy()
	ro.FilesystemPolicy = &openshell.FilesystemPolicy{ReadOnly: []string{"/usr", "/sandbox"}, ReadWrite: []string{"/tmp", "/sandbox/.claude"}}
	roBytes, _ := openshell.Marshal(ro, "")
	roFile := filepath.Join(dir, "ro.yaml")
	os.WriteFile(roFile, roBytes, 0o600)
	upload := filepath.Join(dir, "up")
	os.MkdirAll(upload, 0o700)
	os.WriteFile(filepath.Join(upload, "f"), []byte("x"), 0o600)
	noSSH := t.TempDir() // a PATH without ssh

	type step struct {
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
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
		// main.rs v0.0.111:2360-2385: nothing registered is exit 0,
		// not_configured.
		{name: "status exits 0 when no gateway is configured", env: map[string]string{"OPENSHELL_FAKE_GATEWAY": ""},
			steps: []step{{args: []string{"status", "-o", "json"}, code: 0, stdout: `"status":"not_configured"`},
				{args: []string{"status"}, code: 0, stdout: "No gateway configured."},
				{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 1}}},
		// commands/gateway.rs v0.0.111:52-110: a registered gateway that
		// refuses connections is exit 1, in both output formats.
		{name: "status exits 1 when a registered gateway refuses connections", env: map[string]string{"OPENSHELL_FAKE_GATEWAY": ""},
			steps: []step{{args: []string{"gateway", "add", "http://127.0.0.1:1", "--local", "--name", "fs"}, code: 0},
				{args: []string{"gateway", "list", "-o", "json"}, code: 0, stdout: `"endpoint":"http://127.0.0.1:1"`},
				{args: []string{"status", "-o", "json"}, code: 1, stderr: "Connection refused"},
				{args: []string{"status"}, code: 1},
				{args: []string{"gateway", "add", "http://127.0.0.1:1", "--local", "--remote", "x"}, code: 2},
				// commands/gateway.rs v0.0.111:840-850: a name is added once
				{args: []string{"gateway", "add", "http://127.0.0.1:2", "--local", "--name", "fs"}, code: 1, stderr: "already exists"}}},
		{name: "OPENSHELL_GATEWAY_ENDPOINT names the gateway", env: map[string]string{"OPENSHELL_FAKE_GATEWAY": "", "OPENSHELL_GATEWAY_ENDPOINT": "http://127.0.0.1:1"},
			steps: []step{{args: []string{"status", "-o", "json"}, code: 1}}},
		{name: "v0.0.83 status: not configured, then refused", version: "0.0.83", env: map[string]string{"OPENSHELL_FAKE_GATEWAY": ""},
			steps: []step{{args: []string{"status"}, code: 0, stdout: "No gateway configured."},
				{args: []string{"gateway", "add", "http://127.0.0.1:1", "--local", "--name", "fs"}, code: 0},
				{args: []string{"status"}, code: 1}}},
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
			// create blocks until Ready (run.rs v0.0.111:652-835)
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0, stderr: "is Ready"},
			{args: []string{"sandbox", "exec", "-n", "fs-a", "--", "true"}, code: 0},
			{args: []string{"sandbox", "get", "fs-a", "-o", "json"}, code: 0, stdout: `"phase":"Ready"`},
			{args: []string{"sandbox", "exec", "-n", "fs-a", "--no-tty", "--", "sh", "-c", "exit 7"}, code: 7},
			{args: []string{"sandbox", "delete", "fs-a"}, code: 0, stdout: "Deleted sandbox fs-a"},
			// run.rs v0.0.111:2402-2408: a missing name is not an error
			{args: []string{"sandbox", "delete", "fs-a"}, code: 0, stdout: "Sandbox fs-a not found"}}},
		{name: "create without --from runs the default, unpinned image", steps: []step{
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0, stderr: "sandboxes/base:latest"},
			{args: create("fs-b", "--from", testSandboxImage, "--detach", "--", "sleep", "infinity"), code: 0, stderr: testSandboxImage}}},
		{name: "upload and download need the ssh client", env: map[string]string{"PATH": noSSH}, steps: []step{
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0},
			{args: []string{"sandbox", "upload", "fs-a", upload, "/sandbox/"}, code: 1, stderr: "failed to spawn ssh"},
			{args: []string{"sandbox", "download", "fs-a", "/sandbox", dir}, code: 1, stderr: "failed to spawn ssh"}}},
		{name: "upload as the sandbox user under Landlock", steps: []step{
			{args: []string{"sandbox", "create", "--name", "fs-a", "--policy", roFile, "--detach", "--", "sleep", "infinity"}, code: 0},
			{args: []string{"sandbox", "upload", "fs-a", upload, "/sandbox/"}, code: 1, stderr: "Permission denied"},
			{args: []string{"sandbox", "upload", "fs-a", upload, "/sandbox/.claude/"}, code: 0},
			{args: []string{"sandbox", "upload", "fs-a", upload, "/tmp/"}, code: 0},
			{args: []string{"sandbox", "download", "fs-a", "/sandbox/.claude", dir}, code: 0},
			{args: []string{"sandbox", "download", "fs-a", "/root", dir}, code: 1, stderr: "outside the sandbox workspace"}}},
		// ssh.rs:876-938@v0.0.111, :865-912@v0.0.83: download stays inside
		// the workspace, so the supervisor's logs cannot be downloaded.
		{name: "sandbox download refuses /var/log", steps: []step{
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0},
			{args: []string{"sandbox", "download", "fs-a", "/var/log", dir}, code: 1, stderr: "outside the sandbox workspace (/sandbox)"},
			{args: []string{"sandbox", "download", "fs-a", "/sandbox/../var/log/x", dir}, code: 1, stderr: "outside the sandbox workspace"}}},
		{name: "v0.0.83 sandbox download wants an absolute path under /sandbox", version: "0.0.83", steps: []step{
			{args: create("fs-a", "--", "true"), code: 0},
			{args: []string{"sandbox", "download", "fs-a", "report", dir}, code: 1, stderr: "must be absolute"},
			{args: []string{"sandbox", "download", "fs-a", "/var/log/", dir}, code: 1, stderr: "outside the sandbox workspace"}}},
		// settings.rs:110-166, commands/common.rs:618-679@v0.0.111.
		{name: "settings set: registered keys, bool values, --global needs --yes", steps: []step{
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0},
			{args: []string{"settings", "set", "fs-a", "--key", "ocsf_json", "--value", "true"}, code: 1, stderr: "unknown setting key 'ocsf_json'"},
			{args: []string{"settings", "set", "fs-a", "--key", "ocsf_json_enabled", "--value", "maybe"}, code: 1, stderr: "invalid bool value"},
			{args: []string{"settings", "set", "fs-a", "--key", "ocsf_json_enabled", "--value", "On"}, code: 0, stdout: "Set sandbox setting ocsf_json_enabled=On for fs-a"},
			{args: []string{"settings", "set", "--global", "--key", "ocsf_json_enabled", "--value", "true"}, code: 1, stderr: "pass --yes in non-interactive mode"},
			{args: []string{"settings", "set", "--global", "--key", "ocsf_json_enabled", "--value", "true", "--yes"}, code: 0, stdout: "Set global setting"},
			{args: []string{"settings", "set", "fs-a", "--key", "ocsf_json_enabled", "--value", "false"}, code: 1, stderr: "managed globally"}}},
		// main.rs:510-537, run.rs:6779-6809@v0.0.111: the gateway's tail by
		// source, as print_log_line prints it.
		{name: "logs prints the tail per source", env: map[string]string{"OPENSHELL_FAKE_EVENTS": eventsFixture(t)}, steps: []step{
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0},
			{args: []string{"sandbox", "exec", "-n", "fs-a", "--", "true"}, code: 0},
			{args: []string{"logs", "fs-a", "--source", "sandbox", "-n", "2000"}, code: 0, stdout: "] [sandbox] [OCSF ] [ocsf] HTTP:POST [MED] DENIED POST http://host.docker.internal:8081/"},
			{args: []string{"logs", "fs-a", "--source", "gateway", "-n", "1"}, code: 0, stdout: "] [gateway] [INFO ] [openshell_server] sandbox fs-a is Ready"},
			{args: []string{"logs", "fs-a", "--sources", "gateway"}, code: 2}}},
		// main.rs:596-617@v0.0.111: the JSONL file is written once the
		// setting is on; the shorthand file always.
		{name: "JSONL follows ocsf_json_enabled", env: map[string]string{"OPENSHELL_FAKE_EVENTS": eventsFixture(t)}, steps: []step{
			{args: []string{"settings", "set", "--global", "--key", "ocsf_json_enabled", "--value", "yes", "--yes"}, code: 0},
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0},
			{args: []string{"sandbox", "exec", "-n", "fs-a", "--", "sh", "-c", "cat /var/log/openshell-ocsf.*.log"}, code: 0, stdout: `"message":"L7_REQUEST audit GET api.github.com:443/user`},
			{args: []string{"sandbox", "exec", "-n", "fs-a", "--", "sh", "-c", "cat /var/log/openshell.*.log"}, code: 0, stdout: "Z INFO openshell_sandbox: OCSF JSONL logging toggled"}}},
		// policy.rs v0.0.111:2728, run.rs v0.0.111:5944: the same policy
		// makes no new revision.
		{name: "policy set of an identical policy is de-duplicated", steps: []step{
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0},
			{args: []string{"policy", "set", "fs-a", "--policy", goodFile, "--wait"}, code: 0, stderr: "Policy unchanged (version 1"},
			{args: []string{"policy", "get", "fs-a", "--rev", "2", "-o", "json"}, code: 1},
			{args: []string{"policy", "set", "fs-a", "--policy", netFile, "--wait"}, code: 0, stderr: "revision 2 loaded"},
			{args: []string{"policy", "set", "fs-a", "--policy", netFile, "--wait"}, code: 0, stderr: "Policy unchanged (version 2"}}},
		// run.rs v0.0.83:7165-7190: the effective view on v0.0.83 too.
		{name: "v0.0.83 policy get shows the effective view", version: "0.0.83", steps: []step{
			{args: create("fs-a", "--", "true"), code: 0},
			{args: []string{"policy", "get", "fs-a", "-o", "json"}, code: 0, stdout: `"status": "effective"`},
			{args: []string{"policy", "get", "fs-a", "--rev", "1", "-o", "json"}, code: 0, stdout: `"status": "loaded"`}}},
		{name: "v0.0.111 without --detach: the command is the main process", steps: []step{
			{args: create("fs-a", "--", "true"), code: 0},
			{args: []string{"sandbox", "get", "fs-a", "-o", "json"}, code: 0, stdout: `"phase":"Stopped"`}}},
		{name: "policy set exit codes", env: map[string]string{"OPENSHELL_FAKE_FAIL": "policy-pending"}, steps: []step{
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0},
			{args: []string{"policy", "set", "fs-a", "--policy", changedFile, "--wait"}, code: 1}, // static sections changed
			{args: []string{"policy", "set", "fs-a", "--policy", netFile, "--wait"}, code: 124},
			{args: []string{"policy", "get", "fs-a", "--rev", "2", "-o", "json"}, code: 0, stdout: `"status": "pending"`}}},
		{name: "policy set failed", env: map[string]string{"OPENSHELL_FAKE_FAIL": "policy-failed"}, steps: []step{
			{args: create("fs-a", "--detach", "--", "sleep", "infinity"), code: 0},
			{args: []string{"policy", "set", "fs-a", "--policy", netFile, "--wait"}, code: 1},
			{args: []string{"policy", "get", "fs-a", "-o", "json"}, code: 0, stdout: `"status": "effective"`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			env := []string{"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"), "OPENSHELL_FAKE_STATE=" + state, "OPENSHELL_FAKE_GATEWAY=up"}
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
				if code != s.code || !strings.Contains(out.String(), s.stdout) || !strings.Contains(errb.String(), s.stderr) {
					t.Fatalf("openshell %s: exit %d (want %d)\nstdout: %s\nstderr: %s", strings.Join(s.args, " "), code, s.code, out.String(), errb.String())
				}
			}
			if data, _ := os.ReadFile(filepath.Join(state, "calls.jsonl")); bytes.Count(data, []byte("\n")) != len(tc.steps) {
				t.Errorf("the fake recorded %d calls for %d steps", bytes.Count(data, []byte("\n")), len(tc.steps))
			}
		})
	}
}
