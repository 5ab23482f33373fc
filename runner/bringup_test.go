package runner

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// gatewayInfo is what the fake gateway recorded about how it was started.
type gatewayInfo struct {
	Driver          string `json:"driver"`
	Listen          string `json:"listen"`
	Scheme          string `json:"scheme"`
	SupervisorImage string `json:"supervisor_image"`
}

func (h *harness) gatewayInfo() gatewayInfo {
	h.t.Helper()
	var gi gatewayInfo
	b, err := os.ReadFile(filepath.Join(h.state, "gateway-info.json"))
	if err != nil {
		h.t.Fatalf("no gateway was started: %v\n%s", err, h.log.String())
	}
	if err := json.Unmarshal(b, &gi); err != nil {
		h.t.Fatal(err)
	}
	return gi
}

// pathWithout returns a PATH directory holding links to the fake's tools
// except the named ones.
func pathWithout(t *testing.T, drop ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range []string{"openshell", "openshell-gateway", "podman", "ssh", "claude", "opencode"} {
		skip := false
		for _, d := range drop {
			skip = skip || d == n
		}
		if !skip {
			if err := os.Symlink(filepath.Join(fakeBin(t), n), filepath.Join(dir, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// TestGatewayBringUp is mode (b): no gateway is registered, so the runner
// starts the Podman API service and openshell-gateway with the podman
// driver, TLS off on 127.0.0.1, an explicit port and a pinned supervisor
// image (crates/openshell-server/src/cli.rs v0.0.111:50-132,299-308), polls
// status until exit 0 and registers it with `gateway add --local`.
func TestGatewayBringUp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  string
		setup func(h *harness)
	}{
		{name: "nothing registered, auto", mode: GatewayAuto},
		{name: "a registered gateway refuses connections, auto", mode: GatewayAuto, setup: func(h *harness) {
			os.WriteFile(filepath.Join(h.state, "gateway.json"), []byte(`{"name":"old","endpoint":"http://127.0.0.1:1"}`), 0o600)
		}},
		{name: "a healthy gateway exists, start", mode: GatewayStart, setup: func(h *harness) {}},
		{name: "a run before registered the name, gateway add refuses it again", mode: GatewayAuto, setup: func(h *harness) {
			os.WriteFile(filepath.Join(h.state, "gateway.json"), []byte(`{"name":"fullsend","endpoint":"http://127.0.0.1:1"}`), 0o600)
		}},
		{name: "Kubernetes executor: the podman driver is forced", mode: GatewayAuto, setup: func(h *harness) {
			h.env["KUBERNETES_SERVICE_HOST"] = "10.0.0.1"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			if tc.mode != GatewayStart {
				delete(h.env, "OPENSHELL_FAKE_GATEWAY")
			}
			h.opts.GatewayMode = tc.mode
			if tc.setup != nil {
				tc.setup(h)
			}
			if tc.mode == GatewayStart {
				delete(h.env, "OPENSHELL_FAKE_GATEWAY") // "healthy" below means a registered, answering one
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				os.WriteFile(filepath.Join(h.state, "gateway.json"), []byte(`{"name":"vm","endpoint":"http://`+ln.Addr().String()+`"}`), 0o600)
			}
			res, err := h.run(context.Background(), Request{})
			if err != nil {
				t.Fatalf("%v\n%s", err, h.log.String())
			}
			if !res.GatewayStarted || res.GatewayEndpoint == "" {
				t.Fatalf("gateway not started: %+v", res)
			}
			gi := h.gatewayInfo()
			if gi.Driver != "podman" || gi.Scheme != "http" || gi.SupervisorImage != testSupervisorImage ||
				"http://"+gi.Listen != res.GatewayEndpoint || !strings.HasPrefix(gi.Listen, "127.0.0.1:") {
				t.Errorf("gateway started as %+v, endpoint %s", gi, res.GatewayEndpoint)
			}
			if h.count("openshell gateway add "+res.GatewayEndpoint+" --local --name fullsend") != 1 {
				t.Error("the started gateway was not registered with gateway add --local")
			}
			if _, err := os.Stat(filepath.Join(h.state, "gateway.pid")); !os.IsNotExist(err) {
				t.Error("gateway still running after the run")
			}
			if len(h.sandboxesLeft()) != 0 {
				t.Error("sandbox left behind")
			}
		})
	}
}

// TestPreflightPrerequisites: a missing prerequisite stops the run before
// anything is created, with the cause and the next step.
func TestPreflightPrerequisites(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, h *harness)
		want  int
		msg   string
	}{
		{name: "no ssh", want: ExitPreflight, msg: "ssh not found", setup: func(t *testing.T, h *harness) {
			h.env["PATH"] = pathWithout(t, "ssh")
		}},
		{name: "no sandbox image", want: ExitPreflight, msg: "default, unpinned image", setup: func(t *testing.T, h *harness) {
			h.opts.SandboxImage, h.opts.Verified = "", VerifiedImages{}
		}},
		{name: "sandbox image by tag", want: ExitPreflight, msg: "not pinned by digest", setup: func(t *testing.T, h *harness) {
			h.opts.SandboxImage = "ghcr.io/fullsend-ai/agent-sandbox:latest"
		}},
		{name: "no driver for a gateway to start", want: ExitPreflight, msg: "needs podman", setup: func(t *testing.T, h *harness) {
			delete(h.env, "OPENSHELL_FAKE_GATEWAY")
			h.env["PATH"] = pathWithout(t, "podman")
		}},
		{name: "no openshell-gateway", want: ExitPreflight, msg: "openshell-gateway not found", setup: func(t *testing.T, h *harness) {
			delete(h.env, "OPENSHELL_FAKE_GATEWAY")
			h.env["PATH"] = pathWithout(t, "openshell-gateway")
		}},
		{name: "supervisor image by tag", want: ExitPreflight, msg: "supervisor image", setup: func(t *testing.T, h *harness) {
			delete(h.env, "OPENSHELL_FAKE_GATEWAY")
			h.opts.SupervisorImage = "ghcr.io/nvidia/openshell/supervisor:0.0.111"
		}},
		{name: "existing mode, registered gateway down", want: ExitPreflight, msg: "--gateway existing", setup: func(t *testing.T, h *harness) {
			delete(h.env, "OPENSHELL_FAKE_GATEWAY")
			os.WriteFile(filepath.Join(h.state, "gateway.json"), []byte(`{"name":"vm","endpoint":"http://127.0.0.1:1"}`), 0o600)
			h.opts.GatewayMode = GatewayExisting
		}},
		{name: "bad gateway mode", want: ExitPreflight, msg: "gateway mode", setup: func(t *testing.T, h *harness) {
			h.opts.GatewayMode = "sometimes"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			tc.setup(t, h)
			res, err := h.run(context.Background(), Request{})
			if got := ExitCode(err); got != tc.want {
				t.Fatalf("exit %d, want %d: %v\n%s", got, tc.want, err, h.log.String())
			}
			if !strings.Contains(res.Error, tc.msg) || !strings.Contains(res.Error, "next:") && tc.name != "bad gateway mode" {
				t.Errorf("error %q does not say %q and what to do next", res.Error, tc.msg)
			}
			if n := h.count("openshell sandbox create"); n != 0 {
				t.Errorf("%d sandbox create calls after a failed preflight", n)
			}
			if _, err := os.Stat(filepath.Join(h.state, "gateway.pid")); err == nil {
				t.Error("a gateway was started although a prerequisite was missing")
			}
			if strings.Count(h.log.String(), res.Error) > 1 {
				t.Errorf("the error is printed more than once:\n%s", h.log.String())
			}
		})
	}
}

// TestPolicyWritable follows Landlock as the supervisor sets it up: writes
// only below read_write paths, plus the workdir with include_workdir
// (crates/openshell-supervisor-process/src/sandbox/linux/landlock.rs:135-143
// @ v0.0.111). A read-only /sandbox refuses the runner's uploads.
func TestPolicyWritable(t *testing.T) {
	ro := &openshell.Policy{Version: 1, FilesystemPolicy: &openshell.FilesystemPolicy{
		ReadOnly: []string{"/usr", "/sandbox"}, ReadWrite: []string{"/tmp", "/sandbox/.claude"}}}
	wd := &openshell.Policy{Version: 1, FilesystemPolicy: &openshell.FilesystemPolicy{IncludeWorkdir: true, ReadOnly: []string{"/usr"}}}
	for _, tc := range []struct {
		pol  *openshell.Policy
		path string
		want bool
	}{
		{ro, "/sandbox/.claude", true},
		{ro, "/sandbox/.claude/agents", true},
		{ro, "/sandbox/.fullsend", false},
		{ro, "/sandbox/repo", false},
		{ro, "/tmp/x", true},
		{ro, "/tmpx", false},
		{wd, "/sandbox/repo", true},
		{wd, "/usr/x", false},
		{&openshell.Policy{Version: 1}, "/sandbox", false},
	} {
		if got := policyWritable(tc.pol, tc.path); got != tc.want {
			t.Errorf("policyWritable(%v, %s) = %v, want %v", tc.pol.FilesystemPolicy, tc.path, got, tc.want)
		}
	}
	c := &checker{}
	checkWritable(c, ro, []string{"/sandbox/.claude", "/sandbox/.fullsend", "/sandbox/repo"})
	if err := c.first(); !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), "/sandbox/.fullsend, /sandbox/repo") {
		t.Errorf("checkWritable: %v", err)
	}
}

// TestBringUpCancelledDuringExec: a run that started its own gateway and is
// interrupted (the CLI's SIGTERM) while the agent runs deletes the sandbox
// first, then stops the gateway and the Podman service it started.
func TestBringUpCancelledDuringExec(t *testing.T) {
	h := newHarness(t, CIGitHub)
	delete(h.env, "OPENSHELL_FAKE_GATEWAY")
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, ".stub-sleep"), nil, 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for h.count("openshell sandbox exec") == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		cancel()
	}()
	res, err := h.run(ctx, Request{Workspace: ws})
	if got := ExitCode(err); got != ExitInterrupted {
		t.Fatalf("exit %d, want %d: %v\n%s", got, ExitInterrupted, err, h.log.String())
	}
	if !res.GatewayStarted || !res.Deleted || len(h.sandboxesLeft()) != 0 {
		t.Errorf("gateway started %v, sandbox deleted %v, left %v", res.GatewayStarted, res.Deleted, h.sandboxesLeft())
	}
	if _, err := os.Stat(filepath.Join(h.state, "gateway.pid")); !os.IsNotExist(err) {
		t.Error("gateway still running after the interrupted run")
	}
	// the gateway's port no longer answers
	if c, err := net.Dial("tcp", strings.TrimPrefix(res.GatewayEndpoint, "http://")); err == nil {
		c.Close()
		t.Error("the gateway's port still answers")
	}
}
