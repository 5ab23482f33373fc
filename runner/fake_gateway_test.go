package runner

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestOpenShellFakeGateway is the contract of openshell-gateway and its
// registration, per version: a driver is required (--drivers podman needs
// a responding Podman socket), TLS material is required unless
// --disable-tls, the port is explicit; `gateway add --local` registers it;
// status is exit 0 while it answers and exit 1 once it is gone
// (crates/openshell-server/src/cli.rs v0.0.83:47-128, v0.0.111:50-132,
// 299-308; crates/openshell-server/src/lib.rs v0.0.83:847, v0.0.111:1256;
// crates/openshell-cli/src/main.rs v0.0.83:1024, v0.0.111:1121;
// commands/gateway.rs v0.0.111:52-110).
func TestOpenShellFakeGateway(t *testing.T) {
	bin := fakeBin(t)
	for _, version := range []string{"0.0.83", "0.0.111"} {
		t.Run(version, func(t *testing.T) {
			state := t.TempDir()
			sockDir, err := os.MkdirTemp("", "fs-pm-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(sockDir)
			sock := filepath.Join(sockDir, "podman.sock")
			env := []string{"PATH=" + bin, "OPENSHELL_FAKE_STATE=" + state, "OPENSHELL_FAKE_VERSION=" + version, "HOME=" + t.TempDir()}
			run := func(want int, stderr string, name string, args ...string) {
				t.Helper()
				cmd := exec.Command(filepath.Join(bin, name), args...)
				cmd.Env = env
				var errb bytes.Buffer
				cmd.Stderr = &errb
				err := cmd.Run()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				if code != want || !strings.Contains(errb.String(), stderr) {
					t.Fatalf("%s %v: exit %d (want %d), stderr %s", name, args, code, want, errb.String())
				}
			}
			port, err := freePort()
			if err != nil {
				t.Fatal(err)
			}
			p := strconv.Itoa(port)
			run(1, "Podman API socket", "openshell-gateway", "--drivers", "podman", "--disable-tls", "--port", p)
			run(2, "invalid value", "openshell-gateway", "--drivers", "lxc", "--disable-tls")
			podman := exec.Command(filepath.Join(bin, "podman"), "system", "service", "--time=0", "unix://"+sock)
			podman.Env = env
			if err := podman.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { podman.Process.Kill(); podman.Wait() }()
			for i := 0; !socketAnswers(sock); i++ {
				if i > 500 {
					t.Fatal("fake podman service did not listen")
				}
				time.Sleep(10 * time.Millisecond)
			}
			env = append(env, "OPENSHELL_PODMAN_SOCKET="+sock)
			run(1, "--tls-cert is required when TLS is enabled", "openshell-gateway", "--drivers", "podman", "--port", p)
			gw := exec.Command(filepath.Join(bin, "openshell-gateway"), "--drivers", "podman", "--disable-tls", "--bind-address", "127.0.0.1", "--port", p)
			gw.Env = env
			if err := gw.Start(); err != nil {
				t.Fatal(err)
			}
			for i := 0; ; i++ {
				if _, err := os.Stat(filepath.Join(state, "gateway.pid")); err == nil {
					break
				}
				if i > 500 {
					t.Fatal("fake gateway did not start")
				}
				time.Sleep(10 * time.Millisecond)
			}
			run(0, "", "openshell", "status") // not configured: exit 0
			run(0, "", "openshell", "gateway", "add", "http://127.0.0.1:"+p, "--local", "--name", "fullsend")
			run(0, "", "openshell", "status")
			gw.Process.Signal(os.Interrupt)
			gw.Wait()
			run(1, "Connection refused", "openshell", "status")
		})
	}
}
