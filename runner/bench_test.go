package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/ciout"
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
		x := &run{r: r, req: Request{Agent: "triage"}, res: &Result{}, mask: &masker{}, rep: ciout.NewReporter(CILocal, &h.log, ""), tmp: b.TempDir()}
		x.log = newRunLog(CILocal, x.mask, &h.log)
		if err := x.prepare(context.Background()); err != nil {
			b.Fatal(err)
		}
		h.log.Reset()
	}
}

// TestWriteBenchFixture writes the compiled project fixture to the
// directory named by FULLSEND_RUNNER_FIXTURE_OUT, for bench/runner.sh.
func TestWriteBenchFixture(t *testing.T) {
	out := os.Getenv("FULLSEND_RUNNER_FIXTURE_OUT")
	if out == "" {
		t.Skip("FULLSEND_RUNNER_FIXTURE_OUT not set")
	}
	for name, f := range testProject(t, "v0.0.111") {
		p := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
