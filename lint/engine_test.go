package lint

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/report"
)

var (
	engineOnce sync.Once
	engineVal  *Engine
	engineErr  error
)

// testEngine builds the builtin engine once per test binary.
func testEngine(t testing.TB) *Engine {
	t.Helper()
	engineOnce.Do(func() { engineVal, engineErr = New(context.Background(), Options{}) })
	if engineErr != nil {
		t.Fatal(engineErr)
	}
	return engineVal
}

var wantLine = regexp.MustCompile(`(?m)^# want: (.+)$`)

// corpusInput reads a testdata policy and its optional .context.json sidecar
// (the same file conftest and opa get as --data).
func corpusInput(t testing.TB, file string) (Input, []string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := openshell.Unmarshal(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	in := Input{File: filepath.Base(file), Policy: p}
	if raw, err := os.ReadFile(strings.TrimSuffix(file, ".yaml") + ".context.json"); err == nil {
		var doc struct {
			Fullsend struct {
				Context Context `json:"context"`
			} `json:"fullsend"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s context: %v", file, err)
		}
		in.Context = doc.Fullsend.Context
		in.Name = in.Context.Agent
	}
	var want []string
	if m := wantLine.FindSubmatch(data); m != nil {
		want = strings.Fields(string(m[1]))
	}
	return in, want
}

func ids(fs []report.Finding) []string {
	var out []string
	for _, f := range fs {
		if !slices.Contains(out, f.RuleID) {
			out = append(out, f.RuleID)
		}
	}
	slices.Sort(out)
	return out
}

func TestBadCorpus(t *testing.T) {
	e := testEngine(t)
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	// testdata/facts: policies whose findings need the engine's facts
	// (conftest and opa get them as --data; bench/lint.sh leaves them out).
	facts, _ := filepath.Glob("testdata/facts/*.yaml")
	files = append(files, facts...)
	if len(files) < 20 {
		t.Fatalf("bad corpus has %d policies, want at least 20", len(files))
	}
	covered := map[string]bool{}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			in, want := corpusInput(t, file)
			if len(want) == 0 {
				t.Fatal("missing '# want: ID...' header")
			}
			rep, err := e.Lint(context.Background(), []Input{in})
			if err != nil {
				t.Fatal(err)
			}
			got := ids(rep.Findings)
			for _, id := range want {
				covered[id] = true
				if !slices.Contains(got, id) {
					t.Errorf("want %s among findings, got %v", id, got)
				}
			}
		})
	}
	for _, r := range e.Rules() {
		if !covered[r.ID] {
			t.Errorf("rule %s (%s) has no policy in testdata/bad", r.ID, r.Name)
		}
	}
}

func TestGoodPolicyHasNoDeny(t *testing.T) {
	in, _ := corpusInput(t, "testdata/good/triage.yaml")
	rep, err := testEngine(t).Lint(context.Background(), []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed(report.SeverityDeny) {
		t.Fatalf("good policy fails: %+v", rep.Findings)
	}
	if got := ids(rep.Findings); !slices.Equal(got, []string{"FS002"}) {
		t.Fatalf("findings %v, want only the subdomain wildcard warning", got)
	}
}

// TestSecretMemoSharesVerdicts lints the same secret-bearing policies
// several times in one call, beside clean ones: the secret scan runs once
// per distinct string (secretMemo), and every copy still gets its finding.
func TestSecretMemoSharesVerdicts(t *testing.T) {
	e := testEngine(t)
	var inputs []Input
	for i := range 6 {
		for _, f := range []string{"testdata/bad/github-token.yaml", "testdata/bad/private-key.yaml", "testdata/good/triage.yaml"} {
			in, _ := corpusInput(t, f)
			in.File = fmt.Sprintf("%d-%s", i, in.File)
			inputs = append(inputs, in)
		}
	}
	rep, err := e.Lint(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, f := range rep.Findings {
		if f.RuleID == "FS018" {
			got[strings.SplitN(f.Policy, "-", 2)[1]]++
		}
	}
	if got["github-token.yaml"] < 6 || got["private-key.yaml"] < 6 || got["triage.yaml"] != 0 {
		t.Errorf("FS018 findings by file = %v, want each secret-bearing copy found and none in triage.yaml", got)
	}
	if got["github-token.yaml"]%6 != 0 || got["private-key.yaml"]%6 != 0 {
		t.Errorf("copies differ in their FS018 findings: %v", got)
	}
}
