package runner

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/ciout"
	"github.com/fullsend-ai/agent-sandbox/runner/redact"
)

// BenchmarkRun measures one whole agent run against the openshell fake and
// splits it: openshell-ms is the wall time spent inside openshell (fake)
// processes, overhead-ms everything else the runner does (verification,
// placeholder resolution, policy encoding, staging, sanitizing, logging).
func BenchmarkRun(b *testing.B) {
	h := newHarness(b, CIGitHub)
	h.env["OPENSHELL_FAKE_READY_POLLS"] = "1"
	ws := b.TempDir()
	var overhead, inOS time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.log.Reset()
		h.stdout.Reset()
		res, err := h.run(context.Background(), Request{Workspace: ws, Outputs: []string{"out"}, OutputDir: filepath.Join(b.TempDir(), "o")})
		if err != nil {
			b.Fatalf("%v\n%s", err, h.log.String())
		}
		overhead += res.Duration - res.InOpenShell
		inOS += res.InOpenShell
	}
	b.ReportMetric(float64(overhead.Microseconds())/1000/float64(b.N), "overhead-ms/op")
	b.ReportMetric(float64(inOS.Microseconds())/1000/float64(b.N), "openshell-ms/op")
	b.ReportMetric(float64(overhead)/float64(inOS), "overhead/openshell")
}

// BenchmarkPrepare measures verification, placeholder resolution and policy
// encoding: the runner's in-process work before it calls openshell.
func BenchmarkPrepare(b *testing.B) {
	h := newHarness(b, CIGitHub)
	opts := h.opts
	opts.Project = h.project
	opts.Env = MapEnvironment(h.env, h.root)
	r, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x := &run{r: r, req: Request{Agent: "triage"}, res: &Result{}, mask: &redact.Masker{}, rep: ciout.NewReporter(CILocal, &h.log, ""), tmp: b.TempDir()}
		x.log = newRunLog(CILocal, x.mask, &h.log)
		if err := x.prepare(context.Background()); err != nil {
			b.Fatal(err)
		}
		h.log.Reset()
	}
}

// benchProject is the compiled project bench/runner.sh runs `fullsend run`
// on: testProject written out, kept current by TestBenchProjectIsCurrent.
const benchProject = "testdata/bench-project"

// TestBenchProjectIsCurrent keeps testdata/bench-project equal to the
// runner tests' project (policy, manifest and sources); -update rewrites it.
func TestBenchProjectIsCurrent(t *testing.T) {
	want := testProject(t, "v0.0.111")
	if *update {
		if err := os.RemoveAll(benchProject); err != nil {
			t.Fatal(err)
		}
		for name, f := range want {
			p := filepath.Join(benchProject, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got []string
	err := filepath.WalkDir(benchProject, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(benchProject, p)
		got = append(got, filepath.ToSlash(rel))
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if f, ok := want[filepath.ToSlash(rel)]; !ok || !bytes.Equal(f.Data, data) {
			t.Errorf("%s is stale or not the runner tests' project; run go test ./runner -run TestBenchProjectIsCurrent -update", p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v (run go test ./runner -run TestBenchProjectIsCurrent -update)", err)
	}
	if len(got) != len(want) {
		t.Errorf("%s holds %v, want the %d files of testProject", benchProject, got, len(want))
	}
}
