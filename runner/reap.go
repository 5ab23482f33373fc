package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/fullsend-ai/agent-sandbox/runner/childproc"
)

// A run that is SIGKILLed cannot delete its sandbox. So that a later run
// can, every sandbox the runner creates is marked twice:
//
//   - on the gateway, by two labels (`sandbox create --label`, in OpenShell
//     v0.0.83 and v0.0.111): app.kubernetes.io/managed-by=fullsend and
//     fullsend-run=RUN, RUN being 16 random hex digits of this sandbox alone;
//   - on this machine, by an owner record in the state directory, written
//     before `sandbox create` and removed once the sandbox is deleted: the
//     sandbox name, RUN, and the owning process (pid, its start time, the
//     host and pid namespace the pid belongs to).
//
// Each run starts by reaping: a record whose owner no longer runs (same
// host and pid namespace, pid gone or reused) names a sandbox that outlived
// its run; the runner lists `fullsend-run=RUN` and deletes what it finds
// only if the name is the recorded one, starts with "fs-" and both labels
// match. A live owner, a record from another host or namespace (its pid
// cannot be checked from here), and any sandbox without the labels are
// never touched.
const (
	labelManagedBy = "app.kubernetes.io/managed-by"
	managedBy      = "fullsend"
	labelRun       = "fullsend-run"
	sandboxPrefix  = "fs-"
	// reapGrace keeps the record of a dead owner whose sandbox is not (yet)
	// listed: the killed run's `sandbox create` runs in its own process
	// group, outlives the runner, and may still be creating it.
	reapGrace = 10 * time.Minute
)

var runIDRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

// ownerRecord is one sandbox this runner created and has not yet deleted.
type ownerRecord struct {
	Sandbox string `json:"sandbox"`
	Agent   string `json:"agent"`
	// Run is the sandbox's fullsend-run label.
	Run string `json:"run"`
	PID int    `json:"pid"`
	// PIDStart is the process's start time (clock ticks since boot), which
	// tells a reused pid apart; empty where unknown.
	PIDStart string `json:"pid_start,omitempty"`
	// Host is the host name and pid namespace the pid belongs to.
	Host    string    `json:"host"`
	Created time.Time `json:"created"`
}

// DefaultStateDir is where the runner keeps its owner records when
// Options.StateDir is empty: $XDG_STATE_HOME/fullsend/sandboxes, else
// $HOME/.local/state/fullsend/sandboxes; "" when neither is an absolute
// path. It is per user and outlives the job's temporary directories.
func DefaultStateDir(getenv Getenv) string {
	if d := getenv.value("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "fullsend", "sandboxes")
	}
	if h := getenv.value("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "fullsend", "sandboxes")
	}
	return ""
}

// hostID names where pids of this process are meaningful.
func hostID() string {
	h, _ := os.Hostname()
	if ns := childproc.PIDNamespace(); ns != "" {
		h += "/" + ns
	}
	return h
}

// claim records the sandbox about to be created and returns the labels it
// is created with. A record that cannot be written is logged, not fatal: the
// run goes on, and only a SIGKILL would then leave the sandbox behind.
func (x *run) claim(name string) map[string]string {
	var id [8]byte
	_, _ = rand.Read(id[:])
	rec := ownerRecord{Sandbox: name, Agent: x.req.Agent, Run: hex.EncodeToString(id[:]), PID: os.Getpid(),
		PIDStart: childproc.StartTime(os.Getpid()), Host: hostID(), Created: time.Now().UTC()}
	labels := map[string]string{labelManagedBy: managedBy, labelRun: rec.Run}
	dir := x.r.stateDir
	if dir == "" {
		x.logf("warning: no state directory (HOME unset): should this run be killed, sandbox %s will not be reaped", name)
		return labels
	}
	if err := writeRecord(dir, rec); err != nil {
		x.logf("warning: recording sandbox %s: %v; should this run be killed, it will not be reaped", name, err)
	}
	return labels
}

// release forgets a deleted sandbox (or a name another run holds).
func (x *run) release(name string) {
	if x.r.stateDir == "" {
		return
	}
	if err := os.Remove(filepath.Join(x.r.stateDir, name+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		x.logf("warning: removing the owner record of sandbox %s: %v", name, err)
	}
}

func writeRecord(dir string, rec ownerRecord) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".record-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(append(data, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, rec.Sandbox+".json")); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// staleRecords returns the records whose owner no longer runs here.
func (x *run) staleRecords() []ownerRecord {
	dir := x.r.stateDir
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			x.logf("warning: reading owner records: %v", err)
		}
		return nil
	}
	self := hostID()
	var out []ownerRecord
	for _, e := range entries {
		if rec, stale := x.staleRecord(dir, e, self); stale {
			out = append(out, rec)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Sandbox < out[j].Sandbox })
	return out
}

// staleRecord reads the owner record e of dir and reports whether it
// names a sandbox fullsend created and its owner is gone (self is this
// host's id). A record it cannot read or trust is logged and left alone.
func (x *run) staleRecord(dir string, e fs.DirEntry, self string) (ownerRecord, bool) {
	name, ok := strings.CutSuffix(e.Name(), ".json")
	if !ok || !e.Type().IsRegular() || !strings.HasPrefix(name, sandboxPrefix) {
		return ownerRecord{}, false
	}
	rec, err := readRecord(filepath.Join(dir, e.Name()))
	switch {
	case err != nil:
		x.logf("warning: owner record %s: %v; left alone", e.Name(), err)
	case !rec.names(name):
		x.logf("warning: owner record %s does not name a sandbox fullsend created; left alone", e.Name())
	case ownerGone(rec, self):
		return rec, true
	}
	return ownerRecord{}, false
}

// names reports whether the record, read from NAME.json, is of the
// sandbox NAME, a valid sandbox name, by a valid run id.
func (rec ownerRecord) names(name string) bool {
	return rec.Sandbox == name && ValidSandboxName(name) && runIDRE.MatchString(rec.Run)
}

func readRecord(path string) (ownerRecord, error) {
	var rec ownerRecord
	data, err := os.ReadFile(path)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("decoding: %w", err)
	}
	return rec, nil
}

// ownerGone reports whether the record's process has ended: it ran here
// (same host and pid namespace) and its pid is gone or now names another
// process. An owner elsewhere cannot be checked and counts as alive.
func ownerGone(rec ownerRecord, self string) bool {
	if rec.Host == "" || rec.Host != self || rec.PID <= 0 {
		return false
	}
	if !childproc.Alive(rec.PID) {
		return true
	}
	now := childproc.StartTime(rec.PID)
	return rec.PIDStart != "" && now != "" && now != rec.PIDStart
}

// reap deletes the sandboxes of runs that ended without deleting them. It
// never fails the run: what it cannot do it logs and leaves for later.
func (x *run) reap(ctx context.Context) {
	stale := x.staleRecords()
	if len(stale) == 0 {
		return
	}
	_ = x.step("fullsend: reap sandboxes of killed runs", func() error {
		for _, rec := range stale {
			x.reapOne(ctx, rec)
		}
		return nil
	})
}

func (x *run) reapOne(ctx context.Context, rec ownerRecord) {
	listed, err := x.d.List(ctx, labelRun+"="+rec.Run)
	if err != nil {
		x.logf("sandbox %s of run %s (pid %d, agent %s): listing failed, left for later: %v", rec.Sandbox, rec.Run, rec.PID, rec.Agent, errOr(ctxErr(ctx), err))
		return
	}
	found := false
	for _, sb := range listed {
		if !rec.owns(sb) {
			continue
		}
		found = true
		if err := x.d.Delete(ctx, sb.Name); err != nil && !isNotFound(err) {
			x.logf("sandbox %s of run %s (pid %d, agent %s): delete failed, left for later: %v", sb.Name, rec.Run, rec.PID, rec.Agent, errOr(ctxErr(ctx), err))
			return
		}
		x.res.Reaped = append(x.res.Reaped, sb.Name)
		x.logf("reaped sandbox %s: created %s by run %s (pid %d, agent %s), which ended without deleting it",
			sb.Name, rec.Created.Format(time.RFC3339), rec.Run, rec.PID, rec.Agent)
	}
	if !found {
		if time.Since(rec.Created) < reapGrace {
			return
		}
		x.logf("sandbox %s of run %s (pid %d, agent %s) is gone; its owner record is removed", rec.Sandbox, rec.Run, rec.PID, rec.Agent)
	}
	x.release(rec.Sandbox)
}

// owns reports whether a listed sandbox is the record's: its name, a
// fullsend name, managed by fullsend, labelled with the record's run.
func (rec ownerRecord) owns(sb listedSandbox) bool {
	return sb.Name == rec.Sandbox && strings.HasPrefix(sb.Name, sandboxPrefix) &&
		sb.Labels[labelManagedBy] == managedBy && sb.Labels[labelRun] == rec.Run
}

// isNotFound reports an openshell call that failed because the sandbox is
// already gone.
func isNotFound(err error) bool {
	var ce *CallError
	return errors.As(err, &ce) && strings.Contains(strings.ToLower(ce.Stderr), "not found")
}
