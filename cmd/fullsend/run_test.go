package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/runner"
)

// runEnv builds the fullsend binary, the openshell FAKE (as openshell and
// openshell-gateway), the runtime stub and a compiled project fixture, and
// returns the directory holding them.
func runEnv(t *testing.T) (bin, project string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds binaries")
	}
	dir := t.TempDir()
	bin = filepath.Join(dir, "bin")
	for pkg, out := range map[string]string{".": "fullsend", "../../testdata/openshell-fake": "openshell"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, out), pkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	for _, name := range []string{"openshell-gateway", "podman", "ssh"} {
		if err := os.Link(filepath.Join(bin, "openshell"), filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	stub, err := os.ReadFile("../../runner/testdata/runtime-stub.sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "claude"), stub, 0o755); err != nil {
		t.Fatal(err)
	}
	project = filepath.Join(dir, "opt-fullsend")
	pol := &openshell.Policy{Version: 1,
		FilesystemPolicy: &openshell.FilesystemPolicy{IncludeWorkdir: true, ReadOnly: []string{"/usr"}, ReadWrite: []string{"/sandbox", "/tmp"}},
		Landlock:         &openshell.Landlock{Compatibility: "best_effort"},
		Process:          &openshell.Process{RunAsUser: "sandbox", RunAsGroup: "sandbox"},
		NetworkPolicies: map[string]openshell.NetworkPolicy{"forge": {Name: "forge",
			Endpoints: []openshell.Endpoint{{Host: "{{FORGE_HOST}}", Port: 443, Protocol: "rest", Enforcement: "enforce",
				Rules: []openshell.Rule{{Allow: openshell.Match{Method: "GET", Path: "/repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/**"}}}}},
			Binaries: []openshell.Binary{{Path: "/usr/bin/gh"}}}}}
	pb, err := openshell.Marshal(pol, "")
	if err != nil {
		t.Fatal(err)
	}
	agent := []byte("---\nname: triage\ndescription: t\n---\nTriage.\n")
	m := bundle.Manifest{Schema: bundle.ManifestSchema, OpenShellVersion: "v0.0.111", Agents: map[string]bundle.ManifestAgent{
		"triage": {Policy: "triage.yaml", PolicySHA256: bundle.SHA256Hex(pb), Source: "agents/triage.md",
			Sources: []bundle.SourceFile{{Path: "agents/triage.md", SHA256: bundle.SHA256Hex(agent)}},
			Runtime: "claude", Tier: "read-only", RuntimeFlags: map[string][]string{"claude": {"--permission-mode", "plan"}}}}}
	mb, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"policies/triage.yaml": pb, "policies/manifest.json": mb, "agents/triage.md": agent} {
		p := filepath.Join(project, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return bin, project
}

func fullsendCmd(bin string, env map[string]string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(bin, "fullsend"), args...)
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + os.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

func exitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestRunCommandCI runs the built binary against the fake with a GitHub
// Actions event and with a GitLab CI environment.
func TestRunCommandCI(t *testing.T) {
	bin, project := runEnv(t)
	digest := bundle.SHA256Hex(runMust(os.ReadFile(filepath.Join(project, "policies", "manifest.json"))))
	const jobImage = "ghcr.io/fullsend-ai/agent-sandbox@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	const sbImage = "ghcr.io/acme/sandbox@sha256:3333333333333333333333333333333333333333333333333333333333333333"
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    map[string]string
		args    []string
		sandbox string // the image sandbox create --from gets
	}{
		{"github", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/widgets",
			"GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": "https://api.github.com",
			// the workflow passes the verify job's ref and sandbox-ref
			"FULLSEND_IMAGE": jobImage, "FULLSEND_VERIFIED_SANDBOX_IMAGE": sbImage},
			map[string]string{"OWNER": "acme", "REPO_NAME": "widgets", "ISSUE_NUMBER": "42", "FORGE_HOST": "api.github.com"}, nil, sbImage},
		{"gitlab", map[string]string{"GITLAB_CI": "true", "CI_PROJECT_NAMESPACE": "acme", "CI_PROJECT_NAME": "widgets",
			"CI_SERVER_HOST": "gitlab.example.com", "CI_MERGE_REQUEST_IID": "7",
			// a CI/CD variable the flags below, from the artifact file, win over
			"FULLSEND_IMAGE": "ghcr.io/evil/image@sha256:5555555555555555555555555555555555555555555555555555555555555555"},
			map[string]string{"OWNER": "acme", "REPO_NAME": "widgets", "ISSUE_NUMBER": "7", "FORGE_HOST": "gitlab.example.com"},
			// as the template passes them from fullsend-verified.env
			[]string{"--verified-image", jobImage, "--sandbox-image", jobImage}, jobImage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// No gateway is registered: the run starts one (mode b, the
			// podman driver, the image's pinned supervisor) on a free port.
			env := map[string]string{"OPENSHELL_FAKE_STATE": filepath.Join(dir, "state"), "FULLSEND_POLICIES_DIGEST": "sha256:" + digest,
				"FULLSEND_SUPERVISOR_IMAGE": "ghcr.io/nvidia/openshell/supervisor@sha256:2222222222222222222222222222222222222222222222222222222222222222"}
			for k, v := range tc.env {
				env[k] = v
			}
			if tc.name == "github" {
				ev := filepath.Join(dir, "event.json")
				os.WriteFile(ev, []byte(`{"action":"opened","issue":{"number":42}}`), 0o644)
				env["GITHUB_EVENT_PATH"] = ev
				env["GITHUB_STEP_SUMMARY"] = filepath.Join(dir, "summary.md")
			}
			cmd := fullsendCmd(bin, env, append([]string{"run", "triage", project, "--prompt", "hi", "-o", "json", "--diag-dir", filepath.Join(dir, "diag"), "--gateway-port", "0"}, tc.args...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("fullsend run: %v\n%s", err, stderr.String())
			}
			var res runner.Result
			if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
				t.Fatalf("result: %v\n%s", err, stdout.String())
			}
			for k, v := range tc.want {
				if res.Placeholders[k] != v {
					t.Errorf("{{%s}} = %q, want %q", k, res.Placeholders[k], v)
				}
			}
			if res.SandboxImage != tc.sandbox {
				t.Errorf("sandbox created from %q, want %s", res.SandboxImage, tc.sandbox)
			}
			if !res.Deleted || res.ManifestSHA256 != digest || !res.GatewayStarted {
				t.Errorf("result %+v", res)
			}
			if tc.name == "github" {
				if s, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"]); !bytes.Contains(s, []byte("fullsend run `triage`: succeeded")) {
					t.Errorf("job summary: %s", s)
				}
			}
		})
	}
}

func TestRunCommandFailures(t *testing.T) {
	bin, project := runEnv(t)
	base := func(dir string) map[string]string {
		return map[string]string{"OPENSHELL_FAKE_STATE": dir, "OPENSHELL_FAKE_GATEWAY": "up", "FULLSEND_IMAGE": "ghcr.io/fullsend-ai/agent-sandbox@sha256:1111111111111111111111111111111111111111111111111111111111111111"}
	}
	sets := []string{"--set", "OWNER=acme", "--set", "REPO_NAME=w", "--set", "ISSUE_NUMBER=1", "--set", "FORGE_HOST=api.github.com"}
	t.Run("digest mismatch", func(t *testing.T) {
		env := base(t.TempDir())
		env["FULLSEND_POLICIES_DIGEST"] = strings.Repeat("0", 64)
		out, err := fullsendCmd(bin, env, append([]string{"run", "triage", project, "--diag-dir", t.TempDir()}, sets...)...).CombinedOutput()
		if exitStatus(err) != runner.ExitPolicy || !bytes.Contains(out, []byte("not the ones that were verified")) {
			t.Fatalf("exit %d:\n%s", exitStatus(err), out)
		}
	})
	// The red-team finding "digest pinning is optional": in CI a run without
	// the verify step's digest stops before openshell runs, with a hint.
	for _, ci := range []string{"GITHUB_ACTIONS", "GITLAB_CI"} {
		t.Run("unpinned in CI "+ci, func(t *testing.T) {
			state := t.TempDir()
			env := base(state)
			env[ci] = "true"
			out, err := fullsendCmd(bin, env, append([]string{"run", "triage", project, "--diag-dir", t.TempDir()}, sets...)...).CombinedOutput()
			if exitStatus(err) != runner.ExitPolicy || !bytes.Contains(out, []byte("no policies digest pinned")) ||
				!bytes.Contains(out, []byte("hint: set FULLSEND_POLICIES_DIGEST")) {
				t.Fatalf("exit %d:\n%s", exitStatus(err), out)
			}
			if _, err := os.Stat(filepath.Join(state, "calls.jsonl")); !os.IsNotExist(err) {
				t.Errorf("openshell ran for an unpinned run in CI")
			}
		})
	}
	// A sandbox image the verify step did not hand over stops the run in
	// preflight, before any sandbox exists.
	t.Run("unverified sandbox image in CI", func(t *testing.T) {
		state := t.TempDir()
		env := base(state)
		env["GITHUB_ACTIONS"] = "true"
		env["FULLSEND_POLICIES_DIGEST"] = "sha256:" + bundle.SHA256Hex(runMust(os.ReadFile(filepath.Join(project, "policies", "manifest.json"))))
		env["FULLSEND_SANDBOX_IMAGE"] = "ghcr.io/evil/sandbox@sha256:5555555555555555555555555555555555555555555555555555555555555555"
		out, err := fullsendCmd(bin, env, append([]string{"run", "triage", project, "--diag-dir", t.TempDir()}, sets...)...).CombinedOutput()
		if exitStatus(err) != runner.ExitPolicy || !bytes.Contains(out, []byte("not an image the verify step verified")) {
			t.Fatalf("exit %d:\n%s", exitStatus(err), out)
		}
		if calls, _ := os.ReadFile(filepath.Join(state, "calls.jsonl")); bytes.Contains(calls, []byte(`"create"`)) {
			t.Errorf("a sandbox was created from an unverified image:\n%s", calls)
		}
	})
	t.Run("unpinned outside CI says so", func(t *testing.T) {
		out, err := fullsendCmd(bin, base(t.TempDir()), append([]string{"run", "triage", project, "--diag-dir", t.TempDir()}, sets...)...).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("warning: policies digest not pinned")) {
			t.Fatalf("exit %d:\n%s", exitStatus(err), out)
		}
	})
	t.Run("unresolved placeholder", func(t *testing.T) {
		out, err := fullsendCmd(bin, base(t.TempDir()), "run", "triage", project, "--diag-dir", t.TempDir()).CombinedOutput()
		if exitStatus(err) != runner.ExitPolicy || !bytes.Contains(out, []byte("{{ISSUE_NUMBER}} is not set")) {
			t.Fatalf("exit %d:\n%s", exitStatus(err), out)
		}
	})
	t.Run("pass-env reaches the agent masked", func(t *testing.T) {
		env := base(t.TempDir())
		env["FULLSEND_AGENT_TOKEN"] = "fsat_cli_secret_0123456789"
		out, err := fullsendCmd(bin, env, append([]string{"run", "triage", project, "--diag-dir", t.TempDir(),
			"--pass-env", "FULLSEND_AGENT_*"}, sets...)...).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("agent token: ***")) || bytes.Contains(out, []byte("fsat_cli_secret")) {
			t.Fatalf("exit %d:\n%s", exitStatus(err), out)
		}
	})
	t.Run("agent exit propagated", func(t *testing.T) {
		env := base(t.TempDir())
		env["OPENSHELL_FAKE_FAIL"] = "exec-exit=5"
		out, err := fullsendCmd(bin, env, append([]string{"run", "triage", project, "--diag-dir", t.TempDir()}, sets...)...).CombinedOutput()
		if exitStatus(err) != 5 {
			t.Fatalf("exit %d:\n%s", exitStatus(err), out)
		}
	})
	t.Run("SIGTERM mid-run", func(t *testing.T) {
		state := t.TempDir()
		ws := t.TempDir()
		os.WriteFile(filepath.Join(ws, ".stub-sleep"), nil, 0o644)
		cmd := fullsendCmd(bin, base(state), append([]string{"run", "triage", project, "--workspace", ws, "--diag-dir", t.TempDir()}, sets...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitForAgent(t, state, cmd, &out)
		time.Sleep(300 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGTERM)
		err := cmd.Wait()
		if exitStatus(err) != runner.ExitInterrupted {
			t.Fatalf("exit %d, want %d:\n%s", exitStatus(err), runner.ExitInterrupted, out.String())
		}
		left, _ := filepath.Glob(filepath.Join(state, "sandboxes", "*.json"))
		calls, _ := os.ReadFile(filepath.Join(state, "calls.jsonl"))
		if len(left) != 0 || !bytes.Contains(calls, []byte(`"delete"`)) {
			t.Fatalf("sandbox not deleted after SIGTERM: %v\n%s", left, calls)
		}
	})
}

func runMust[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestRunDirs: the flags win, else the CI job's checkout and temporary
// directory (cienv), else the defaults.
func TestRunDirs(t *testing.T) {
	for _, tc := range []struct {
		name            string
		f               runFlags
		env             map[string]string
		workspace, diag string
	}{
		{"terminal", runFlags{}, nil, "", "fullsend-diag"},
		{"github", runFlags{}, map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": "/w", "RUNNER_TEMP": "/rt", "CI_PROJECT_DIR": "/gl"}, "/w", "/rt/fullsend-diag"},
		{"gitlab", runFlags{}, map[string]string{"GITLAB_CI": "true", "CI_PROJECT_DIR": "/builds/acme/w"}, "/builds/acme/w", "fullsend-diag"},
		{"flags win", runFlags{workspace: "ws", diagDir: "dd"}, map[string]string{"GITHUB_WORKSPACE": "/w", "RUNNER_TEMP": "/rt"}, "ws", "dd"},
	} {
		ws, diag := runDirs(tc.f, cienv.Detect(func(k string) string { return tc.env[k] }))
		if ws != tc.workspace || diag != tc.diag {
			t.Errorf("%s: %q %q, want %q %q", tc.name, ws, diag, tc.workspace, tc.diag)
		}
	}
}

// TestAttackPassEnvStarForgeToken: `--pass-env '*'` handed the job's forge
// and CI tokens to the agent. A pattern never selects a credential; naming
// one on its own still passes it, masked; --public-env shows a value and
// never takes a credential or a pattern.
func TestAttackPassEnvStarForgeToken(t *testing.T) {
	bin, project := runEnv(t)
	creds := map[string]string{"GITHUB_TOKEN": "ghs_jobtoken0123456789", "GH_TOKEN": "gho_cli0123456789",
		"CI_JOB_TOKEN": "glcbt-job0123456789", "ACTIONS_RUNTIME_TOKEN": "runtime0123456789", "CI_JOB_JWT_V2": "eyJjwt0123456789",
		"GITLAB_TOKEN": "glpat-0123456789", "GH_PAT": "ghp_pat0123456789"}
	ws := filepath.Join(t.TempDir(), "repo")
	os.MkdirAll(ws, 0o755)
	var script strings.Builder
	for _, k := range append(sortedKeys(creds), "FULLSEND_AGENT", "FULLSEND_AGENT_TOKEN") {
		script.WriteString("echo \"saw " + k + "=${" + k + ":-unset}\"\n")
	}
	os.WriteFile(filepath.Join(ws, ".stub-script"), []byte(script.String()), 0o644)
	sets := []string{"--set", "OWNER=acme", "--set", "REPO_NAME=w", "--set", "ISSUE_NUMBER=1", "--set", "FORGE_HOST=api.github.com"}
	for _, tc := range []struct {
		name  string
		flags []string
		exit  int
		want  map[string]string // variable: what the agent saw
	}{
		{"star", []string{"--pass-env", "*"}, 0, map[string]string{"GITHUB_TOKEN": "unset", "GH_TOKEN": "unset", "CI_JOB_TOKEN": "unset",
			"ACTIONS_RUNTIME_TOKEN": "unset", "CI_JOB_JWT_V2": "unset", "GITLAB_TOKEN": "unset", "GH_PAT": "unset"}},
		{"prefix", []string{"--pass-env", "GITHUB_*", "--pass-env", "CI_*"}, 0, map[string]string{"GITHUB_TOKEN": "unset", "CI_JOB_TOKEN": "unset", "CI_JOB_JWT_V2": "unset"}},
		{"named one by one", []string{"--pass-env", "GITHUB_TOKEN", "--pass-env", "*"}, 0, map[string]string{"GITHUB_TOKEN": "***", "CI_JOB_TOKEN": "unset"}},
		{"public", []string{"--pass-env", "FULLSEND_*", "--public-env", "FULLSEND_AGENT"}, 0,
			map[string]string{"FULLSEND_AGENT": "helper-agent", "FULLSEND_AGENT_TOKEN": "***"}},
		{"public credential", []string{"--public-env", "GITHUB_TOKEN"}, runner.ExitPolicy, nil},
		{"public pattern", []string{"--public-env", "FULLSEND_*"}, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"OPENSHELL_FAKE_STATE": t.TempDir(), "OPENSHELL_FAKE_GATEWAY": "up", "FULLSEND_IMAGE": "ghcr.io/fullsend-ai/agent-sandbox@sha256:1111111111111111111111111111111111111111111111111111111111111111",
				"FULLSEND_AGENT": "helper-agent", "FULLSEND_AGENT_TOKEN": "fsat_0123456789"}
			for k, v := range creds {
				env[k] = v
			}
			args := append([]string{"run", "triage", project, "--workspace", ws, "--diag-dir", t.TempDir()}, sets...)
			out, err := fullsendCmd(bin, env, append(args, tc.flags...)...).CombinedOutput()
			if exitStatus(err) != tc.exit {
				t.Fatalf("exit %d, want %d:\n%s", exitStatus(err), tc.exit, out)
			}
			for k, want := range tc.want {
				if !bytes.Contains(out, []byte("saw "+k+"="+want+"\n")) {
					t.Errorf("the agent should see %s=%s:\n%s", k, want, out)
				}
			}
			for k, v := range creds {
				if bytes.Contains(out, []byte(v)) {
					t.Errorf("%s value in the output:\n%s", k, out)
				}
			}
		})
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// waitForAgent waits until the openshell fake in state has recorded the
// agent's `sandbox exec`, killing cmd and failing the test after 30 s.
func waitForAgent(t *testing.T, state string, cmd *exec.Cmd, out *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		calls, _ := os.ReadFile(filepath.Join(state, "calls.jsonl"))
		if bytes.Contains(calls, []byte(`"exec"`)) {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("agent never started:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
