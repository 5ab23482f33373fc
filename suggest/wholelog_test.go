package suggest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/suggest"
)

// reproducer is day2-fidelity-2026-12-01.md's two-line log (shorthand
// v0.0.111): a CONNECT denial from claude and a FORWARD_L7 PUT denial from
// curl to the same host on port 80. On main it made the whole run exit 1
// with no output ("suggestion failed verification").
var reproducer = []string{
	"2026-05-01T01:46:56.166Z OCSF NET:OPEN [MED] DENIED /opt/claude/bin/claude(37742) -> a.b.c.d.e.internal-corp.example:80 [policy:- engine:opa] [reason:endpoint a.b.c.d.e.internal-corp.example:80 is not allowed by any policy]",
	"2026-05-01T01:47:02.879Z OCSF HTTP:PUT [MED] DENIED /usr/bin/curl(10024) -> PUT http://a.b.c.d.e.internal-corp.example/search/issues [policy:web engine:l7] [reason:FORWARD_L7 deny PUT a.b.c.d.e.internal-corp.example:80/search/issues reason=PUT /search/issues not permitted by policy]",
}

// complete checks that the result accounts for every denial: each is
// covered by a suggestion or listed as refused, manual or ignored, and a
// denial whose suggestion failed its check is covered by none. The JSON
// output carries all of it.
func complete(t *testing.T, res *suggest.Result) {
	t.Helper()
	seen := map[string]int{}
	for _, s := range res.Suggestions {
		for _, id := range s.Covers {
			seen[id]++
		}
	}
	unverified := map[string]bool{}
	for _, list := range [][]suggest.Finding{res.Refused, res.Manual, res.Ignored} {
		for _, f := range list {
			seen[f.Denial]++
			if f.Unverified {
				unverified[f.Denial] = true
			}
		}
	}
	for _, d := range res.Denials {
		if seen[d.ID] == 0 {
			t.Errorf("%s (%s %s:%d) is in no suggestion and no finding", d.ID, d.Kind, d.Host, d.Port)
		}
	}
	for _, s := range res.Suggestions {
		for _, id := range s.Covers {
			if unverified[id] {
				t.Errorf("%s is unverified but %s covers it", id, s.ID)
			}
		}
	}
	var b bytes.Buffer
	if err := suggest.WriteJSON(&b, res); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Denials []json.RawMessage `json:"denials"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Denials) != len(res.Denials) {
		t.Errorf("the JSON output does not hold the %d denials: %v", len(res.Denials), err)
	}
}

// Issue 29 §1: the two-line reproducer gives the whole analysis, not an
// error, in each of the three formats and all of them as one run.
func TestReproducerWholeAnalysis(t *testing.T) {
	dir := runDir(t, reproducer)
	for _, f := range []string{"openshell.2026-05-01.log", "openshell-ocsf.2026-05-01.log", "sandbox.log", ""} {
		t.Run(cmpOr(f, "run"), func(t *testing.T) {
			res, err := tryRun(t, runOpts{}, filepath.Join(dir, f))
			if err != nil {
				t.Fatalf("one suggestion hid the analysis: %v", err)
			}
			if len(res.Denials) != 2 {
				t.Fatalf("denials = %d, want 2 (each read once)", len(res.Denials))
			}
			complete(t, res)
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// staleCompiler compiles the project as it was, whatever the patch: every
// suggestion then fails its check (the denied request stays denied).
func staleCompiler(t *testing.T) suggest.Compiler {
	tgt := target(t, triage)
	return func(context.Context, fs.FS) (*suggest.Target, error) { return tgt, nil }
}

// refusingCompiler compiles as policy suggest does, but fails a patched
// agent file that holds marker.
func refusingCompiler(t *testing.T, marker string) suggest.Compiler {
	c := compiler(t)
	return func(ctx context.Context, fsys fs.FS) (*suggest.Target, error) {
		b, err := fs.ReadFile(fsys, "agents/duplicate-detector.md")
		if err == nil && bytes.Contains(b, []byte(marker)) {
			return nil, errors.New("agents/duplicate-detector.md:20: sandbox.endpoints: refused by the test")
		}
		return c(ctx, fsys)
	}
}

// runWith runs suggest on the log files with compiler c.
func runWith(t *testing.T, c suggest.Compiler, files ...string) *suggest.Result {
	t.Helper()
	l, err := suggest.ReadLogs(files)
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(triage)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	res, err := suggest.Run(context.Background(), suggest.Options{Agent: target(t, triage), Project: root.FS(), Compile: c, Values: job}, l.Events, l.Inputs)
	if err != nil {
		t.Fatalf("a failed check must not fail the run: %v", err)
	}
	return res
}

// Issue 29 §1: a suggestion that fails its check becomes a manual,
// unverified finding with its reason; the others stay in the patch, and
// NeedsHuman counts the unverified denials (policy suggest exits 3).
func TestUnverifiedIsManual(t *testing.T) {
	tests := []struct {
		name       string
		compiler   func(*testing.T) suggest.Compiler
		wantSugs   []string
		unverified int
		why        string
	}{
		{"every check fails", staleCompiler, nil, 2, "is still not allowed"},
		{"one change does not compile", func(t *testing.T) suggest.Compiler { return refusingCompiler(t, "api.github.com") },
			[]string{"POST /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/comments"}, 1, "refused by the test"},
		{"all checks pass", func(t *testing.T) suggest.Compiler { return compiler(t) }, []string{"api.github.com:443", "POST /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/comments"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runWith(t, tt.compiler(t), logs+"l7-write.log", logs+"l4.log")
			var got []string
			for _, s := range res.Suggestions {
				got = append(got, s.Value)
			}
			if !slices.Equal(got, tt.wantSugs) {
				t.Errorf("suggestions = %q, want %q", got, tt.wantSugs)
			}
			if n := res.NeedsHuman(); n != tt.unverified {
				t.Errorf("NeedsHuman = %d, want %d (manual %+v)", n, tt.unverified, res.Manual)
			}
			for _, f := range res.Manual {
				if f.Unverified && !strings.Contains(f.Why, tt.why) {
					t.Errorf("%s: why = %q, want it to say %q", f.Denial, f.Why, tt.why)
				}
			}
			if tt.wantSugs == nil && (res.Patch != "" || len(res.Files) != 0) {
				t.Errorf("a patch without suggestions:\n%s", res.Patch)
			}
			complete(t, res)
		})
	}
}

// runDir writes shorthand lines as one run writes them: the sandbox's
// shorthand file, the same events as OCSF JSONL, and `openshell logs`
// output of the same lines (crates/openshell-cli/src/run.rs:6779-6809
// @v0.0.111). It returns the directory.
func runDir(t *testing.T, lines []string) string {
	t.Helper()
	dir := t.TempDir()
	var sh, js, cli bytes.Buffer
	for _, l := range lines {
		sh.WriteString(l + "\n")
		ev, res := denial.ParseLine([]byte(l))
		if res != denial.LineEvent {
			continue
		}
		js.Write(ocsfJSON(ev))
		js.WriteByte('\n')
		_, rest, _ := strings.Cut(l, " OCSF ")
		fmt.Fprintf(&cli, "[%d.%03d] [sandbox] [OCSF ] [ocsf] %s\n", ev.TimeMS/1000, ev.TimeMS%1000, rest)
	}
	for name, b := range map[string][]byte{"openshell.2026-05-01.log": sh.Bytes(), "openshell-ocsf.2026-05-01.log": js.Bytes(), "sandbox.log": cli.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fixtureLines are the event lines of every shorthand fixture log.
func fixtureLines(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range []string{"l7-write.log", "l4.log", "l4-old.log", "siblings.log", "refusals.log", "allowed-ips.log", "binary.log", "query.log", "noise.log", "hostile.log"} {
		b, err := os.ReadFile(logs + f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
	}
	return append(out, reproducer...)
}

// denialKey names a denial across analyses (its id is its rank in one).
func denialKey(d *suggest.Denial) string {
	return fmt.Sprintf("%s %s:%d %s %s %s", d.Kind, d.Host, d.Port, d.Method, d.Path, d.Binary)
}

// counts maps each denial of an analysis to its count.
func counts(res *suggest.Result) map[string]int {
	out := map[string]int{}
	for _, d := range res.Denials {
		out[denialKey(d)] = d.Count
	}
	return out
}

// Issue 29 §1: every log the runner keeps (shorthand file, OCSF JSONL,
// `openshell logs` output) and all of them mixed as one run writes them
// give the complete analysis; each event of the run counts once.
//
// Issue 33: the run holds the JSONL record, which here has every event of
// the shorthand file, so every shorthand and CLI line is corroborated (none
// suspect) and the run counts exactly what the record counts. The
// shorthand file alone is judged without the record: an event next to the
// cut lines of noise.log and hostile.log, or with a binary that is not a
// plain path, is suspect there; every other denial it counts, the run
// counts the same number of times, and the run's denials it lacks are
// exactly its suspect events.
func TestWholeLogs(t *testing.T) {
	dir := runDir(t, fixtureLines(t))
	single := map[string]*suggest.Result{}
	for _, f := range []string{"openshell.2026-05-01.log", "openshell-ocsf.2026-05-01.log", "sandbox.log", ""} {
		t.Run(cmpOr(f, "run"), func(t *testing.T) {
			res, err := tryRun(t, runOpts{values: job}, filepath.Join(dir, f))
			if err != nil {
				t.Fatalf("the whole log gives no analysis: %v", err)
			}
			complete(t, res)
			single[f] = res
		})
	}
	sh, js, all := single["openshell.2026-05-01.log"], single["openshell-ocsf.2026-05-01.log"], single[""]
	if sh == nil || js == nil || all == nil {
		t.FailNow()
	}
	if all.SuspectEvents != 0 {
		t.Errorf("the run's record holds every event, yet %d are suspect: %+v", all.SuspectEvents, all.Suspect)
	}
	if got, want := counts(all), counts(js); !maps.Equal(got, want) {
		t.Errorf("the run counts\n%v\nits JSONL record\n%v", got, want)
	}
	run, alone := counts(all), counts(sh)
	for k, n := range alone {
		if run[k] != n {
			t.Errorf("%s: counted %d times in the run, %d in its shorthand file", k, run[k], n)
		}
	}
	for _, d := range all.Denials {
		if _, ok := alone[denialKey(d)]; ok {
			continue
		}
		if !slices.ContainsFunc(sh.Suspect, func(s suggest.Suspect) bool {
			return s.Host == d.Host && s.Port == d.Port && s.Binary == d.Binary && s.Path == d.Path
		}) {
			t.Errorf("%s is in the run, not in its shorthand file, where it is not suspect either", denialKey(d))
		}
	}
	if sh.SuspectEvents == 0 {
		t.Error("the shorthand file alone finds no event suspect next to noise.log's and hostile.log's cut lines")
	}
}
