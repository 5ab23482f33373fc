package evidence

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/denial"
)

type tarEntry struct {
	name     string
	typ      byte
	body     string
	linkname string
}

func tarOf(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	w := tar.NewWriter(&b)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.linkname}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			w.Write([]byte(e.body))
		}
	}
	w.Close()
	return b.Bytes()
}

// TestReadLogTarHostile: the tar stream comes out of the sandbox; only
// regular files with rolling-log names are kept, within the limits.
func TestReadLogTarHostile(t *testing.T) {
	const day = "openshell.2026-11-28.log"
	for _, tc := range []struct {
		name    string
		entries []tarEntry
		want    []string // name=body
		notes   int
	}{
		{name: "both files", entries: []tarEntry{{day, tar.TypeReg, "a\n", ""}, {"openshell-ocsf.2026-11-28.log", tar.TypeReg, "{}\n", ""}},
			want: []string{"openshell-ocsf.2026-11-28.log={}\n", day + "=a\n"}},
		{name: "symlink", entries: []tarEntry{{day, tar.TypeSymlink, "", "/etc/shadow"}}, notes: 1},
		{name: "hard link", entries: []tarEntry{{day, tar.TypeLink, "", "/etc/shadow"}}, notes: 1},
		{name: "directory", entries: []tarEntry{{"openshell.2026-11-28.log/", tar.TypeDir, "", ""}}, notes: 1},
		{name: "fifo", entries: []tarEntry{{day, tar.TypeFifo, "", ""}}, notes: 1},
		{name: "names are data", entries: []tarEntry{{"../" + day, tar.TypeReg, "x\n", ""}, {"/var/log/" + day, tar.TypeReg, "x\n", ""},
			{"openshell.2026-11-28.log\n::error::x", tar.TypeReg, "x\n", ""}, {".bashrc", tar.TypeReg, "x\n", ""}}, notes: 4},
		{name: "duplicate", entries: []tarEntry{{day, tar.TypeReg, "a\n", ""}, {day, tar.TypeReg, "b\n", ""}}, want: []string{day + "=a\n"}, notes: 1},
		{name: "cut at the limit, on a line", entries: []tarEntry{{day, tar.TypeReg, "0123456789\nabcdefghij\n", ""}}, want: []string{day + "=0123456789\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, notes, err := readLogTar(bytes.NewReader(tarOf(t, tc.entries...)), 16, 1<<20, 8)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range files {
				got = append(got, f.Name+"="+string(f.Data))
			}
			if !reflect.DeepEqual(got, tc.want) || len(notes) != tc.notes {
				t.Errorf("got %q notes %q, want %q and %d notes", got, notes, tc.want, tc.notes)
			}
		})
	}
	t.Run("count and total limits", func(t *testing.T) {
		var es []tarEntry
		for _, d := range []string{"01", "02", "03", "04"} {
			es = append(es, tarEntry{"openshell.2026-11-" + d + ".log", tar.TypeReg, "0123456789\n", ""})
		}
		files, notes, _ := readLogTar(bytes.NewReader(tarOf(t, es...)), 1<<20, 22, 3)
		if len(files) != 2 || len(notes) != 2 {
			t.Errorf("%d files, notes %q", len(files), notes)
		}
		files, notes, _ = readLogTar(bytes.NewReader(tarOf(t, es...)), 1<<20, 1<<20, 3)
		if len(files) != 3 || len(notes) != 1 {
			t.Errorf("%d files, notes %q", len(files), notes)
		}
	})
	t.Run("not a tar", func(t *testing.T) {
		if _, _, err := readLogTar(strings.NewReader("tar: openshell*.log: Cannot stat"), 16, 16, 8); err == nil {
			t.Error("garbage accepted")
		}
	})
}

func TestWriteEvidenceFileRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	os.Symlink(target, filepath.Join(dir, "sandbox.log"))
	if err := writeEvidenceFile(dir, "sandbox.log", []byte("x")); err == nil {
		t.Error("wrote through a symlink")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Error("link target changed")
	}
	for _, bad := range []string{"../x", "a/b", ".hidden"} {
		if err := writeEvidenceFile(dir, bad, nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRedactQueries(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"GET http://h/p?token=s [policy:x engine:l7]", "GET http://h/p?[redacted] [policy:x engine:l7]"},
		{"[reason:FORWARD_L7 deny GET h:80/p?a=b&c=d]", "[reason:FORWARD_L7 deny GET h:80/p?[redacted]]"},
		{"a?b\tc?d", "a?[redacted]\tc?[redacted]"},
		{"no query", "no query"},
		{"ünï?cödé x", "ünï?[redacted] x"},
	} {
		if got := redactQueries(tc.in); got != tc.want {
			t.Errorf("redactQueries(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	jm := maskOf("SECRETVALUE")
	for _, tc := range []struct{ in, want string }{
		{`{"path":"/v1?token=s","n":1}` + "\n", `{"path":"/v1?[redacted]","n":1}` + "\n"},
		{`{"m":"GET h/p?t=\"x\" reason=y"}`, `{"m":"GET h/p?[redacted] reason=y"}`},
		{`{"a":"?"}`, `{"a":"?[redacted]"}`},
		{`{"a?b":1, "c": [1, "x y"]}`, `{"a?[redacted]":1, "c": [1, "x y"]}`},
		{`{"t":"SECRET\u0056ALUE","u":"a<b>&"}`, `{"t":"***","u":"a<b>&"}`},
		{`not json ?q=SECRETVALUE x`, `not json ?[redacted] x`},
	} {
		got := redactJSONLine(jm, tc.in)
		if got != tc.want {
			t.Errorf("redactJSONLine(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	m := maskOf("abc?def")
	if got := string(redactLog(m, []byte("x abc?def y\n"), false)); got != "x *** y\n" {
		t.Errorf("a secret with '?' is not masked whole: %q", got)
	}
}

// TestDenialKind: the runner counts every row of the denial table by the
// table's own name (the name `policy suggest` prints), from the sandbox
// file's shorthand and from `openshell logs` alike; lines are OpenShell's
// forms at v0.0.111 (the sources are cited in package denial), including
// the v0.0.111 bracket of unmapped fields before the reason
// (crates/openshell-ocsf/src/format/shorthand.rs:158-171@v0.0.111).
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"summarizer":           "summarizer",
		"fullsend-diag/fs-a-1": "fullsend-diag/fs-a-1",
		"a_b.c:d=e@f+g,h":      "a_b.c:d=e@f+g,h",
		"":                     "''",
		"two words":            "'two words'",
		"it's":                 `'it'\''s'`,
		"$(id)":                "'$(id)'",
		"caf\u00e9":            "'caf\u00e9'",
		"line\nbreak":          "'line\nbreak'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestDenialKind(t *testing.T) {
	for _, tc := range []struct {
		body string
		want denial.Kind // "" counts nothing
	}{
		{"NET:OPEN [MED] DENIED /usr/bin/curl(64) -> api.github.com:443 [policy:- engine:opa] [reason:endpoint api.github.com:443 is not allowed by any policy]", denial.KindL4NoEndpoint},
		{"NET:OPEN [MED] DENIED /usr/bin/curl(64) -> api.github.com:443 [policy:- engine:opa] [reason:no matching policy]", denial.KindL4NoEndpoint},
		{"NET:OPEN [MED] DENIED python3(9) -> h:8081 [policy:- engine:opa] [reason:binary '/usr/bin/python3.11' not allowed in policy 'p' (ancestors: [/usr/bin/bash -> /usr/local/bin/claude], cmdline: [])]", denial.KindBinary},
		{"NET:OPEN [MED] DENIED curl(1) -> h:443 [policy:- engine:opa] [reason:network connections not allowed by policy]", denial.KindNoNetwork},
		{"NET:OPEN [MED] DENIED curl(1618) -> 169.254.169.254:80 [policy:- engine:ssrf] [reason:resolves to always-blocked address]", denial.KindSSRF},
		{"HTTP:GET [MED] DENIED curl(2) -> GET http://h/p [policy:p engine:ssrf] [reason:resolves to 10.0.3.7 which is not in allowed_ips, connection rejected]", denial.KindSSRF},
		{"HTTP:GET [MED] DENIED curl(2) -> GET http://h/p [policy:- engine:opa] [reason:endpoint h:80 is not allowed by any policy]", denial.KindForward},
		{"HTTP:POST [MED] DENIED POST http://h:8081/p [policy:p engine:l7] [reason:L7_REQUEST deny POST h:8081/p reason=POST /p not permitted by policy]", denial.KindL7Deny},
		{"HTTP:GET [MED] DENIED curl(3) -> GET http://h/p [policy:p engine:l7] [reason:FORWARD_L7 deny GET h:80/p reason=GET /p not permitted by policy]", denial.KindL7Deny},
		{"HTTP:GET [MED] DENIED curl(3) -> GET http://h/p [policy:p engine:l7] [rule:x attempt:2 reason:FORWARD_L7 deny GET h:80/p reason=GET /p not permitted by policy]", denial.KindL7Deny},
		{"HTTP:DELETE [MED] DENIED DELETE http://h:443/p [policy:p engine:l7] [reason:L7_REQUEST deny DELETE h:443/p reason=DELETE /p blocked by deny rule]", denial.KindL7DenyRule},
		{"HTTP:POST [MED] DENIED POST http://h:8081/graphql [policy:p engine:l7-graphql] [reason:GRAPHQL_L7_REQUEST deny POST h:8081/graphql reason=x]", denial.KindL7Other},
		{"HTTP:GET [MED] DENIED curl(3) -> GET http://h/a%2Fb [policy:p engine:l7] [reason:request-target contains an encoded '/' (%2F)]", denial.KindNonCanonical},
		{"NET:OPEN [MED] DENIED curl(3) -> h:443 [policy:p engine:l7] [reason:CONNECT_L7 blocked unsupported tunnel protocol for h:443]", denial.KindTunnelProtocol},
		{"NET:OPEN [HIGH] DENIED curl(3) -> h:443 [policy:p engine:credentials] [reason:credentialed endpoint requires L7 inspection; raw tunnel is not explicitly allowed]", denial.KindCredentials},
		{"NET:OPEN [HIGH] DENIED curl(3) -> h:443 [policy:p engine:tls] [reason:x]", denial.KindTLS},
		{"NET:REFUSE [MED] DENIED node(4) -> 1.2.3.4:443/tcp [policy:bypass-detect engine:nftables] [reason:BYPASS_DETECT 1.2.3.4:443 proto=tcp binary=node action=reject reason=x]", denial.KindBypass},
		{"NET:OPEN [MED] DENIED /usr/bin/psql(5) -> db:5432 [policy:- engine:opa] [reason:transparent_tcp_identity_denied]", denial.KindTransparentTCP},
		{"NET:OPEN [MED] DENIED curl(3) -> h:443 [policy:p engine:opa] [reason:CONNECT h:443 not permitted because policy changed]", denial.KindReloadRace},
		{"HTTP:POST [MED] DENIED POST http://api.example.com:443/v1/chat [policy:model_api engine:middleware] [transformed:false failed:false reason:prompt rejected]", denial.KindL7Other},
		{"HTTP:GET [INFO] ALLOWED GET http://api.github.com:443/user [policy:github engine:l7]", ""},
		{"NET:OPEN [INFO] ALLOWED curl(64) -> h:8081 [policy:p engine:opa]", ""},
		{"PROC:LAUNCH [INFO] DENIED sh(1)", ""},
	} {
		want := map[denial.Kind]int{}
		if tc.want != "" {
			want[tc.want] = 1
		}
		for _, line := range []string{"2026-04-01T04:04:32.190Z OCSF " + tc.body, "[1775016272.190] [sandbox] [OCSF ] [ocsf] " + tc.body} {
			got := map[denial.Kind]int{}
			countDenials(got, "sandbox.log", []byte(line+"\n"), false)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %v, want %v", line, got, want)
			}
			for k := range got {
				if _, ok := denial.Lookup(k); !ok {
					t.Errorf("%s: %q is not a kind of the table", line, k)
				}
			}
		}
	}
}

// TestCountDenialsFormats: the file's shorthand and the CLI's sandbox
// stream count the same; non-OCSF lines count nothing; the JSONL record
// counts its denials and, read as the record, its audit verdicts.
func TestCountDenialsFormats(t *testing.T) {
	body := "HTTP:POST [MED] DENIED POST http://h:8081/p [policy:p engine:l7] [reason:L7_REQUEST deny POST h:8081/p reason=POST /p not permitted by policy]"
	for _, log := range []string{
		"2026-04-01T04:04:32.190Z OCSF " + body + "\n2026-04-01T04:04:32.191Z INFO openshell_sandbox: DENIED nothing\n",
		"[1775014132.190] [sandbox] [OCSF ] [ocsf] " + body + "\r\n[1775014132.191] [gateway] [INFO ] [openshell_server] " + body + "\n",
	} {
		got := map[denial.Kind]int{}
		countDenials(got, "sandbox.log", []byte(log), false)
		if !reflect.DeepEqual(got, map[denial.Kind]int{denial.KindL7Deny: 1}) {
			t.Errorf("%v from %q", got, log)
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "testdata", "evidence", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var jsonl []byte
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			OCSF json.RawMessage `json:"ocsf"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		jsonl = append(append(jsonl, ev.OCSF...), '\n')
	}
	got := map[denial.Kind]int{}
	countDenials(got, "openshell-ocsf.2026-04-01.log", jsonl, true)
	if !reflect.DeepEqual(got, map[denial.Kind]int{denial.KindL7Deny: 3, denial.KindL4NoEndpoint: 1, denial.KindAudit: 1}) {
		t.Errorf("JSONL: %v, want the denials and one audit verdict", got)
	}
	got = map[denial.Kind]int{}
	countDenials(got, "openshell-ocsf.2026-04-01.log", jsonl, false)
	if !reflect.DeepEqual(got, map[denial.Kind]int{denial.KindL7Deny: 3, denial.KindL4NoEndpoint: 1}) {
		t.Errorf("JSONL denials: %v, want the shorthand's", got)
	}
}

// FuzzCountDenials: any log counts only kinds of the table, at most one
// per line, and an audit verdict only from the JSONL record.
func FuzzCountDenials(f *testing.F) {
	f.Add([]byte("2026-04-01T04:04:32.190Z OCSF HTTP:POST [MED] DENIED POST http://h:8081/p [policy:p engine:l7] [reason:L7_REQUEST deny]\n"), false)
	f.Add([]byte(`{"class_uid":4002,"action_id":1,"message":"L7_REQUEST audit GET h:1/x reason=y","firewall_rule":{"name":"p","type":"l7"}}`), true)
	f.Fuzz(func(t *testing.T, data []byte, audits bool) {
		got := map[denial.Kind]int{}
		countDenials(got, "f", data, audits)
		n := 0
		for k, v := range got {
			if _, ok := denial.Lookup(k); !ok || !audits && !k.Denied() {
				t.Errorf("kind %q counted (audits %v)", k, audits)
			}
			n += v
		}
		if n > bytes.Count(data, []byte("\n"))+1 {
			t.Errorf("%d counts for %d lines", n, bytes.Count(data, []byte("\n"))+1)
		}
	})
}

func FuzzRedactLog(f *testing.F) {
	f.Add([]byte(`{"m":"GET h/p?t=\"x\" y","u":{"path":"/a?b"}}`+"\n"), true)
	f.Add([]byte("GET http://h/p?token=s ]\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, jsonl bool) {
		m := maskOf("SECRETVALUE")
		out := redactLog(m, data, jsonl)
		if bytes.Contains(out, []byte("SECRETVALUE")) {
			t.Errorf("secret left in %q", out)
		}
		if jsonl {
			for _, line := range bytes.Split(data, []byte("\n")) {
				if json.Valid(line) && !json.Valid([]byte(redactJSONLine(m, string(line)))) {
					t.Errorf("valid JSON broken: %s", line)
				}
			}
		}
	})
}

func FuzzReadLogTar(f *testing.F) {
	f.Add(tarOf(f, tarEntry{"openshell.2026-11-28.log", tar.TypeReg, "a\nb\n", ""}))
	f.Add(tarOf(f, tarEntry{"openshell.2026-11-28.log", tar.TypeSymlink, "", "/etc"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		files, _, _ := readLogTar(bytes.NewReader(data), 64, 100, 3)
		total := 0
		for _, f := range files {
			total += len(f.Data)
			if !logFileName.MatchString(f.Name) || len(f.Data) > 64 {
				t.Errorf("kept %q (%d bytes)", f.Name, len(f.Data))
			}
		}
		if total > 100 || len(files) > 3 {
			t.Errorf("%d files, %d bytes", len(files), total)
		}
	})
}

// BenchmarkProcessEvidence measures the in-process work on a 100,000-line
// shorthand log: the tar read, masking and redaction, and the denial count.
func BenchmarkProcessEvidence(b *testing.B) {
	var log strings.Builder
	for i := 0; i < 100000; i++ {
		if i%10 == 0 {
			log.WriteString("2026-04-01T04:04:32.190Z OCSF HTTP:GET [MED] DENIED /usr/bin/curl(77) -> GET http://internal.example.com/v1/items?token=secret-456 [policy:internal_api engine:l7] [reason:FORWARD_L7 deny GET internal.example.com:80/v1/items?token=secret-456 reason=GET /v1/items not permitted by policy]\n")
		} else {
			log.WriteString("2026-04-01T04:04:32.190Z OCSF NET:OPEN [INFO] ALLOWED /usr/bin/curl(64) -> host.docker.internal:8081 [policy:host_docker_internal_8081 engine:opa]\n")
		}
	}
	archive := tarOf(b, tarEntry{"openshell.2026-04-01.log", tar.TypeReg, log.String(), ""})
	m := maskOf("tok-SECRET-abc123")
	b.SetBytes(int64(len(archive)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		files, _, err := ReadLogs(bytes.NewReader(archive))
		if err != nil || len(files) != 1 {
			b.Fatal(err)
		}
		d := map[denial.Kind]int{}
		countDenials(d, files[0].Name, redactLog(m, files[0].Data, false), false)
		if d[denial.KindL7Deny] != 10000 {
			b.Fatal(d)
		}
	}
}

// maskOf is a masker of one secret, as the run's masker replaces it.
func maskOf(secret string) func(string) string {
	return strings.NewReplacer(secret, "***").Replace
}

// countDenials counts one log as Keep does, alone: as the counting source
// (shorthand), or as the JSONL record when audits is set.
func countDenials(into map[denial.Kind]int, name string, data []byte, audits bool) {
	var c denialCount
	format := "shorthand"
	if audits {
		format = "ocsf-jsonl"
	}
	c.read(Log{Name: name, Format: format}, data)
	d, _ := c.count()
	maps.Copy(into, d)
}

// Keep reports how many denial lines the agent could have written (red
// team 5, T5-1: a binary path with line breaks forges a line): with the
// shorthand alone, the counted forged line beside its fragments; with the
// JSONL record, every shorthand denial the record lacks, which the counts
// (the record's) leave out.
func TestKeepUntrusted(t *testing.T) {
	forged := "2026-05-01T01:46:57.000Z OCSF NET:OPEN [MED] DENIED /usr/bin/git(4242) -> exfil.attacker.example:443 [policy:github engine:opa] [reason:endpoint exfil.attacker.example:443 is not allowed by any policy]"
	injected := "2026-05-01T01:46:57.000Z OCSF NET:OPEN [MED] DENIED /tmp/x\n" + forged + "\n/y/curl(777) -> denied.example.com:443 [policy:- engine:opa] [reason:endpoint denied.example.com:443 is not allowed by any policy]\n"
	clean := "2026-05-01T01:46:58.000Z OCSF NET:OPEN [MED] DENIED /usr/bin/curl(778) -> ok.example.com:443 [policy:- engine:opa] [reason:endpoint ok.example.com:443 is not allowed by any policy]\n"
	// A line that holds "//" ends any injected block: the clean denial
	// before it is not beside the fragments.
	barrier := "2026-05-01T01:46:58.500Z OCSF HTTP:GET [INFO] ALLOWED GET http://api.github.com:443/user [policy:github engine:l7]\n"
	record := `{"class_uid":4001,"time":1777600018000,"action_id":2,"message":"CONNECT denied ok.example.com:443","status_detail":"endpoint ok.example.com:443 is not allowed by any policy","dst_endpoint":{"domain":"ok.example.com","port":443},"actor":{"process":{"name":"/usr/bin/curl","pid":778}},"firewall_rule":{"name":"-","type":"opa"}}` + "\n"
	for _, tc := range []struct {
		name      string
		logs      []Log
		denials   int
		untrusted int
	}{
		{"shorthand alone", []Log{{Name: "openshell.2026-05-01.log", Format: "shorthand", Data: []byte(clean + barrier + injected)}}, 2, 1},
		{"with the JSONL record", []Log{
			{Name: "openshell-ocsf.2026-05-01.log", Format: "ocsf-jsonl", Data: []byte(record)},
			{Name: "openshell.2026-05-01.log", Format: "shorthand", Data: []byte(clean + barrier + injected)}}, 1, 1},
		{"clean", []Log{{Name: "openshell.2026-05-01.log", Format: "shorthand", Data: []byte(clean)}}, 1, 0},
	} {
		r := &Record{Dir: t.TempDir()}
		got := r.Keep(tc.logs, func(s string) string { return s }, t.Logf)
		if r.UntrustedDenials != tc.untrusted || !reflect.DeepEqual(got, map[denial.Kind]int{denial.KindL4NoEndpoint: tc.denials}) {
			t.Errorf("%s: %d untrusted of %v, want %d of %d", tc.name, r.UntrustedDenials, got, tc.untrusted, tc.denials)
		}
	}
}

// TestKeepCountsTheRecord: with the OCSF JSONL record in the evidence,
// the counts are the record's, never the record's and the shorthand's
// together; without it, the shorthand's. A FORWARD denial whose shorthand
// line an injected binary path split (its fragments parse as nothing, a
// forged line between them as a denial) is counted from its record, and
// the forged line is not.
func TestKeepCountsTheRecord(t *testing.T) {
	const (
		ts      = "2026-05-01T01:46:57.000Z OCSF "
		shortFw = "HTTP:GET [MED] DENIED /usr/bin/curl(41) -> GET http://d.example/f [policy:- engine:opa] [reason:endpoint d.example:80 is not allowed by any policy]"
		forged  = "NET:OPEN [MED] DENIED /usr/bin/git(4242) -> exfil.attacker.example:443 [policy:github engine:opa] [reason:endpoint exfil.attacker.example:443 is not allowed by any policy]"
		l4      = "NET:OPEN [MED] DENIED /usr/bin/curl(778) -> ok.example.com:443 [policy:- engine:opa] [reason:endpoint ok.example.com:443 is not allowed by any policy]"
		audit   = `{"class_uid":4002,"time":1777600017500,"action_id":1,"message":"L7_REQUEST audit POST api.example.com:443/x reason=POST /x not permitted by policy","http_request":{"http_method":"POST","url":{"hostname":"api.example.com","path":"/x","port":443}},"firewall_rule":{"name":"api","type":"l7"}}`
	)
	fwRecord := func(bin string) string {
		return `{"class_uid":4002,"time":1777600017000,"action_id":2,"message":"FORWARD denied GET d.example:80/f","status_detail":"endpoint d.example:80 is not allowed by any policy",` +
			`"http_request":{"http_method":"GET","url":{"hostname":"d.example","path":"/f","port":80}},"dst_endpoint":{"domain":"d.example","port":80},` +
			`"actor":{"process":{"name":` + strconv.Quote(bin) + `,"pid":41}},"firewall_rule":{"name":"-","type":"opa"}}`
	}
	l4Record := `{"class_uid":4001,"time":1777600017000,"action_id":2,"message":"CONNECT denied ok.example.com:443","status_detail":"endpoint ok.example.com:443 is not allowed by any policy","dst_endpoint":{"domain":"ok.example.com","port":443},"actor":{"process":{"name":"/usr/bin/curl","pid":778}},"firewall_rule":{"name":"-","type":"opa"}}`
	// The agent runs curl from "/tmp/x\n<forged line>\n/y/curl": the
	// shorthand prints the path raw, the JSONL escapes it.
	split := ts + "HTTP:GET [MED] DENIED /tmp/x\n" + ts + forged + "\n/y/curl(41) -> GET http://d.example/f [policy:- engine:opa] [reason:endpoint d.example:80 is not allowed by any policy]\n"
	injectedBin := "/tmp/x\n" + ts + forged + "\n/y/curl"
	shorthand := func(body string) Log {
		return Log{Name: "openshell.2026-05-01.log", Format: "shorthand", Data: []byte(body)}
	}
	jsonl := func(lines ...string) Log {
		return Log{Name: "openshell-ocsf.2026-05-01.log", Format: "ocsf-jsonl", Data: []byte(strings.Join(lines, "\n") + "\n")}
	}
	for _, tc := range []struct {
		name      string
		logs      []Log
		want      map[denial.Kind]int
		untrusted int
	}{
		{"split denial, with its record", []Log{jsonl(fwRecord(injectedBin), l4Record), shorthand(split + ts + l4 + "\n")},
			map[denial.Kind]int{denial.KindForward: 1, denial.KindL4NoEndpoint: 1}, 1},
		{"split denial, shorthand alone", []Log{shorthand(split + ts + l4 + "\n")},
			map[denial.Kind]int{denial.KindL4NoEndpoint: 2}, 1},
		{"one denial in both: counted once", []Log{jsonl(fwRecord("/usr/bin/curl")), shorthand(ts + shortFw + "\n")},
			map[denial.Kind]int{denial.KindForward: 1}, 0},
		{"the record's audit verdicts count with it", []Log{jsonl(audit, l4Record), shorthand(ts + l4 + "\n")},
			map[denial.Kind]int{denial.KindAudit: 1, denial.KindL4NoEndpoint: 1}, 0},
		{"a JSONL file without a network event is no record", []Log{jsonl(`{"class_uid":1007,"action_id":1}`), shorthand(ts + l4 + "\n")},
			map[denial.Kind]int{denial.KindL4NoEndpoint: 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Record{Dir: t.TempDir()}
			got := r.Keep(tc.logs, func(s string) string { return s }, t.Logf)
			if !reflect.DeepEqual(got, tc.want) || r.UntrustedDenials != tc.untrusted {
				t.Errorf("denials %v, %d untrusted; want %v, %d", got, r.UntrustedDenials, tc.want, tc.untrusted)
			}
		})
	}
}
