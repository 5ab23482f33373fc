package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/runner"
)

// childrenOf lists the pids whose parent is pid (from /proc).
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			out = append(out, child)
		}
	}
	return out
}

// TestRunReapsSandboxOfSIGKILLedRun is the red-team finding "a SIGKILLed run
// leaves its sandbox": `fullsend run` killed with SIGKILL mid-agent cannot
// delete its sandbox; the next run on this runner does, and says so.
func TestRunReapsSandboxOfSIGKILLedRun(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	bin, project := runEnv(t)
	state, home := t.TempDir(), t.TempDir()
	env := map[string]string{"OPENSHELL_FAKE_STATE": state, "OPENSHELL_FAKE_GATEWAY": "up", "HOME": home, "FULLSEND_IMAGE": "ghcr.io/fullsend-ai/agent-sandbox@sha256:1111111111111111111111111111111111111111111111111111111111111111"}
	sets := []string{"--set", "OWNER=acme", "--set", "REPO_NAME=w", "--set", "ISSUE_NUMBER=1", "--set", "FORGE_HOST=api.github.com"}
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, ".stub-sleep"), nil, 0o644)
	killed := fullsendCmd(bin, env, append([]string{"run", "triage", project, "--workspace", ws, "--diag-dir", t.TempDir()}, sets...)...)
	var out bytes.Buffer
	killed.Stdout, killed.Stderr = &out, &out
	killed.WaitDelay = time.Second // the orphaned openshell keeps the pipe open
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	waitForAgent(t, state, killed, &out)
	// The runner starts openshell in its own process group, which SIGKILL
	// of the runner does not reach: end it when the test ends.
	for _, child := range childrenOf(killed.Process.Pid) {
		t.Cleanup(func() { syscall.Kill(-child, syscall.SIGKILL) })
	}
	killed.Process.Kill()
	killed.Wait()
	left, _ := filepath.Glob(filepath.Join(state, "sandboxes", "fs-*.json"))
	if len(left) != 1 {
		t.Fatalf("after SIGKILL the fake holds %v, want the killed run's sandbox", left)
	}
	leftover := strings.TrimSuffix(filepath.Base(left[0]), ".json")

	ws2 := t.TempDir()
	next := fullsendCmd(bin, env, append([]string{"run", "triage", project, "--workspace", ws2, "--diag-dir", t.TempDir(), "-o", "json"}, sets...)...)
	var stdout, stderr bytes.Buffer
	next.Stdout, next.Stderr = &stdout, &stderr
	if err := next.Run(); err != nil {
		t.Fatalf("next run: %v\n%s", err, stderr.String())
	}
	var res runner.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if !slices.Contains(res.Reaped, leftover) || !strings.Contains(stderr.String(), "reaped sandbox "+leftover) {
		t.Errorf("next run did not reap %s: result %v\n%s", leftover, res.Reaped, stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(state, "sandboxes", "fs-*.json")); len(left) != 0 {
		t.Errorf("sandboxes left after the next run: %v", left)
	}
	if recs, _ := filepath.Glob(filepath.Join(home, ".local", "state", "fullsend", "sandboxes", "*.json")); len(recs) != 0 {
		t.Errorf("owner records left: %v", recs)
	}
}
