package runner

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/runner/childproc"
)

// fakeSandbox creates a sandbox in the harness's openshell fake directly, as
// an earlier run (or someone else) did.
func (h *harness) fakeSandbox(name string, labels map[string]string) {
	h.t.Helper()
	args := []string{"sandbox", "create", "--name", name}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		args = append(args, "--label", k+"="+labels[k])
	}
	cmd := exec.Command(filepath.Join(fakeBin(h.t), "openshell"), append(args, "--detach", "--", "sleep", "infinity")...)
	cmd.Env = []string{"OPENSHELL_FAKE_STATE=" + h.state, "OPENSHELL_FAKE_GATEWAY=up", "OPENSHELL_FAKE_LOG=" + filepath.Join(h.t.TempDir(), "setup.jsonl")}
	if out, err := cmd.CombinedOutput(); err != nil {
		h.t.Fatalf("creating %s in the fake: %v\n%s", name, err, out)
	}
}

func (h *harness) hasSandbox(name string) bool {
	_, err := os.Stat(filepath.Join(h.state, "sandboxes", name+".json"))
	return err == nil
}

// deadPID returns the pid and start time of a process that has ended.
func deadPID(t *testing.T) (int, string) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid, start := cmd.Process.Pid, childproc.StartTime(cmd.Process.Pid)
	cmd.Process.Kill()
	cmd.Wait()
	if childproc.Alive(pid) {
		t.Skip("the pid of a killed process is in use again")
	}
	return pid, start
}

// TestReapSandboxesOfKilledRuns is the red-team finding "a SIGKILLed run
// leaves its sandbox": a run starts by deleting the sandboxes that runs of
// this runner created and never deleted, and nothing else: not a live run's,
// not one recorded on another host, not one without fullsend's labels or
// with another run's.
func TestReapSandboxesOfKilledRuns(t *testing.T) {
	const run = "0123456789abcdef"
	ours := map[string]string{labelManagedBy: managedBy, labelRun: run}
	dead, deadStart := deadPID(t)
	old := time.Now().Add(-time.Hour).UTC()
	type reapCase struct {
		name       string
		sandbox    string
		labels     map[string]string // nil: no sandbox on the gateway
		rec        func(r *ownerRecord)
		reaped     bool // the sandbox is deleted
		recordKept bool
	}
	tests := []reapCase{
		{name: "owner killed", sandbox: "fs-triage-aaaaaa", labels: ours, reaped: true},
		{name: "owner alive", sandbox: "fs-triage-bbbbbb", labels: ours, recordKept: true,
			rec: func(r *ownerRecord) { r.PID, r.PIDStart = os.Getpid(), childproc.StartTime(os.Getpid()) }},
		{name: "owner on another host", sandbox: "fs-triage-cccccc", labels: ours, recordKept: true,
			rec: func(r *ownerRecord) { r.Host = "elsewhere/pid:[1]" }},
		{name: "sandbox without fullsend's labels", sandbox: "fs-triage-dddddd", labels: map[string]string{"team": "infra"},
			rec: func(r *ownerRecord) { r.Created = old }},
		{name: "sandbox of another run", sandbox: "fs-triage-eeeeee",
			labels: map[string]string{labelManagedBy: managedBy, labelRun: "ffffffffffffffff"}, rec: func(r *ownerRecord) { r.Created = old }},
		{name: "not managed by fullsend", sandbox: "fs-triage-ffffff", labels: map[string]string{labelRun: run},
			rec: func(r *ownerRecord) { r.Created = old }},
		{name: "name without the fs- prefix", sandbox: "agent-gggggg", labels: ours, recordKept: true},
		{name: "sandbox gone, create may still be running", sandbox: "fs-triage-hhhhhh", recordKept: true},
		{name: "sandbox gone long ago", sandbox: "fs-triage-iiiiii", rec: func(r *ownerRecord) { r.Created = old }},
	}
	if deadStart != "" {
		tests = append(tests, reapCase{name: "owner pid reused", sandbox: "fs-triage-jjjjjj", labels: ours, reaped: true,
			rec: func(r *ownerRecord) { r.PID, r.PIDStart = os.Getpid(), "1" }})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			if tc.labels != nil {
				h.fakeSandbox(tc.sandbox, tc.labels)
			}
			rec := ownerRecord{Sandbox: tc.sandbox, Agent: "triage", Run: run, PID: dead, PIDStart: deadStart,
				Host: hostID(), Created: time.Now().UTC()}
			if tc.rec != nil {
				tc.rec(&rec)
			}
			dir := DefaultStateDir(MapEnv(h.env))
			if err := writeRecord(dir, rec); err != nil {
				t.Fatal(err)
			}
			res, err := h.run(context.Background(), Request{})
			if err != nil {
				t.Fatalf("%v\n%s", err, h.log.String())
			}
			if tc.labels != nil && h.hasSandbox(tc.sandbox) == tc.reaped {
				t.Errorf("sandbox %s deleted = %v, want %v\n%s", tc.sandbox, !h.hasSandbox(tc.sandbox), tc.reaped, h.log.String())
			}
			if got := slices.Contains(res.Reaped, tc.sandbox); got != tc.reaped {
				t.Errorf("result reaped %v", res.Reaped)
			}
			if tc.reaped && !strings.Contains(h.log.String(), "reaped sandbox "+tc.sandbox) {
				t.Errorf("log does not say what was reaped:\n%s", h.log.String())
			}
			_, err = os.Stat(filepath.Join(dir, tc.sandbox+".json"))
			if kept := err == nil; kept != tc.recordKept {
				t.Errorf("owner record kept = %v, want %v", kept, tc.recordKept)
			}
			// The run's own sandbox is created, recorded while it lives,
			// deleted and forgotten.
			if h.hasSandbox(res.Sandbox) || !res.Deleted {
				t.Errorf("own sandbox %s left", res.Sandbox)
			}
			if _, err := os.Stat(filepath.Join(dir, res.Sandbox+".json")); !os.IsNotExist(err) {
				t.Errorf("own owner record left: %v", err)
			}
		})
	}
}

// TestOwnerRecordWhileRunning: while a run's sandbox exists its owner record
// names it, this process and the run label it was created with; a run with
// no stale record makes no `sandbox list` call.
func TestOwnerRecordWhileRunning(t *testing.T) {
	h := newHarness(t, CIGitHub)
	dir := DefaultStateDir(MapEnv(h.env))
	var seen []ownerRecord
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			files, _ := filepath.Glob(filepath.Join(dir, "fs-*.json"))
			for _, f := range files {
				if b, err := os.ReadFile(f); err == nil {
					var r ownerRecord
					if json.Unmarshal(b, &r) == nil {
						seen = append(seen, r)
						return
					}
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	res, err := h.run(context.Background(), Request{})
	cancel()
	<-done
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if len(seen) == 0 {
		t.Fatal("no owner record while the sandbox existed")
	}
	r := seen[0]
	if r.Sandbox != res.Sandbox || r.PID != os.Getpid() || r.Host != hostID() || r.Agent != "triage" || !runIDRE.MatchString(r.Run) {
		t.Errorf("record %+v", r)
	}
	if calls := strings.Join(callStrings(h), "\n"); !strings.Contains(calls, "--label fullsend-run="+r.Run) || strings.Contains(calls, "sandbox list") {
		t.Errorf("calls:\n%s", calls)
	}
}
