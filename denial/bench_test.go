package denial

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchLog is n lines of the corpus's shorthand and tracing lines, and the
// JSONL record of its events.
func benchLog(n int) (text, jsonl string) {
	var t, j strings.Builder
	cases := corpus()
	for i := 0; i < n; i++ {
		if i%3 == 2 {
			t.WriteString(noiseLines[i%4] + "\n")
			continue
		}
		e := cases[i%len(cases)].ev
		if strings.HasPrefix(e.Path, "/blob/") {
			e.Path = "/blob/x"
			e.Message = "L7_REQUEST deny PUT api.example.com:443/blob/x reason=PUT /blob/x not permitted by policy"
		}
		e.TimeMS = t0 + int64(i)
		t.WriteString(e.fileLine(true) + "\n")
		j.WriteString(e.jsonLine() + "\n")
	}
	return t.String(), j.String()
}

// cpuTime is the process's user and system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start (cpu-ns/op,
// garbage collection included): on a shared machine ns/op, wall time,
// counts the time other processes hold the cores.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkScan100k reads a 100,000-line shorthand log.
func BenchmarkScan100k(b *testing.B) {
	text, _ := benchLog(100_000)
	b.SetBytes(int64(len(text)))
	var start time.Duration
	for b.Loop() {
		if start == 0 {
			start = cpuTime(b)
		}
		if _, err := Scan("s.log", strings.NewReader(text), func(Event) {}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkAssess100k reads a 100,000-line shorthand log and its JSONL
// record and assesses them together.
func BenchmarkAssess100k(b *testing.B) {
	text, jsonl := benchLog(100_000)
	b.SetBytes(int64(len(text) + len(jsonl)))
	var start time.Duration
	for b.Loop() {
		if start == 0 {
			start = cpuTime(b)
		}
		s, _, _ := ReadLog("s.log", strings.NewReader(text))
		j, _, _ := ReadLog("j.log", strings.NewReader(jsonl))
		evs := append(s, j...)
		if n := Assess(evs); n != 0 {
			b.Fatalf("%d suspect", n)
		}
	}
	reportCPU(b, start)
}

// BenchmarkScanJSONL reads the OCSF JSONL record of the same 100,000-line
// log (66,667 lines).
func BenchmarkScanJSONL(b *testing.B) {
	_, jsonl := benchLog(100_000)
	b.SetBytes(int64(len(jsonl)))
	var start time.Duration
	for b.Loop() {
		if start == 0 {
			start = cpuTime(b)
		}
		if _, err := Scan("j.log", strings.NewReader(jsonl), func(Event) {}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}
