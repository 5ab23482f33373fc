package denial

import (
	"strings"
	"testing"
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

// BenchmarkScan100k reads a 100,000-line shorthand log.
func BenchmarkScan100k(b *testing.B) {
	text, _ := benchLog(100_000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Scan("s.log", strings.NewReader(text), func(Event) {}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssess100k reads a 100,000-line shorthand log and its JSONL
// record and assesses them together.
func BenchmarkAssess100k(b *testing.B) {
	text, jsonl := benchLog(100_000)
	b.SetBytes(int64(len(text) + len(jsonl)))
	for b.Loop() {
		s, _, _ := ReadLog("s.log", strings.NewReader(text))
		j, _, _ := ReadLog("j.log", strings.NewReader(jsonl))
		evs := append(s, j...)
		if n := Assess(evs); n != 0 {
			b.Fatalf("%d suspect", n)
		}
	}
}
