package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/runner/evidence"
)

// evidenceExecs counts the runner's evidence reads (collectEvidence).
func (h *harness) evidenceExecs() int {
	n := 0
	for _, c := range h.calls() {
		if strings.HasPrefix(c.String(), "openshell sandbox exec") && strings.Contains(c.String(), evidence.LogTarScript) {
			n++
		}
	}
	return n
}

func eventsFixture(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "evidence", "events.jsonl")
}

// TestRunKeepsEvidence is day2-loop.md A.5 #14: a run that succeeds after
// being denied keeps OpenShell's logs (redacted, masked), counts the
// denials into result.json and the job summary, warns, and prints the
// suggest command.
func TestRunKeepsEvidence(t *testing.T) {
	const secret = "tok-SECRET-abc123"
	// The tunnel and FORWARD L7 denials are one kind, l7-deny (the table's,
	// as `policy suggest` names them).
	denied := map[denial.Kind]int{denial.KindL7Deny: 3, denial.KindL4NoEndpoint: 1}
	withAudit := map[denial.Kind]int{denial.KindL7Deny: 3, denial.KindL4NoEndpoint: 1, denial.KindAudit: 1}
	for _, tc := range []struct {
		name        string
		version     string
		ownGateway  bool   // the runner starts the gateway: JSONL on
		fail        string // OPENSHELL_FAKE_FAIL
		source      string
		files       []string // name patterns in the evidence dir
		wantDenials map[denial.Kind]int
	}{
		{name: "own gateway: shorthand and JSONL files", ownGateway: true, source: evidence.SourceSandboxFiles,
			files:       []string{"openshell.*.log", "openshell-ocsf.*.log", "result.json"},
			wantDenials: withAudit},
		{name: "own gateway at v0.0.83", version: "0.0.83", ownGateway: true, source: evidence.SourceSandboxFiles,
			files:       []string{"openshell.*.log", "openshell-ocsf.*.log", "result.json"},
			wantDenials: withAudit},
		{name: "existing gateway at v0.0.83: shorthand file, JSONL left off", version: "0.0.83", source: evidence.SourceSandboxFiles,
			files: []string{"openshell.*.log", "openshell-ocsf.*.log", "result.json"}, wantDenials: denied},
		{name: "no log files: the gateway's tail", fail: "no-log-files", source: evidence.SourceOpenShellLogs,
			files: []string{"sandbox.log", "gateway-events.log", "result.json"}, wantDenials: denied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			summary := filepath.Join(t.TempDir(), "summary.md")
			h.env["GITHUB_STEP_SUMMARY"] = summary
			h.env["OPENSHELL_FAKE_EVENTS"] = eventsFixture(t)
			if tc.version != "" {
				h.env["OPENSHELL_FAKE_VERSION"] = tc.version
				h.project = testProject(t, "v"+tc.version)
			}
			if tc.ownGateway {
				delete(h.env, "OPENSHELL_FAKE_GATEWAY")
			}
			if tc.fail != "" {
				h.env["OPENSHELL_FAKE_FAIL"] = tc.fail
			}
			res, err := h.run(context.Background(), Request{Env: map[string]string{"FULLSEND_AGENT_TOKEN": secret}})
			if err != nil {
				t.Fatalf("%v\n%s", err, h.log.String())
			}
			ev := res.Evidence
			if ev == nil || ev.Source != tc.source || ev.OCSFJSON != tc.ownGateway {
				t.Fatalf("evidence %+v, want source %s, JSONL %v\n%s", ev, tc.source, tc.ownGateway, h.log.String())
			}
			if !reflect.DeepEqual(res.Denials, tc.wantDenials) {
				t.Errorf("denials %v, want %v", res.Denials, tc.wantDenials)
			}
			if st, err := os.Stat(ev.Dir); err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("evidence dir %v mode %v", err, st)
			}
			for _, pat := range tc.files {
				m, _ := filepath.Glob(filepath.Join(ev.Dir, pat))
				if len(m) != 1 {
					t.Errorf("evidence has %d files %s: %v", len(m), pat, m)
				}
			}
			all := ""
			entries, _ := os.ReadDir(ev.Dir)
			for _, e := range entries {
				p := filepath.Join(ev.Dir, e.Name())
				st, _ := os.Lstat(p)
				if !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
					t.Errorf("%s: mode %v, want a 0600 regular file", e.Name(), st.Mode())
				}
				data, _ := os.ReadFile(p)
				all += string(data)
				if strings.HasPrefix(e.Name(), "openshell-ocsf.") {
					lines := strings.Split(strings.TrimSpace(string(data)), "\n")
					if tc.ownGateway && len(lines) != 6 {
						t.Errorf("JSONL has %d events, want 6", len(lines))
					}
					if !tc.ownGateway && len(data) != 0 {
						t.Errorf("JSONL written without ocsf_json_enabled: %q", data)
					}
					for _, l := range lines {
						if l != "" && !json.Valid([]byte(l)) {
							t.Errorf("JSONL line no longer JSON after redaction: %s", l)
						}
					}
				}
			}
			for _, leak := range []string{"secret-456", secret} {
				if strings.Contains(all, leak) {
					t.Errorf("evidence leaks %q", leak)
				}
			}
			if !strings.Contains(all, "/v1/items?[redacted]") || !strings.Contains(all, "/t/***") {
				t.Errorf("evidence lacks the redacted query or the masked secret:\n%s", all)
			}
			var onDisk Result
			if b, err := os.ReadFile(filepath.Join(ev.Dir, "result.json")); err != nil || json.Unmarshal(b, &onDisk) != nil ||
				!reflect.DeepEqual(onDisk.Denials, tc.wantDenials) || onDisk.Placeholders["OWNER"] != "fullsend-ai" {
				t.Errorf("result.json: %v %+v", err, onDisk)
			}
			suggest := "fullsend policy suggest triage --logs " + filepath.Base(ev.Dir) // the artifact's root in CI
			if ev.Suggest != suggest {
				t.Errorf("suggest %q, want %q", ev.Suggest, suggest)
			}
			log := h.log.String()
			if !strings.Contains(log, "::warning title=fullsend run triage%3A requests denied::4 requests were denied") ||
				!strings.Contains(log, "download the run's evidence artifact and run `"+suggest+"`") {
				t.Errorf("no warning with the suggest command:\n%s", log)
			}
			sum, _ := os.ReadFile(summary)
			if !strings.Contains(string(sum), "| denied requests | 4: ") || !strings.Contains(string(sum), "`"+suggest+"`") {
				t.Errorf("summary lacks the denials or the command:\n%s", sum)
			}
			if n := h.count("openshell settings set --global --key ocsf_json_enabled --value true --yes"); (n == 1) != tc.ownGateway {
				t.Errorf("%d global ocsf_json_enabled settings, own gateway %v", n, tc.ownGateway)
			}
			if n := h.count("openshell logs"); (n == 2) != (tc.source == evidence.SourceOpenShellLogs) || n != 0 && n != 2 {
				t.Errorf("%d openshell logs calls for source %s", n, tc.source)
			}
			if tc.source == evidence.SourceOpenShellLogs {
				if !strings.Contains(log, "falling back to openshell logs --source sandbox|gateway -n 2000") {
					t.Errorf("the run log does not say which source was used:\n%s", log)
				}
				for _, src := range []string{"sandbox", "gateway"} {
					if h.count("openshell logs "+res.Sandbox+" --source "+src+" -n 2000") != 1 {
						t.Errorf("no `openshell logs %s --source %s -n 2000`", res.Sandbox, src)
					}
				}
			}
			for _, c := range h.calls() {
				if strings.Contains(c.String(), "download") && strings.Contains(c.String(), "/var/log") {
					t.Errorf("%s: sandbox download refuses /var/log at both tags", c)
				}
			}
			if !res.Deleted || len(h.sandboxesLeft()) != 0 {
				t.Errorf("sandbox not deleted")
			}
		})
	}
}

// TestRunWithoutDenials: a clean run keeps its logs, counts nothing and
// raises no warning; without an evidence or diagnostic directory nothing is
// collected.
func TestRunWithoutDenials(t *testing.T) {
	h := newHarness(t, CIGitHub)
	res, err := h.run(context.Background(), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Evidence == nil || res.Evidence.Source != evidence.SourceSandboxFiles || len(res.Denials) != 0 || res.Evidence.Suggest != "" {
		t.Errorf("evidence %+v denials %v", res.Evidence, res.Denials)
	}
	if strings.Contains(h.log.String(), "::warning") {
		t.Errorf("warning on a clean run:\n%s", h.log.String())
	}
	h = newHarness(t, CIGitHub)
	h.opts.DiagDir = ""
	res, err = h.run(context.Background(), Request{})
	if err != nil || res.Evidence != nil {
		t.Errorf("evidence kept without a directory: %v %+v", err, res.Evidence)
	}
	for _, c := range h.calls() {
		if strings.Contains(c.String(), "openshell*.log") || strings.HasPrefix(c.String(), "openshell logs") {
			t.Errorf("%s: logs read without a directory to keep them", c)
		}
	}
}

// TestRunFailedKeepsEvidence: a failed run keeps the same evidence in its
// diagnostic bundle directory.
func TestRunFailedKeepsEvidence(t *testing.T) {
	h := newHarness(t, CIGitHub)
	h.env["OPENSHELL_FAKE_EVENTS"] = eventsFixture(t)
	h.env["OPENSHELL_FAKE_FAIL"] = "exec-exit=3"
	res, err := h.run(context.Background(), Request{})
	if ExitCode(err) != 3 {
		t.Fatalf("exit %d: %v", ExitCode(err), err)
	}
	if res.Evidence == nil || res.Evidence.Dir != res.DiagDir || res.Denials[denial.KindL7Deny] != 3 {
		t.Errorf("evidence %+v in %s, denials %v", res.Evidence, res.DiagDir, res.Denials)
	}
	if strings.Contains(h.log.String(), "requests denied") {
		t.Errorf("a failed run gets the error, not the denial warning")
	}
}

// BenchmarkRunEvidence measures the evidence collection's share of a run
// against the openshell fake: evidence-ms is the "keep OpenShell logs"
// step, run-ms the whole run, and evidence/run their ratio.
func BenchmarkRunEvidence(b *testing.B) {
	h := newHarness(b, CIGitHub)
	h.env["OPENSHELL_FAKE_READY_POLLS"] = "1"
	h.env["OPENSHELL_FAKE_EVENTS"] = eventsFixture(b)
	var ev, total float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.log.Reset()
		h.opts.DiagDir = b.TempDir()
		res, err := h.run(context.Background(), Request{})
		if err != nil {
			b.Fatalf("%v\n%s", err, h.log.String())
		}
		for _, s := range res.Steps {
			if s.Name == "keep OpenShell logs" {
				ev += s.MS
			}
		}
		total += float64(res.Duration.Microseconds()) / 1000
	}
	b.ReportMetric(ev/float64(b.N), "evidence-ms/op")
	b.ReportMetric(total/float64(b.N), "run-ms/op")
	b.ReportMetric(ev/total, "evidence/run")
}

// TestRunDeniedWarnsOnGitLab: GitLab has no job summary; the warning is a
// yellow line with the same command.
func TestRunDeniedWarnsOnGitLab(t *testing.T) {
	h := newHarness(t, CIGitLab)
	h.env["OPENSHELL_FAKE_EVENTS"] = eventsFixture(t)
	res, err := h.run(context.Background(), Request{})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	want := "\x1b[1;33mWARNING: fullsend run triage: requests denied\x1b[0m: 4 requests were denied (l4-no-endpoint 1, l7-deny 3); download the run's evidence artifact and run `fullsend policy suggest triage --logs " + filepath.Base(res.Evidence.Dir) + "`"
	if !strings.Contains(h.log.String(), want) {
		t.Errorf("no yellow warning line:\n%s", h.log.String())
	}
}

// TestRunDeniedLocal: outside CI the command names the evidence directory
// itself; a run whose only verdicts are audit ones gets --include-audit and
// no warning.
func TestRunDeniedLocal(t *testing.T) {
	vals := placeholder.Values{"FORGE_HOST": "github.com", "ISSUE_NUMBER": "7", "OWNER": "acme", "REPO_NAME": "widgets"}
	h := newHarness(t, CILocal)
	h.env["OPENSHELL_FAKE_EVENTS"] = eventsFixture(t)
	res, err := h.run(context.Background(), Request{Values: vals})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if want := "warning: fullsend run triage: requests denied: 4 requests were denied (l4-no-endpoint 1, l7-deny 3); run `fullsend policy suggest triage --logs " + res.Evidence.Dir + "`"; !strings.Contains(h.log.String(), want) {
		t.Errorf("want %q in:\n%s", want, h.log.String())
	}

	h = newHarness(t, CILocal)
	delete(h.env, "OPENSHELL_FAKE_GATEWAY") // the runner's own gateway: JSONL on
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	data, _ := os.ReadFile(eventsFixture(t))
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "L7_REQUEST audit") {
			os.WriteFile(audit, []byte(line+"\n"), 0o600)
		}
	}
	h.env["OPENSHELL_FAKE_EVENTS"] = audit
	res, err = h.run(context.Background(), Request{Values: vals})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if !reflect.DeepEqual(res.Denials, map[denial.Kind]int{denial.KindAudit: 1}) || !strings.HasSuffix(res.Evidence.Suggest, " --include-audit") ||
		strings.Contains(h.log.String(), "warning: fullsend run") {
		t.Errorf("denials %v, suggest %q\n%s", res.Denials, res.Evidence.Suggest, h.log.String())
	}
}
