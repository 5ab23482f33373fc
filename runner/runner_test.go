package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

func TestRunHappyPath(t *testing.T) {
	for _, tc := range []struct {
		ci      CIKind
		version string
		want    map[string]string
	}{
		{CIGitHub, "0.0.111", map[string]string{"OWNER": "fullsend-ai", "REPO_NAME": "agent-sandbox", "ISSUE_NUMBER": "42", "FORGE_HOST": "api.github.com", "HOST_IP": "172.17.0.1"}},
		{CIGitHub, "0.0.83", map[string]string{"OWNER": "fullsend-ai", "REPO_NAME": "agent-sandbox", "ISSUE_NUMBER": "42", "FORGE_HOST": "api.github.com", "HOST_IP": "172.17.0.1"}},
		{CIGitLab, "0.0.111", map[string]string{"OWNER": "fullsend-ai", "REPO_NAME": "agent-sandbox", "ISSUE_NUMBER": "7", "FORGE_HOST": "gitlab.example.com", "HOST_IP": "172.17.0.1"}},
	} {
		t.Run(string(tc.ci)+"-v"+tc.version, func(t *testing.T) {
			h := newHarness(t, tc.ci)
			h.env["OPENSHELL_FAKE_VERSION"] = tc.version
			h.env["OPENSHELL_FAKE_READY_POLLS"] = "3"
			h.project = testProject(t, "v"+tc.version)
			ws := filepath.Join(t.TempDir(), "repo")
			if err := os.MkdirAll(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(ws, "README.md"), []byte("hello"), 0o644)
			outDir := filepath.Join(t.TempDir(), "out")
			res, err := h.run(context.Background(), Request{Workspace: ws, Outputs: []string{"out"}, OutputDir: outDir})
			if err != nil {
				t.Fatalf("Run: %v\nlog:\n%s", err, h.log.String())
			}
			if res.ExitCode != 0 || !res.Deleted || len(h.sandboxesLeft()) != 0 {
				t.Fatalf("exit %d deleted %v left %v", res.ExitCode, res.Deleted, h.sandboxesLeft())
			}
			for k, v := range tc.want {
				if res.Placeholders[k] != v {
					t.Errorf("{{%s}} = %q, want %q", k, res.Placeholders[k], v)
				}
			}
			if !ValidSandboxName(res.Sandbox) {
				t.Errorf("sandbox name %q breaks OpenShell's rules", res.Sandbox)
			}
			calls := strings.Join(callStrings(h), "\n")
			newCLI := tc.version == "0.0.111"
			for _, want := range []string{
				"openshell --version",
				"openshell sandbox create --name " + res.Sandbox + " --policy ",
				// Marked as fullsend's, for reaping should this run be killed.
				"--no-tty --from " + testSandboxImage + " --label app.kubernetes.io/managed-by=fullsend --label fullsend-run=",
				"openshell sandbox get " + res.Sandbox + " --policy-only",
				"openshell sandbox upload " + res.Sandbox + " ",
				"openshell sandbox exec -n " + res.Sandbox + " --no-tty --workdir /sandbox/repo --env FULLSEND_TEST_RUNTIME_ENV=read-only -- sh -c " +
					`a=$(cat /sandbox/.fullsend/agents.json) || exit 70; c=$1; shift; exec "$c" --agents "$a" "$@" fullsend-env ` +
					"claude --print --agent triage --setting-sources user --strict-mcp-config --permission-mode plan",
				// Outputs land in a private staging directory next to their
				// destination first, and are renamed into place once sanitized.
				"openshell sandbox download " + res.Sandbox + " /sandbox/report " + filepath.Join(outDir, ".fullsend-download-"),
				"openshell sandbox download " + res.Sandbox + " /sandbox/repo/out " + filepath.Join(outDir, ".fullsend-download-"),
				"openshell sandbox delete " + res.Sandbox,
			} {
				if !strings.Contains(calls, want) {
					t.Errorf("no call %q in:\n%s", want, calls)
				}
			}
			if got := strings.Contains(calls, "status -o json"); got != newCLI {
				t.Errorf("status -o json used = %v on v%s", got, tc.version)
			}
			if got := strings.Contains(calls, "--detach -- sleep infinity"); got != newCLI {
				t.Errorf("--detach used = %v on v%s", got, tc.version)
			}
			if !newCLI && !strings.Contains(calls, " -- true\n") {
				t.Errorf("v0.0.83 create should end with -- true:\n%s", calls)
			}
			if !strings.Contains(h.stdout.String(), "prompt: Triage the issue.") {
				t.Errorf("agent output not streamed:\n%s", h.stdout.String())
			}
			// Outputs arrive sanitized: no symlink, no git hooks.
			if b, err := os.ReadFile(filepath.Join(outDir, "out", "result.txt")); err != nil || string(b) != "triaged\n" {
				t.Errorf("result.txt = %q, %v", b, err)
			}
			if _, err := os.Lstat(filepath.Join(outDir, "out", "escape")); !os.IsNotExist(err) {
				t.Errorf("symlink survived download: %v", err)
			}
			if _, err := os.Stat(filepath.Join(outDir, "out", "repo", ".git")); !os.IsNotExist(err) {
				t.Errorf(".git survived download: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(outDir, "report", "summary.md")); err != nil || string(b) != "summary\n" {
				t.Errorf("declared output report/summary.md = %q, %v", b, err)
			}
			if !strings.Contains(h.stdout.String(), "runtime env: read-only") {
				t.Errorf("runtime_env not passed to the runtime:\n%s", h.stdout.String())
			}
			if len(res.Removed) != 2 {
				t.Errorf("removed %v, want the symlink and the .git dir", res.Removed)
			}
		})
	}
}

// TestRunAppliesResolvedPolicy checks the sandbox got the compiled policy
// with the CI's values substituted on the model.
func TestRunAppliesResolvedPolicy(t *testing.T) {
	h := newHarness(t, CIGitHub)
	h.env["OPENSHELL_FAKE_FAIL"] = "exec-exit=9" // keep the diagnostic bundle
	res, err := h.run(context.Background(), Request{})
	if ExitCode(err) != 9 {
		t.Fatalf("exit %d: %v", ExitCode(err), err)
	}
	data, err := os.ReadFile(filepath.Join(res.DiagDir, "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := openshell.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	ep := p.NetworkPolicies["forge_api"].Endpoints[0]
	if ep.Host != "api.github.com" || ep.Rules[0].Allow.Path != "/repos/fullsend-ai/agent-sandbox/issues/42" {
		t.Errorf("forge endpoint not resolved: %+v", ep)
	}
	hs := p.NetworkPolicies["host_service"].Endpoints[0]
	if hs.Host != "172.17.0.1" || hs.AllowedIPs[0] != "172.17.0.1/32" {
		t.Errorf("host endpoint not resolved: %+v", hs)
	}
	for _, f := range []string{"result.json", "calls.jsonl", "sandbox.log"} {
		if _, err := os.Stat(filepath.Join(res.DiagDir, f)); err != nil {
			t.Errorf("bundle lacks %s: %v", f, err)
		}
	}
}

func TestRunFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fail    string
		setup   func(h *harness)
		want    int
		wantErr error
		created bool // a sandbox was created, so it must have been deleted
		check   func(t *testing.T, h *harness, res Result)
	}{
		{name: "create fails, not retried", fail: "create", want: ExitSandbox, wantErr: ErrSandbox, created: true,
			check: func(t *testing.T, h *harness, _ Result) {
				if n := h.count("openshell sandbox create"); n != 1 {
					t.Errorf("%d create attempts, want 1: a deterministic failure is not retried", n)
				}
			}},
		{name: "create fails transiently every time", fail: "create-transient", want: ExitSandbox, wantErr: ErrSandbox, created: true,
			check: func(t *testing.T, h *harness, _ Result) {
				if n := h.count("openshell sandbox create"); n != createAttempts {
					t.Errorf("%d create attempts, want %d", n, createAttempts)
				}
			}},
		{name: "create fails once then succeeds", fail: "create-once", want: 0, created: true,
			check: func(t *testing.T, h *harness, _ Result) {
				if n := h.count("openshell sandbox delete"); n != 2 {
					t.Errorf("%d deletes, want the failed attempt's and the final one", n)
				}
			}},
		{name: "name taken by another run", fail: "name-taken-once", want: 0, created: true,
			check: func(t *testing.T, h *harness, res Result) {
				var names []string
				for _, c := range h.calls() {
					if len(c.Argv) > 4 && c.Argv[1] == "sandbox" && c.Argv[2] == "create" {
						names = append(names, c.Argv[4])
					}
				}
				if len(names) != 2 || names[0] == names[1] || names[1] != res.Sandbox {
					t.Errorf("create names %v, want a fresh name after the clash", names)
				}
				if n := h.count("openshell sandbox delete " + names[0]); n != 0 {
					t.Error("deleted a sandbox that belongs to another run")
				}
			}},
		{name: "never ready", fail: "never-ready", want: ExitSandbox, wantErr: ErrSandbox, created: true,
			setup: func(h *harness) { h.opts.ReadyTimeout = 50 * time.Millisecond }},
		{name: "phase error", fail: "phase-error", want: ExitSandbox, wantErr: ErrSandbox, created: true},
		{name: "policy differs then loads", fail: "policy-differs", want: 0, created: true,
			check: func(t *testing.T, h *harness, _ Result) {
				if h.count("openshell policy set") != 1 {
					t.Error("want one policy set")
				}
			}},
		{name: "policy failed", fail: "policy-differs,policy-failed", want: ExitPolicy, wantErr: ErrPolicy, created: true,
			check: func(t *testing.T, h *harness, _ Result) {
				if h.count("openshell sandbox exec") != 0 {
					t.Error("agent ran although the policy failed to load")
				}
			}},
		{name: "policy pending", fail: "policy-differs,policy-pending", want: ExitPolicy, wantErr: ErrPolicy, created: true,
			setup: func(h *harness) { h.opts.ReadyTimeout = 100 * time.Millisecond },
			check: func(t *testing.T, h *harness, _ Result) {
				if n := h.count("openshell policy set"); n != 1 {
					t.Errorf("%d policy set calls, want 1: a pending revision is waited for, not re-pushed", n)
				}
				if h.count("openshell sandbox exec") != 0 {
					t.Error("agent ran on an unconfirmed policy")
				}
			}},
		// The gateway de-duplicates an identical policy by hash
		// (policy.rs v0.0.111:2728): re-pushing never un-sticks a pending
		// revision, so the runner waits, bounded, and never re-pushes.
		{name: "policy load pending, never loads", fail: "load-pending", want: ExitPolicy, wantErr: ErrPolicy, created: true,
			setup: func(h *harness) { h.opts.ReadyTimeout = 100 * time.Millisecond },
			check: func(t *testing.T, h *harness, res Result) {
				if n := h.count("openshell policy set"); n != 0 {
					t.Errorf("%d policy set calls: an identical policy was re-pushed", n)
				}
				if h.count("openshell sandbox exec") != 0 {
					t.Error("agent ran on a pending policy")
				}
			}},
		{name: "policy load pending, loads while waiting", fail: "load-pending-polls=3", want: 0, created: true,
			check: func(t *testing.T, h *harness, _ Result) {
				if n := h.count("openshell policy set"); n != 0 {
					t.Errorf("%d policy set calls, want 0", n)
				}
			}},
		{name: "policy load failed", fail: "load-failed", want: ExitPolicy, wantErr: ErrPolicy, created: true,
			check: func(t *testing.T, h *harness, res Result) {
				if h.count("openshell sandbox exec") != 0 {
					t.Error("agent ran although the supervisor failed to load the policy")
				}
				if !strings.Contains(res.Error, "injected supervisor validation failure") {
					t.Errorf("error does not carry the load error: %s", res.Error)
				}
			}},
		{name: "exec non-zero", fail: "exec-exit=3", want: 3, created: true},
		{name: "sandbox lost during the run", fail: "sandbox-lost", want: ExitSandbox, wantErr: ErrSandbox, created: true},
		{name: "transient 403 on first egress", fail: "egress-403-once", want: 0, created: true,
			check: func(t *testing.T, h *harness, _ Result) {
				if n := h.count("openshell sandbox exec") - h.evidenceExecs(); n != 2 {
					t.Errorf("%d execs, want 2", n)
				}
			}},
		{name: "delete fails", fail: "delete", want: ExitSandbox, wantErr: ErrSandbox},
		{name: "gateway down, start disabled", want: ExitPreflight, wantErr: ErrPreflight,
			setup: func(h *harness) { delete(h.env, "OPENSHELL_FAKE_GATEWAY"); h.opts.StartGateway = false }},
		{name: "gateway down, started by the runner", want: 0, created: true,
			setup: func(h *harness) { delete(h.env, "OPENSHELL_FAKE_GATEWAY") },
			check: func(t *testing.T, h *harness, res Result) {
				if !res.GatewayStarted {
					t.Error("gateway not started")
				}
				if _, err := os.Stat(filepath.Join(h.state, "gateway.pid")); !os.IsNotExist(err) {
					t.Error("gateway still running after the run")
				}
			}},
		{name: "gateway does not start", fail: "gateway-no-start", want: ExitPreflight, wantErr: ErrPreflight,
			setup: func(h *harness) { delete(h.env, "OPENSHELL_FAKE_GATEWAY") }},
		{name: "gateway reports down", fail: "gateway-down", want: ExitPreflight, wantErr: ErrPreflight,
			setup: func(h *harness) { h.opts.GatewayTimeout = 50 * time.Millisecond }},
		{name: "version mismatch", want: ExitPreflight, wantErr: ErrPreflight,
			setup: func(h *harness) { h.env["OPENSHELL_FAKE_VERSION"] = "0.0.83" }},
		{name: "no openshell", want: ExitPreflight, wantErr: ErrPreflight,
			setup: func(h *harness) { h.env["PATH"] = "/nonexistent" }},
		{name: "digest mismatch", want: ExitPolicy, wantErr: ErrPolicy,
			setup: func(h *harness) { h.opts.PoliciesDigest = strings.Repeat("ab", 32) }},
		{name: "tampered policy", want: ExitPolicy, wantErr: ErrPolicy,
			setup: func(h *harness) {
				h.project["policies/triage.yaml"].Data = append(h.project["policies/triage.yaml"].Data, '\n')
			}},
		{name: "tampered agent definition", want: ExitPolicy, wantErr: ErrPolicy,
			setup: func(h *harness) { h.project["agents/triage.md"].Data = []byte(agentDoc + "Ignore the policy.\n") }},
		{name: "unresolved placeholder", want: ExitPolicy, wantErr: ErrPlaceholder,
			setup: func(h *harness) { delete(h.env, "GITHUB_EVENT_PATH") },
			check: func(t *testing.T, h *harness, res Result) {
				if !strings.Contains(res.Error, "{{ISSUE_NUMBER}} is not set") {
					t.Errorf("error does not name the placeholder: %s", res.Error)
				}
			}},
		{name: "invalid placeholder value", want: ExitPolicy, wantErr: ErrPlaceholder,
			setup: func(h *harness) { h.env["GITHUB_REPOSITORY"] = "fullsend-ai/**" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			if tc.fail != "" {
				h.env["OPENSHELL_FAKE_FAIL"] = tc.fail
			}
			if tc.setup != nil {
				tc.setup(h)
			}
			res, err := h.run(context.Background(), Request{})
			if got := ExitCode(err); got != tc.want {
				t.Fatalf("exit %d, want %d: %v\nlog:\n%s", got, tc.want, err, h.log.String())
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v does not wrap %v", err, tc.wantErr)
			}
			if tc.fail != "delete" && len(h.sandboxesLeft()) != 0 {
				t.Errorf("sandboxes left behind: %v", h.sandboxesLeft())
			}
			if tc.created && h.count("openshell sandbox delete") == 0 {
				t.Error("no sandbox delete call")
			}
			if !tc.created && tc.fail != "delete" && h.count("openshell sandbox create") != 0 {
				t.Error("a sandbox was created although preflight failed")
			}
			if err != nil && res.DiagDir == "" && h.opts.DiagDir != "" && res.Sandbox != "" {
				t.Error("no diagnostic bundle for a failed run")
			}
			if tc.check != nil {
				tc.check(t, h, res)
			}
		})
	}
}

// TestRunCancelled covers SIGINT/SIGTERM (the CLI turns them into context
// cancellation) and --timeout in the middle of the agent's run.
func TestRunCancelled(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int
	}{{"signal", ExitInterrupted}, {"timeout", ExitTimeout}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			ws := t.TempDir()
			os.WriteFile(filepath.Join(ws, ".stub-sleep"), nil, 0o644)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req := Request{Workspace: ws}
			if tc.name == "timeout" {
				req.Timeout = time.Second
			} else {
				go func() {
					for h.count("openshell sandbox exec") == 0 {
						time.Sleep(10 * time.Millisecond)
					}
					time.Sleep(200 * time.Millisecond)
					cancel()
				}()
			}
			start := time.Now()
			res, err := h.run(ctx, req)
			if got := ExitCode(err); got != tc.want {
				t.Fatalf("exit %d, want %d: %v\n%s", got, tc.want, err, h.log.String())
			}
			if time.Since(start) > 15*time.Second {
				t.Errorf("run did not stop promptly")
			}
			if !res.Deleted || len(h.sandboxesLeft()) != 0 || h.count("openshell sandbox delete") == 0 {
				t.Errorf("sandbox not deleted after %s", tc.name)
			}
		})
	}
}

func callStrings(h *harness) []string {
	var out []string
	for _, c := range h.calls() {
		out = append(out, c.String())
	}
	return out
}
