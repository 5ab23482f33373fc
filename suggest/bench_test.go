package suggest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/suggest"
)

// benchLog writes a sandbox log of n lines shaped like a busy run: most
// lines are allowed connections and L7 decisions and tracing lines; one in
// ten is a denial, over 30 distinct requests of five kinds.
func benchLog(n int) []byte {
	var b bytes.Buffer
	t0 := time.Date(2026, 4, 1, 4, 0, 0, 0, time.UTC)
	for i := range n {
		ts := t0.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		switch {
		case i%10 == 9:
			k := (i / 10) % 30
			switch k % 5 {
			case 0:
				fmt.Fprintf(&b, "%s OCSF HTTP:POST [MED] DENIED POST http://host.docker.internal:8081/repos/acme/widgets/issues/7/c%d [policy:host_docker_internal_8081 engine:l7] [reason:L7_REQUEST deny POST host.docker.internal:8081/repos/acme/widgets/issues/7/c%d reason=POST /repos/acme/widgets/issues/7/c%d not permitted by policy]\n", ts, k, k, k)
			case 1:
				fmt.Fprintf(&b, "%s OCSF NET:OPEN [MED] DENIED /usr/bin/curl(64) -> api%d.example.com:443 [policy:- engine:opa] [reason:endpoint api%d.example.com:443 is not allowed by any policy]\n", ts, k, k)
			case 2:
				fmt.Fprintf(&b, "%s OCSF NET:OPEN [MED] DENIED /usr/bin/curl(1618) -> 169.254.169.254:80 [policy:- engine:ssrf] [reason:169.254.169.254 resolves to always-blocked address 169.254.169.254, connection rejected]\n", ts)
			case 3:
				fmt.Fprintf(&b, "%s OCSF NET:OPEN [MED] DENIED /usr/bin/curl(70) -> internal%d.example.com:443 [policy:- engine:ssrf] [reason:internal%d.example.com resolves to 10.0.3.7 which is not in allowed_ips, connection rejected]\n", ts, k, k)
			default:
				fmt.Fprintf(&b, "%s OCSF HTTP:GET [MED] DENIED GET http://host.docker.internal:8081/repos/acme/widgets/pulls/%d [policy:host_docker_internal_8081 engine:l7] [reason:L7_REQUEST deny GET host.docker.internal:8081/repos/acme/widgets/pulls/%d reason=GET /repos/acme/widgets/pulls/%d not permitted by policy]\n", ts, k, k, k)
			}
		case i%3 == 0:
			fmt.Fprintf(&b, "%s INFO openshell_sandbox::proxy: relayed %d bytes\n", ts, i)
		case i%3 == 1:
			fmt.Fprintf(&b, "%s OCSF NET:OPEN [INFO] ALLOWED /usr/bin/curl(64) -> host.docker.internal:8081 [policy:host_docker_internal_8081 engine:opa]\n", ts)
		default:
			fmt.Fprintf(&b, "%s OCSF HTTP:GET [INFO] ALLOWED GET http://host.docker.internal:8081/repos/acme/widgets/issues/7 [policy:host_docker_internal_8081 engine:l7]\n", ts)
		}
	}
	return b.Bytes()
}

// BenchmarkReadLog100k parses a 100,000-line sandbox log.
func BenchmarkReadLog100k(b *testing.B) {
	data := benchLog(100_000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := denial.ReadLog("sandbox.log", bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSuggest100k is `policy suggest` on a 100,000-line log without
// the first compile: parse, classify, group, plan, patch, recompile the
// patched project and check every suggestion with the decision engine.
// The target is under 1 s of CPU (bench/suggest.sh measures the
// whole command).
func BenchmarkSuggest100k(b *testing.B) {
	f := filepath.Join(b.TempDir(), "sandbox.log")
	if err := os.WriteFile(f, benchLog(100_000), 0o600); err != nil {
		b.Fatal(err)
	}
	tgt := target(b, triage)
	root, err := os.OpenRoot(triage)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	comp := compiler(b)
	b.ResetTimer()
	for b.Loop() {
		l, err := suggest.ReadLogs([]string{f})
		if err != nil {
			b.Fatal(err)
		}
		res, err := suggest.Run(context.Background(), suggest.Options{Agent: tgt, Project: root.FS(), Compile: comp, Values: job}, l.Events, l.Inputs)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Suggestions) == 0 {
			b.Fatal("no suggestions")
		}
	}
}

// TestWriteBenchLog writes the benchmark's log for bench/suggest.sh when
// SUGGEST_BENCH_LOG names a file, and the same events as OCSF JSONL to
// SUGGEST_BENCH_JSONL.
func TestWriteBenchLog(t *testing.T) {
	out := os.Getenv("SUGGEST_BENCH_LOG")
	if out == "" {
		t.Skip("SUGGEST_BENCH_LOG is not set")
	}
	data := benchLog(100_000)
	if err := os.WriteFile(out, data, 0o600); err != nil {
		t.Fatal(err)
	}
	js := os.Getenv("SUGGEST_BENCH_JSONL")
	if js == "" {
		return
	}
	var b bytes.Buffer
	for _, line := range bytes.Split(data, []byte("\n")) {
		ev, res := denial.ParseLine(line)
		if res != denial.LineEvent {
			continue
		}
		b.Write(ocsfJSON(ev))
		b.WriteByte('\n')
	}
	if err := os.WriteFile(js, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ocsfJSON renders an event as the OCSF JSON object OpenShell writes
// (the fields suggest reads), with the line's pid: denial.Assess matches a
// text line with its record on every field the line shows, pid included.
func ocsfJSON(ev denial.Event) []byte {
	action := map[string]int{"Allowed": 1, "Denied": 2}[ev.Action]
	m := map[string]any{"class_uid": ev.Class, "time": ev.TimeMS, "action_id": action, "action": ev.Action,
		"dst_endpoint": map[string]any{"domain": ev.Host, "port": ev.Port}}
	if ev.Reason != "" {
		m["message"] = ev.Reason
	}
	if ev.Policy != "" {
		m["firewall_rule"] = map[string]any{"name": ev.Policy, "type": ev.Engine}
	}
	if ev.Binary != "" {
		m["actor"] = map[string]any{"process": map[string]any{"name": ev.Binary, "pid": ev.PID}}
	}
	if ev.Method != "" {
		m["http_request"] = map[string]any{"http_method": ev.Method, "url": map[string]any{"scheme": "http", "hostname": ev.Host, "path": ev.Path, "port": ev.Port}}
	}
	out, _ := json.Marshal(m)
	return out
}
