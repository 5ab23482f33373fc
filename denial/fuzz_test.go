package denial

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// seedLogs are the seed corpus: the log fixtures of `policy suggest`
// (every kind, the three formats, cut and hostile lines;
// ../suggest/testdata/logs/README.md).
const seedLogs = "../suggest/testdata/logs/"

// upstreamLog holds real lines of OpenShell's own tests and docs, kept
// with the shared fixtures (../shared/fixtures/from-project/, its README).
const upstreamLog = "from-project/denial/testdata/upstream.log"

// seedLines adds every fixture line and every corpus line to f.
func seedLines(f *testing.F) {
	files, _ := filepath.Glob(seedLogs + "*")
	for _, tc := range corpus() {
		for _, l := range corpusLines(tc.ev) {
			f.Add([]byte(l))
		}
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			f.Add([]byte(l))
		}
	}
}

// checkEvent holds the invariants of every parsed event: a lowercase host,
// a path without query, a reason no longer than the shorthand's cut.
func checkEvent(t *testing.T, line []byte, ev Event, res LineResult) {
	if res != LineEvent {
		return
	}
	if ev.Class != 4001 && ev.Class != 4002 {
		t.Fatalf("%q: class %d", line, ev.Class)
	}
	if ev.Host != asciiLower(ev.Host) {
		t.Fatalf("%q: host %q not lowercased", line, ev.Host)
	}
	if strings.ContainsAny(ev.Path, "?#") {
		t.Fatalf("%q: path %q keeps a query", line, ev.Path)
	}
	if ev.Format == FormatJSONL && len(ev.Reason) > maxReasonLen+3 {
		t.Fatalf("%q: reason of %d bytes", line, len(ev.Reason))
	}
}

// FuzzParseLine: any line, in any of the three formats or none, parses
// without a panic and keeps the invariants; the lines are the agent's
// bytes.
func FuzzParseLine(f *testing.F) {
	seedLines(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, res := ParseLine(line)
		checkEvent(t, line, ev, res)
		if k := Classify(ev, true); res != LineEvent && k != KindNone {
			t.Fatalf("%q: kind %q of no event", line, k)
		} else if _, ok := Lookup(k); k != KindNone && !ok {
			t.Fatalf("%q: kind %q is not in the table", line, k)
		}
	})
}

// FuzzParseShorthand targets the sandbox's log file format.
func FuzzParseShorthand(f *testing.F) {
	f.Add("NET:OPEN [MED] DENIED /usr/bin/curl(64) -> api.github.com:443 [policy:- engine:opa] [reason:endpoint api.github.com:443 is not allowed by any policy]")
	f.Add("HTTP:GET [MED] DENIED /b(1) -> GET http://h:1/x [policy:p engine:l7] [k:v reason:r]")
	f.Add("HTTP:POST [MED] DENIED POST http://[::1]:8081/x [policy:p engine:l7] [reason:L7_REQUEST deny POST x reason=y]")
	f.Add("HTTP:POST [MED] DENIED POST http://api.example.com:443/v1/chat [policy:m engine:middleware] [transformed:false failed:false reason:r]")
	// The seeds of the runner's former FuzzDenialKind.
	f.Add("HTTP:POST [MED] DENIED POST http://h:8081/p [policy:p engine:l7] [reason:L7_REQUEST deny]")
	f.Add("NET:OPEN [MED] DENIED curl(1) -> h:443 [policy:- engine:opa] [reason:binary '")
	f.Fuzz(func(t *testing.T, body string) {
		line := []byte("2026-04-01T04:04:32.190Z OCSF " + body)
		ev, res := ParseShorthandLine(string(line))
		checkEvent(t, line, ev, res)
	})
}

// FuzzParseCLI targets `openshell logs` output.
func FuzzParseCLI(f *testing.F) {
	f.Add("[1775016272.190] [sandbox] [OCSF ] [ocsf] NET:OPEN [MED] DENIED /usr/bin/curl(64) -> api.github.com:443 [policy:- engine:opa] [reason:x]")
	f.Add("[1.000] [gateway] [INFO ] [t] m")
	f.Fuzz(func(t *testing.T, line string) {
		ev, res := ParseCLILine(line)
		checkEvent(t, []byte(line), ev, res)
	})
}

// FuzzParseJSON targets OCSF JSONL lines: they keep the invariants, and
// the single pass (scanOCSF) reads a line only as encoding/json reads it.
func FuzzParseJSON(f *testing.F) {
	b, _ := os.ReadFile(seedLogs + "l7-write.jsonl")
	f.Add(string(bytes.TrimSpace(b)))
	b, _ = os.ReadFile(seedLogs + "audit.jsonl")
	f.Add(string(bytes.TrimSpace(b)))
	f.Add(`{"class_uid":4001,"action_id":2,"status_detail":"` + strings.Repeat("é", 200) + `"}`)
	for i, tc := range corpus() {
		tc.ev.TimeMS = t0 + int64(i)
		f.Add(tc.ev.jsonLine())
	}
	for _, l := range jsonEdgeLines() {
		if len(l) < 4<<10 {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		ev, res := ParseJSONLine(line)
		checkEvent(t, []byte(line), ev, res)
		if res == LineEvent && !utf8.ValidString(ev.Reason) && utf8.ValidString(line) {
			t.Fatalf("%q: the cut split a rune", line)
		}
		checkScanAsDecoder(t, line)
		if want, wres := decodedJSONLine(line); wres != res || !reflect.DeepEqual(want, ev) {
			t.Fatalf("%q:\n got %d %+v\nwant %d %+v", line, res, ev, wres, want)
		}
	})
}

// checkScanAsDecoder: a line the single pass reads, encoding/json reads
// too, into the same fields.
func checkScanAsDecoder(t *testing.T, line string) {
	t.Helper()
	got, ok := scanOCSF(line)
	if !ok {
		return
	}
	want, err := decodeOCSF(line)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: one pass read\n%+v\nencoding/json %v\n%+v", line, got, err, want)
	}
}

// FuzzReadLog: a whole input, with any line breaks, reads without error
// and counts every line once.
func FuzzReadLog(f *testing.F) {
	b, _ := os.ReadFile(seedLogs + "noise.log")
	f.Add(b)
	f.Add([]byte("\r\n\n\r"))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, st, err := ReadLog("f", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if sst, err := Scan("f", bytes.NewReader(data), func(Event) { n++ }); err != nil || sst != st || n != len(evs) {
			t.Fatalf("Scan %+v %v, %d events; ReadLog %+v, %d", sst, err, n, st, len(evs))
		}
		if st.Events != len(evs) || st.Unparsed > strings.Count(string(data), "\n")+1 {
			t.Fatalf("stats %+v for %d events", st, len(evs))
		}
		for _, ev := range evs {
			if _, res := ParseLine([]byte("x")); res != LineUnparsed {
				t.Fatal("x parsed")
			}
			if ev.Line < 1 {
				t.Fatalf("line %d", ev.Line)
			}
		}
	})
}
