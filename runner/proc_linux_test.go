//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/runner/redact"
)

// gone reports whether pid has ended: no /proc entry, or a zombie (its
// new parent may be a container's pid 1 that never reaps).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	return len(f) == 0 || f[0] == "Z" || f[0] == "X"
}

// waitGone polls, under a generous deadline, until every pid has ended.
func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, pid := range pids {
		for !gone(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("%s (pid %d) is still running", what, pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// waitFor polls, under a generous deadline, until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childPIDs lists the pids whose parent is pid.
func childPIDs(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if fields := strings.Fields(string(b[i+1:])); len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			out = append(out, child)
		}
	}
	return out
}

// fakeDriver is a driver of the openshell fake in bin with its state in
// state, and a sandbox already created in it.
func fakeDriver(t *testing.T, bin, state, name string) *driver {
	t.Helper()
	d := &driver{bin: filepath.Join(bin, "openshell"), mask: &redact.Masker{}, env: []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"OPENSHELL_FAKE_STATE=" + state, "OPENSHELL_FAKE_GATEWAY=up"}}
	if _, err := d.run(context.Background(), callOpts{}, "sandbox", "create", "--name", name, "--detach", "--", "sleep", "infinity"); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDriverHelperProcess is not a test of its own: it is the runner that
// TestOpenShellDiesWithTheRunner starts and SIGKILLs, a driver running a
// long `sandbox exec` in the fake.
func TestDriverHelperProcess(t *testing.T) {
	if os.Getenv("FULLSEND_TEST_DRIVER_HELPER") != "1" {
		t.Skip("started by TestOpenShellDiesWithTheRunner")
	}
	// The test that starts this process built the fake and owns the
	// state directory: a SIGKILLed process cleans up nothing.
	d := fakeDriver(t, os.Getenv("FULLSEND_TEST_FAKE_BIN"), os.Getenv("FULLSEND_TEST_FAKE_STATE"), "fs-killed")
	_, err := d.run(context.Background(), callOpts{stdout: io.Discard}, "sandbox", "exec", "-n", "fs-killed", "--", "sleep", "600")
	t.Fatalf("the exec returned: %v", err)
}

// TestOpenShellDiesWithTheRunner is the regression test of "a killed run's
// openshell child survives SIGKILL": a runner process (the driver, in a
// subprocess) runs a long `sandbox exec` through the openshell fake and is
// SIGKILLed; its openshell process must end too, not run on as an orphan.
func TestOpenShellDiesWithTheRunner(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	bin := fakeBin(t) // built once, here, not in the helper
	out, err := os.Create(filepath.Join(t.TempDir(), "helper.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	helper := exec.Command(os.Args[0], "-test.run=^TestDriverHelperProcess$", "-test.v")
	helper.Env = append(os.Environ(), "FULLSEND_TEST_DRIVER_HELPER=1", "FULLSEND_TEST_FAKE_BIN="+bin, "FULLSEND_TEST_FAKE_STATE="+t.TempDir())
	helper.Stdout, helper.Stderr = out, out
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	// The fake's exec, the helper's child, is running once it has started
	// its own child, the command (`sleep 600`).
	var fake int
	waitFor(t, "the fake's sandbox exec", func() bool {
		for _, pid := range childPIDs(helper.Process.Pid) {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if bytes.Contains(cmdline, []byte("sandbox\x00exec\x00")) && len(childPIDs(pid)) > 0 {
				fake = pid
				return true
			}
		}
		return false
	})
	// The command stands for the agent in the sandbox, which the fake runs
	// on the host; the reaper deletes a real one. End it with the test.
	t.Cleanup(func() { _ = syscall.Kill(-fake, syscall.SIGKILL) })
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	waitGone(t, "the openshell process of the SIGKILLed runner", fake)
}

// TestOpenShellLeavesNoProcessBehind: whatever a call's openshell process
// leaves in its process group is killed when the call ends, whether the
// process exited on its own (a child it left running) or was killed after
// a cancellation (a child that ignores SIGTERM).
func TestOpenShellLeavesNoProcessBehind(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	for _, tc := range []struct {
		name   string
		script string // the exec'd command; writes the pid to check into $1
		cancel bool
	}{
		{name: "a background child outlives the exec", script: `sleep 600 </dev/null >/dev/null 2>&1 & echo $! > "$1"`},
		{name: "a child ignores the cancellation's SIGTERM", cancel: true,
			script: `trap "" TERM; echo $$ > "$1"; exec sleep 600 </dev/null >/dev/null 2>&1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fakeDriver(t, fakeBin(t), t.TempDir(), "fs-left")
			d.killAfter = 100 * time.Millisecond
			marker := filepath.Join(t.TempDir(), "pid")
			pid := func() int {
				b, _ := os.ReadFile(marker)
				n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				return n
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				go func() {
					for pid() == 0 {
						time.Sleep(10 * time.Millisecond)
					}
					cancel()
				}()
			}
			_, err := d.run(ctx, callOpts{stdout: io.Discard}, "sandbox", "exec", "-n", "fs-left", "--", "sh", "-c", tc.script, "sh", marker)
			if tc.cancel != (err != nil) || tc.cancel && !errors.Is(err, ErrInterrupted) {
				t.Fatalf("exec: %v", err)
			}
			left := pid()
			if left == 0 {
				t.Fatal("the command did not record its pid")
			}
			t.Cleanup(func() { _ = syscall.Kill(left, syscall.SIGKILL) })
			waitGone(t, fmt.Sprintf("the process openshell left behind (%s)", tc.name), left)
		})
	}
}
