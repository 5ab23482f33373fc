package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/runner/evidence"
)

// Run evidence: OpenShell's own record of what the sandbox allowed and
// denied, kept on every run (success or failure) before the sandbox is
// deleted. Where OpenShell keeps it and how it is read, redacted and
// counted is package evidence's; this file drives the sandbox for it.

// How long the run waits for its evidence.
const (
	logsTailLines   = 2000
	evidenceTimeout = time.Minute
	// evidenceCancelledTimeout bounds the logs of a cancelled run, whose
	// sandbox must still be deleted: GitHub kills a cancelled step 10 s
	// after its SIGINT (docs/runner.md).
	evidenceCancelledTimeout = 2 * time.Second
)

// evidenceRoot is where runs keep their evidence ("" = none is kept).
func (x *run) evidenceRoot() string {
	if x.r.opts.EvidenceDir != "" {
		return x.r.opts.EvidenceDir
	}
	return x.r.opts.DiagDir
}

// enableOCSFJSON turns on the JSONL log on a gateway the run started.
func (x *run) enableOCSFJSON(ctx context.Context) {
	if !x.res.GatewayStarted || x.evidenceRoot() == "" {
		return
	}
	if err := x.d.SettingSetGlobal(ctx, "ocsf_json_enabled", "true"); err != nil {
		x.logf("warning: OCSF JSONL not enabled, audit verdicts will be missing from the evidence: %v", err)
		return
	}
	x.ocsfJSON = true
	x.logf("OCSF JSONL enabled on the run's own gateway (ocsf_json_enabled=true, global)")
}

// collectEvidence keeps the sandbox's logs. It never fails the run: a
// missing piece is logged and noted in result.json.
func (x *run) collectEvidence(ctx context.Context) {
	root := x.evidenceRoot()
	if root == "" || x.res.Sandbox == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), evidenceTimeoutFor(ctx))
	defer cancel()
	ev := &evidence.Record{Dir: filepath.Join(root, sanitizeFileName(x.res.Sandbox)), Source: evidence.SourceNone, OCSFJSON: x.ocsfJSON}
	x.res.Evidence = ev
	if err := os.MkdirAll(ev.Dir, 0o700); err != nil {
		x.logf("warning: no run evidence: %v", err)
		return
	}
	var files []evidence.Log
	var notes []string
	err := errors.New("the sandbox's policy was never confirmed, so nothing runs in it")
	if x.policyConfirmed {
		files, notes, err = x.sandboxLogFiles(ctx)
	}
	ev.Notes = append(ev.Notes, notes...)
	if err == nil && evidence.HasShorthand(files) {
		ev.Source = evidence.SourceSandboxFiles
		x.logf("evidence: the sandbox's log files (/var/log/openshell*.log, %d read through sandbox exec tar)", len(files))
	} else {
		if err == nil {
			err = errors.New("no shorthand log file")
		}
		files = x.cliLogs(ctx, ev, err)
	}
	denials := ev.Keep(files, x.mask.String, x.logf)
	if len(denials) > 0 {
		x.res.Denials = denials
		ev.Suggest = x.suggestCommand(ev.Dir, denials)
	}
	x.logf("evidence: %d files in %s, %d denied requests", len(ev.Files), ev.Dir, evidence.DenialTotal(denials))
}

// cliLogs is the fallback when the sandbox's log files are unavailable
// (why): the tails of `openshell logs --source sandbox|gateway`. What
// fails is noted in ev.
func (x *run) cliLogs(ctx context.Context, ev *evidence.Record, why error) []evidence.Log {
	ev.Notes = append(ev.Notes, "sandbox log files unavailable: "+x.mask.String(why.Error()))
	x.logf("evidence: the sandbox's log files are unavailable (%v); falling back to openshell logs --source sandbox|gateway -n %d", why, logsTailLines)
	var files []evidence.Log
	for _, src := range []string{"sandbox", "gateway"} {
		out, lerr := x.d.LogsSource(ctx, x.res.Sandbox, src, logsTailLines, evidence.FileMax)
		if lerr != nil && len(out.data) == 0 {
			ev.Notes = append(ev.Notes, fmt.Sprintf("openshell logs --source %s: %s", src, x.mask.String(lerr.Error())))
			continue
		}
		files = append(files, evidence.CLILog(src, out.data, out.truncated))
	}
	if len(files) > 0 {
		ev.Source = evidence.SourceOpenShellLogs
	}
	x.logf("evidence: source %s", ev.Source)
	return files
}

// suggestCommand is the `policy suggest` command for the evidence in dir.
// In CI the directory reaches the user as the root of the evidence
// artifact, so the command names it as it is there.
func (x *run) suggestCommand(dir string, denials map[denial.Kind]int) string {
	if x.res.CI != CILocal {
		dir = filepath.Base(dir)
	}
	cmd := evidence.SuggestCommand(x.res.Agent, dir)
	if evidence.DenialTotal(denials) == 0 {
		cmd += " --include-audit" // only audit verdicts (A.3)
	}
	return cmd
}

// evidenceTimeoutFor bounds the collection of a run's logs: a cancelled
// run (SIGTERM, --timeout) must still delete its sandbox before the CI
// kills the job, so its logs get a short bound.
func evidenceTimeoutFor(ctx context.Context) time.Duration {
	if ctx.Err() != nil {
		return evidenceCancelledTimeout
	}
	return evidenceTimeout
}

// sandboxLogFiles reads /var/log/openshell*.log through `sandbox exec -n N
// --no-tty --timeout S -- sh -c SCRIPT` (flags at
// crates/openshell-cli/src/main.rs:1414-1436@v0.0.83, :1568-1590@v0.0.111;
// the command travels as argv, `command: command.to_vec()` in
// sandbox_exec_grpc, run.rs:2729-2806@v0.0.83, :1399-1478@v0.0.111). It
// runs as the sandbox user under the sandbox's Landlock rules, so the
// policy must let it read /var/log (every fullsend tier does).
func (x *run) sandboxLogFiles(ctx context.Context) ([]evidence.Log, []string, error) {
	pr, pw := io.Pipe()
	type parsed struct {
		files []evidence.Log
		notes []string
		err   error
	}
	done := make(chan parsed, 1)
	go func() {
		files, notes, err := evidence.ReadLogs(pr)
		// Drain what is left so the remote tar is not blocked, then close.
		_, _ = io.Copy(io.Discard, pr)
		pr.CloseWithError(err)
		done <- parsed{files, notes, err}
	}()
	var stderr bytes.Buffer
	code, _, err := x.d.Exec(ctx, execSpec{name: x.res.Sandbox, timeout: evidenceTimeout,
		command: []string{"sh", "-c", evidence.LogTarScript}, stdout: pw, stderr: &stderr})
	pw.Close()
	p := <-done
	if err != nil {
		return nil, p.notes, err
	}
	if p.err != nil {
		return nil, p.notes, p.err
	}
	if code != 0 && len(p.files) == 0 {
		return nil, p.notes, fmt.Errorf("sandbox exec tar exit %d: %s", code, lastLine(x.mask.String(stderr.String())))
	}
	if code != 0 {
		p.notes = append(p.notes, fmt.Sprintf("sandbox exec tar exit %d: %s", code, lastLine(x.mask.String(stderr.String()))))
	}
	return p.files, p.notes, nil
}

// writeEvidenceResult writes result.json next to the logs, so that
// `policy suggest --logs DIR` finds the run's placeholder values.
func (x *run) writeEvidenceResult() {
	ev := x.res.Evidence
	if ev == nil {
		return
	}
	res := *x.res
	res.Calls = nil
	b, _ := json.MarshalIndent(res, "", "  ")
	p := filepath.Join(ev.Dir, "result.json")
	if st, err := os.Lstat(p); err == nil && !st.Mode().IsRegular() {
		return
	}
	_ = os.WriteFile(p, append(b, '\n'), 0o600)
}
