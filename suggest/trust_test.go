package suggest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/suggest"
)

// l4Line is an L4 denial of host from bin, as the shorthand file prints it.
func l4Line(ts, bin, host string) string {
	return ts + " OCSF NET:OPEN [MED] DENIED " + bin + "(4242) -> " + host + ":443 [policy:- engine:opa] [reason:endpoint " + host + ":443 is not allowed by any policy]"
}

// parsed reads lines as the log file name.
func parsed(t *testing.T, name string, lines ...string) []denial.Event {
	t.Helper()
	ev, _, err := denial.ReadLog(name, strings.NewReader(strings.Join(lines, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// runEvents runs suggest on events already read (and assessed).
func runEvents(t *testing.T, runOf map[string]string, events []denial.Event) *suggest.Result {
	t.Helper()
	root, err := os.OpenRoot(triage)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	res, err := suggest.Run(context.Background(), suggest.Options{Agent: target(t, triage), Project: root.FS(), Compile: compiler(t), Values: job, RunOf: runOf}, events, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func suggested(res *suggest.Result) []string {
	var out []string
	for _, s := range res.Suggestions {
		out = append(out, s.Value)
	}
	return out
}

// Issue 33 §1: an event whose trust is not grantable is never planned: it
// is listed as suspect with its raw lines, counted, and makes the analysis
// need a human; the trusted ones are planned as before.
func TestSuspectNeverGranted(t *testing.T) {
	ev := parsed(t, "openshell.log",
		l4Line("2026-12-01T10:00:00.000Z", "/usr/bin/git", "exfil.attacker.example"),
		l4Line("2026-12-01T10:00:00.000Z", "/usr/bin/curl", "denied.example.com"))
	raw := []string{"2026-12-01T10:00:00.000Z OCSF NET:OPEN [MED] DENIED /tmp/x", "\x1b[31m/y/curl(4242) -> denied.example.com:443"}
	tests := []struct {
		name          string
		trust         [2]denial.Trust
		wantSuggested []string
		wantSuspect   int
	}{
		{"forged line suspect", [2]denial.Trust{denial.TrustSuspect, denial.TrustShorthand}, []string{"denied.example.com:443"}, 1},
		{"both suspect", [2]denial.Trust{denial.TrustSuspect, denial.TrustSuspect}, nil, 2},
		{"structured and corroborated", [2]denial.Trust{denial.TrustStructured, denial.TrustCorroborated}, []string{"denied.example.com:443", "exfil.attacker.example:443"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := slices.Clone(ev)
			for i := range events {
				events[i].Trust = tt.trust[i]
				if tt.trust[i] == denial.TrustSuspect {
					events[i].Suspect, events[i].Raw = "adjacent to unparsed fragments", raw
				}
			}
			res := runEvents(t, nil, events)
			if got := suggested(res); !slices.Equal(got, tt.wantSuggested) {
				t.Errorf("suggested %q, want %q", got, tt.wantSuggested)
			}
			if res.SuspectEvents != tt.wantSuspect || len(res.Suspect) != tt.wantSuspect || res.NeedsHuman() != tt.wantSuspect {
				t.Errorf("suspect %d (listed %d, needs a human %d), want %d", res.SuspectEvents, len(res.Suspect), res.NeedsHuman(), tt.wantSuspect)
			}
			for _, d := range res.Denials {
				if d.Host == "exfil.attacker.example" && tt.trust[0] == denial.TrustSuspect {
					t.Errorf("the suspect event is a denial the planner saw: %+v", d)
				}
			}
			text, js, _ := render(t, res)
			if tt.wantSuspect > 0 {
				if !strings.Contains(text, "suspect: ") || !strings.Contains(text, `raw: \x1b[31m/y/curl(4242)`) || !strings.Contains(js, `"why": "adjacent to unparsed fragments"`) {
					t.Errorf("the suspect events are not shown (escaped) with their raw lines:\n%s", text)
				}
				if strings.ContainsRune(text, 0x1b) {
					t.Error("a raw line reached the text output unescaped")
				}
			}
		})
	}
}

// An event without a Trust fails closed: Assess sets every event it
// reads, so "" is a caller that assessed part of a run and left the rest,
// and that event is suspect, never a grant. A run none of whose events
// was assessed is assessed by Run itself (both lines plain shorthand).
func TestUnassessedNeverGranted(t *testing.T) {
	ev := parsed(t, "openshell.log",
		l4Line("2026-12-01T10:00:00.000Z", "/usr/bin/git", "exfil.attacker.example"),
		l4Line("2026-12-01T10:00:00.000Z", "/usr/bin/curl", "denied.example.com"))
	tests := []struct {
		name          string
		trust         [2]denial.Trust
		wantSuggested []string
		wantSuspect   []string
	}{
		{"one left unassessed", [2]denial.Trust{"", denial.TrustShorthand}, []string{"denied.example.com:443"}, []string{"exfil.attacker.example"}},
		{"the run unassessed: Run assesses it", [2]denial.Trust{"", ""}, []string{"denied.example.com:443", "exfil.attacker.example:443"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := slices.Clone(ev)
			for i := range events {
				events[i].Trust = tt.trust[i]
			}
			res := runEvents(t, nil, events)
			if got := suggested(res); !slices.Equal(got, tt.wantSuggested) {
				t.Errorf("suggested %q, want %q", got, tt.wantSuggested)
			}
			var suspect []string
			for _, s := range res.Suspect {
				suspect = append(suspect, s.Host)
				if !strings.Contains(s.Why, "not assessed") {
					t.Errorf("%s: why %q does not say it was not assessed", s.Host, s.Why)
				}
			}
			if !slices.Equal(suspect, tt.wantSuspect) || res.NeedsHuman() != len(tt.wantSuspect) {
				t.Errorf("suspect %q (needs a human %d), want %q", suspect, res.NeedsHuman(), tt.wantSuspect)
			}
		})
	}
}

// forgedRun is redteam5-2026-12-01.md T5-1: the agent runs curl from a
// path holding line breaks, so OpenShell's shorthand file prints one real
// denial (denied.example.com, from /tmp/x\n...\n/y/curl) as three lines,
// the middle one the agent's (exfil.attacker.example from /usr/bin/git).
// The JSONL file, when kept, holds the real event with its binary
// escaped (crates/openshell-ocsf/src/format/jsonl.rs:17-21@v0.0.111).
func forgedRun(t *testing.T, withJSONL bool) string {
	t.Helper()
	forged := l4Line("2026-12-01T10:00:00.000Z", "/usr/bin/git", "exfil.attacker.example")
	bin := "/tmp/x\n" + forged + "\n/y/curl"
	real := l4Line("2026-12-01T10:00:00.000Z", bin, "denied.example.com")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "openshell.2026-12-01.log"), []byte(real+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if withJSONL {
		ev := denial.Event{Class: 4001, Action: "Denied", TimeMS: 1796119200000, Host: "denied.example.com", Port: 443, Binary: bin,
			Policy: "-", Engine: "opa", Reason: "endpoint denied.example.com:443 is not allowed by any policy"}
		if err := os.WriteFile(filepath.Join(dir, "openshell-ocsf.2026-12-01.log"), append(ocsfJSON(ev), '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Issue 33 §1, end to end (redteam5 T5-1, the regression test of issue
// 33): the forged line is never suggested, with or without the JSONL
// record, and is reported as suspect with the raw lines around it; the
// real denial is seen. Shorthand only, the real denial is cut into the
// two unparsed lines the suspect event's raw lines show; with the record,
// it is a structured denial, analysed (its binary is not a plain path, so
// refused, never planned). Every event read is assessed: an Assess that
// left one unassessed fails here, it does not skip.
func TestForgedLineEndToEnd(t *testing.T) {
	tests := []struct {
		name      string
		withJSONL bool
		unparsed  int
		real      bool // the real denial is among the denials
	}{
		{"shorthand only", false, 2, false},
		{"with JSONL", true, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := suggest.ReadLogs([]string{forgedRun(t, tt.withJSONL)})
			if err != nil {
				t.Fatal(err)
			}
			if i := slices.IndexFunc(l.Events, func(ev denial.Event) bool { return ev.Trust == "" }); i >= 0 {
				t.Fatalf("ReadLogs left %s:%d unassessed", l.Events[i].File, l.Events[i].Line)
			}
			root, err := os.OpenRoot(triage)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			res, err := suggest.RunLogs(context.Background(), suggest.Options{Agent: target(t, triage), Project: root.FS(), Compile: compiler(t), Values: job}, l)
			if err != nil {
				t.Fatal(err)
			}
			if got := suggested(res); slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, "attacker") }) {
				t.Errorf("the forged line became a suggestion: %q", got)
			}
			forged := slices.IndexFunc(res.Suspect, func(s suggest.Suspect) bool { return s.Host == "exfil.attacker.example" })
			if forged < 0 || res.NeedsHuman() == 0 {
				t.Fatalf("the forged line is not reported as suspect: %+v", res.Suspect)
			}
			if raw := strings.Join(res.Suspect[forged].Raw, "\n"); !strings.Contains(raw, "denied.example.com") {
				t.Errorf("the suspect's raw lines do not show the real denial around it: %q", raw)
			}
			for _, d := range res.Denials {
				if d.Host == "exfil.attacker.example" {
					t.Errorf("the forged line is a denial the planner saw: %+v", d)
				}
			}
			real := slices.ContainsFunc(res.Denials, func(d *suggest.Denial) bool { return d.Host == "denied.example.com" })
			if real != tt.real {
				t.Errorf("the real denial among the denials: %v, want %v (%+v)", real, tt.real, res.Denials)
			}
			for _, d := range res.Denials {
				if d.Host == "denied.example.com" && !slices.ContainsFunc(res.Refused, func(f suggest.Finding) bool { return f.Denial == d.ID }) {
					t.Errorf("the real denial, from a binary path with line breaks, is not refused: %+v", res)
				}
			}
			sh := slices.IndexFunc(l.Inputs, func(in denial.InputStats) bool { return strings.HasSuffix(in.Path, "openshell.2026-12-01.log") })
			if sh < 0 || l.Inputs[sh].Unparsed != tt.unparsed {
				t.Errorf("the shorthand file's unparsed lines: %+v, want %d (the real line's two cut ends)", l.Inputs, tt.unparsed)
			}
		})
	}
}

// The same event read from the shorthand and the JSONL file of one run
// counts once; the same event in two runs (two sandboxes) counts twice.
func TestDedupeWithinRun(t *testing.T) {
	line := l4Line("2026-12-01T10:00:00.000Z", "/usr/bin/curl", "denied.example.com")
	sh := parsed(t, "a/openshell.log", line)
	js := parsed(t, "a/openshell-ocsf.log", string(ocsfJSON(sh[0])))
	if len(js) != 1 || js[0].Format != denial.FormatJSONL {
		t.Fatalf("the JSONL copy did not parse: %+v", js)
	}
	sh[0].Trust, js[0].Trust = denial.TrustCorroborated, denial.TrustStructured
	other := slices.Clone(sh)
	other[0].File = "b/openshell.log"
	other[0].Trust = denial.TrustShorthand
	tests := []struct {
		name   string
		events []denial.Event
		runOf  map[string]string
		count  int
	}{
		{"shorthand and JSONL of one run", append(slices.Clone(sh), js...), map[string]string{"a/openshell.log": "a", "a/openshell-ocsf.log": "a"}, 1},
		{"two runs", append(slices.Clone(sh), other...), map[string]string{"a/openshell.log": "a", "b/openshell.log": "b"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runEvents(t, tt.runOf, tt.events)
			if len(res.Denials) != 1 || res.Denials[0].Count != tt.count {
				t.Fatalf("denials %+v, want one seen %d times", res.Denials, tt.count)
			}
		})
	}
}

// Issue 29 §2: --logs DIR reads a directory of runs, each subdirectory one
// run with its own result.json; values the runs disagree on stay concrete,
// with a warning.
func TestDirectoryOfRuns(t *testing.T) {
	root := t.TempDir()
	line := l4Line("2026-12-01T10:00:00.000Z", "/usr/bin/curl", "denied.example.com") + "\n"
	for run, issue := range map[string]string{"fs-a": "7", "fs-b": "9"} {
		dir := filepath.Join(root, run)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		result := `{"placeholders": {"OWNER": "acme", "REPO_NAME": "widgets", "ISSUE_NUMBER": "` + issue + `"}}`
		for name, data := range map[string]string{"openshell.2026-12-01.log": line, "result.json": result} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := suggest.ReadLogs([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Runs) != 2 || len(l.Inputs) != 2 || len(l.Events) != 2 {
		t.Fatalf("runs %d, inputs %d, events %d; want 2, 2, 2", len(l.Runs), len(l.Inputs), len(l.Events))
	}
	if l.Values["OWNER"] != "acme" || l.Values["ISSUE_NUMBER"] != "" || l.ResultFile != "" {
		t.Errorf("values %v (result file %q): want OWNER only", l.Values, l.ResultFile)
	}
	if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "ISSUE_NUMBER") {
		t.Errorf("warnings = %q", l.Warnings)
	}
	root2, err := os.OpenRoot(triage)
	if err != nil {
		t.Fatal(err)
	}
	defer root2.Close()
	res, err := suggest.RunLogs(context.Background(), suggest.Options{Agent: target(t, triage), Project: root2.FS(), Compile: compiler(t), Values: l.Values}, l)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Denials) != 1 || res.Denials[0].Count != 2 {
		t.Errorf("denials %+v: want one seen twice (once a run)", res.Denials)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "ISSUE_NUMBER") }) {
		t.Errorf("the runs' disagreement is not among the warnings: %q", res.Warnings)
	}
	var b bytes.Buffer
	if err := suggest.WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	if _, err := suggest.ReadLogs([]string{filepath.Join(root, "empty")}); err == nil || !strings.Contains(err.Error(), "no log files") {
		t.Errorf("a directory without runs: err = %v", err)
	}
}

// Issue 33 §3: duplicate-detector is spawned by triage, which declares
// spawn-widening hosts [host.docker.internal] for it. A suggestion to a
// host triage does not reach (api.github.com, l4.log) is marked with the
// declaration triage needs, and policy compile (spawn proof on) indeed
// refuses the patched project; one on the declared host (l7-write.log)
// is not marked, and the patched project compiles (its expectation files
// set aside: one breaks on the grant, which suggest warns of).
func TestSpawnWidening(t *testing.T) {
	const note = "spawn-widening: [{agent: duplicate-detector, hosts: [\"api.github.com\"]}]"
	tests := []struct {
		name    string
		log     string
		noted   bool
		refused bool
	}{
		{"a host the parent does not reach", "l4.log", true, true},
		{"a host the parent declares", "l7-write.log", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, runOpts{values: job}, logs+tt.log)
			if len(res.Suggestions) == 0 {
				t.Fatal("no suggestion")
			}
			noted := slices.ContainsFunc(res.Suggestions, func(s *suggest.Suggestion) bool {
				return slices.ContainsFunc(s.Notes, func(n string) bool {
					return strings.Contains(n, note) && strings.Contains(n, "spawned by triage (agents/triage.md)")
				})
			})
			if noted != tt.noted {
				t.Errorf("a suggestion names %s: %v, want %v (%+v)", note, noted, tt.noted, res.Suggestions)
			}
			dir := copyProject(t)
			if err := suggest.Write(dir, res, noCI); err != nil {
				t.Fatal(err)
			}
			// The expectations are a human's choice (a warning of suggest):
			// only the compile and its spawn proof judge here.
			tests, err := filepath.Glob(filepath.Join(dir, "agents", "*.policytest.yaml"))
			if err != nil || len(tests) == 0 {
				t.Fatalf("no expectation files to set aside: %v", err)
			}
			for _, f := range tests {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
			_, err = compile.CompileDir(context.Background(), dir, compile.ProjectOptions{})
			if refused := err != nil && strings.Contains(err.Error(), "spawn-widening"); refused != tt.refused || !refused && err != nil {
				t.Errorf("policy compile of the patched project refuses it for spawn-widening: %v, want %v (%v)", refused, tt.refused, err)
			}
		})
	}
}
