package runner

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// evidenceExecs counts the runner's evidence reads (collectEvidence).
func (h *harness) evidenceExecs() int {
	n := 0
	for _, c := range h.calls() {
		if strings.HasPrefix(c.String(), "openshell sandbox exec") && strings.Contains(c.String(), logTarScript) {
			n++
		}
	}
	return n
}

func eventsFixture(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "evidence", "events.jsonl")
}

// TestRunKeepsEvidence is day2-loop.md A.5 #14: a run that succeeds after
// being denied keeps OpenShell's logs (redacted, masked), counts the
// denials into result.json and the job summary, warns, and prints the
// suggest command.
func TestRunKeepsEvidence(t *testing.T) {
	const secret = "tok-SECRET-abc123"
	// The tunnel and FORWARD L7 denials are one kind, l7-deny (the table's,
	// as `policy suggest` names them).
	denied := map[denial.Kind]int{denial.KindL7Deny: 3, denial.KindL4NoEndpoint: 1}
	withAudit := map[denial.Kind]int{denial.KindL7Deny: 3, denial.KindL4NoEndpoint: 1, denial.KindAudit: 1}
	for _, tc := range []struct {
		name        string
		version     string
		ownGateway  bool   // the runner starts the gateway: JSONL on
		fail        string // OPENSHELL_FAKE_FAIL
		source      string
		files       []string // name patterns in the evidence dir
		wantDenials map[denial.Kind]int
	}{
		{name: "own gateway: shorthand and JSONL files", ownGateway: true, source: EvidenceSandboxFiles,
			files:       []string{"openshell.*.log", "openshell-ocsf.*.log", "result.json"},
			wantDenials: withAudit},
		{name: "own gateway at v0.0.83", version: "0.0.83", ownGateway: true, source: EvidenceSandboxFiles,
			files:       []string{"openshell.*.log", "openshell-ocsf.*.log", "result.json"},
			wantDenials: withAudit},
		{name: "existing gateway at v0.0.83: shorthand file, JSONL left off", version: "0.0.83", source: EvidenceSandboxFiles,
			files: []string{"openshell.*.log", "openshell-ocsf.*.log", "result.json"}, wantDenials: denied},
		{name: "no log files: the gateway's tail", fail: "no-log-files", source: EvidenceOpenShellLogs,
			files: []string{"sandbox.log", "gateway-events.log", "result.json"}, wantDenials: denied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			summary := filepath.Join(t.TempDir(), "summary.md")
			h.env["GITHUB_STEP_SUMMARY"] = summary
			h.env["OPENSHELL_FAKE_EVENTS"] = eventsFixture(t)
			if tc.version != "" {
				h.env["OPENSHELL_FAKE_VERSION"] = tc.version
				h.project = testProject(t, "v"+tc.version)
			}
			if tc.ownGateway {
				delete(h.env, "OPENSHELL_FAKE_GATEWAY")
			}
			if tc.fail != "" {
				h.env["OPENSHELL_FAKE_FAIL"] = tc.fail
			}
			res, err := h.run(context.Background(), Request{Env: map[string]string{"FULLSEND_AGENT_TOKEN": secret}})
			if err != nil {
				t.Fatalf("%v\n%s", err, h.log.String())
			}
			ev := res.Evidence
			if ev == nil || ev.Source != tc.source || ev.OCSFJSON != tc.ownGateway {
				t.Fatalf("evidence %+v, want source %s, JSONL %v\n%s", ev, tc.source, tc.ownGateway, h.log.String())
			}
			if !reflect.DeepEqual(res.Denials, tc.wantDenials) {
				t.Errorf("denials %v, want %v", res.Denials, tc.wantDenials)
			}
			if st, err := os.Stat(ev.Dir); err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("evidence dir %v mode %v", err, st)
			}
			for _, pat := range tc.files {
				m, _ := filepath.Glob(filepath.Join(ev.Dir, pat))
				if len(m) != 1 {
					t.Errorf("evidence has %d files %s: %v", len(m), pat, m)
				}
			}
			all := ""
			entries, _ := os.ReadDir(ev.Dir)
			for _, e := range entries {
				p := filepath.Join(ev.Dir, e.Name())
				st, _ := os.Lstat(p)
				if !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
					t.Errorf("%s: mode %v, want a 0600 regular file", e.Name(), st.Mode())
				}
				data, _ := os.ReadFile(p)
				all += string(data)
				if strings.HasPrefix(e.Name(), "openshell-ocsf.") {
					lines := strings.Split(strings.TrimSpace(string(data)), "\n")
					if tc.ownGateway && len(lines) != 6 {
						t.Errorf("JSONL has %d events, want 6", len(lines))
					}
					if !tc.ownGateway && len(data) != 0 {
						t.Errorf("JSONL written without ocsf_json_enabled: %q", data)
					}
					for _, l := range lines {
						if l != "" && !json.Valid([]byte(l)) {
							t.Errorf("JSONL line no longer JSON after redaction: %s", l)
						}
					}
				}
			}
			for _, leak := range []string{"secret-456", secret} {
				if strings.Contains(all, leak) {
					t.Errorf("evidence leaks %q", leak)
				}
			}
			if !strings.Contains(all, "/v1/items?[redacted]") || !strings.Contains(all, "/t/***") {
				t.Errorf("evidence lacks the redacted query or the masked secret:\n%s", all)
			}
			var onDisk Result
			if b, err := os.ReadFile(filepath.Join(ev.Dir, "result.json")); err != nil || json.Unmarshal(b, &onDisk) != nil ||
				!reflect.DeepEqual(onDisk.Denials, tc.wantDenials) || onDisk.Placeholders["OWNER"] != "fullsend-ai" {
				t.Errorf("result.json: %v %+v", err, onDisk)
			}
			suggest := "fullsend policy suggest triage --logs " + filepath.Base(ev.Dir) // the artifact's root in CI
			if ev.Suggest != suggest {
				t.Errorf("suggest %q, want %q", ev.Suggest, suggest)
			}
			log := h.log.String()
			if !strings.Contains(log, "::warning title=fullsend run triage%3A requests denied::4 requests were denied") ||
				!strings.Contains(log, "download the run's evidence artifact and run `"+suggest+"`") {
				t.Errorf("no warning with the suggest command:\n%s", log)
			}
			sum, _ := os.ReadFile(summary)
			if !strings.Contains(string(sum), "| denied requests | 4: ") || !strings.Contains(string(sum), "`"+suggest+"`") {
				t.Errorf("summary lacks the denials or the command:\n%s", sum)
			}
			if n := h.count("openshell settings set --global --key ocsf_json_enabled --value true --yes"); (n == 1) != tc.ownGateway {
				t.Errorf("%d global ocsf_json_enabled settings, own gateway %v", n, tc.ownGateway)
			}
			if n := h.count("openshell logs"); (n == 2) != (tc.source == EvidenceOpenShellLogs) || n != 0 && n != 2 {
				t.Errorf("%d openshell logs calls for source %s", n, tc.source)
			}
			if tc.source == EvidenceOpenShellLogs {
				if !strings.Contains(log, "falling back to openshell logs --source sandbox|gateway -n 2000") {
					t.Errorf("the run log does not say which source was used:\n%s", log)
				}
				for _, src := range []string{"sandbox", "gateway"} {
					if h.count("openshell logs "+res.Sandbox+" --source "+src+" -n 2000") != 1 {
						t.Errorf("no `openshell logs %s --source %s -n 2000`", res.Sandbox, src)
					}
				}
			}
			for _, c := range h.calls() {
				if strings.Contains(c.String(), "download") && strings.Contains(c.String(), "/var/log") {
					t.Errorf("%s: sandbox download refuses /var/log at both tags", c)
				}
			}
			if !res.Deleted || len(h.sandboxesLeft()) != 0 {
				t.Errorf("sandbox not deleted")
			}
		})
	}
}

// TestRunWithoutDenials: a clean run keeps its logs, counts nothing and
// raises no warning; without an evidence or diagnostic directory nothing is
// collected.
func TestRunWithoutDenials(t *testing.T) {
	h := newHarness(t, CIGitHub)
	res, err := h.run(context.Background(), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Evidence == nil || res.Evidence.Source != EvidenceSandboxFiles || len(res.Denials) != 0 || res.Evidence.Suggest != "" {
		t.Errorf("evidence %+v denials %v", res.Evidence, res.Denials)
	}
	if strings.Contains(h.log.String(), "::warning") {
		t.Errorf("warning on a clean run:\n%s", h.log.String())
	}
	h = newHarness(t, CIGitHub)
	h.opts.DiagDir = ""
	res, err = h.run(context.Background(), Request{})
	if err != nil || res.Evidence != nil {
		t.Errorf("evidence kept without a directory: %v %+v", err, res.Evidence)
	}
	for _, c := range h.calls() {
		if strings.Contains(c.String(), "openshell*.log") || strings.HasPrefix(c.String(), "openshell logs") {
			t.Errorf("%s: logs read without a directory to keep them", c)
		}
	}
}

// TestRunFailedKeepsEvidence: a failed run keeps the same evidence in its
// diagnostic bundle directory.
func TestRunFailedKeepsEvidence(t *testing.T) {
	h := newHarness(t, CIGitHub)
	h.env["OPENSHELL_FAKE_EVENTS"] = eventsFixture(t)
	h.env["OPENSHELL_FAKE_FAIL"] = "exec-exit=3"
	res, err := h.run(context.Background(), Request{})
	if ExitCode(err) != 3 {
		t.Fatalf("exit %d: %v", ExitCode(err), err)
	}
	if res.Evidence == nil || res.Evidence.Dir != res.DiagDir || res.Denials[denial.KindL7Deny] != 3 {
		t.Errorf("evidence %+v in %s, denials %v", res.Evidence, res.DiagDir, res.Denials)
	}
	if strings.Contains(h.log.String(), "requests denied") {
		t.Errorf("a failed run gets the error, not the denial warning")
	}
}

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
				got = append(got, f.name+"="+string(f.data))
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
	jm := &masker{}
	jm.Add("SECRETVALUE")
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
	m := &masker{}
	m.Add("abc?def")
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
		{"HTTP:POST [MED] DENIED POST http://api.example.com:443/v1/chat [policy:model_api engine:middleware] [transformed:false failed:false reason:prompt rejected]", denial.KindUnknown},
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
// stream count the same; non-OCSF lines count nothing; the JSONL counts
// only audit verdicts (its denials are the shorthand's, counted there).
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
	data, err := os.ReadFile(eventsFixture(t))
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
	if !reflect.DeepEqual(got, map[denial.Kind]int{denial.KindAudit: 1}) {
		t.Errorf("JSONL: %v, want one audit verdict", got)
	}
	got = map[denial.Kind]int{}
	countDenials(got, "openshell-ocsf.2026-04-01.log", jsonl, false)
	if !reflect.DeepEqual(got, map[denial.Kind]int{denial.KindL7Deny: 3, denial.KindL4NoEndpoint: 1}) {
		t.Errorf("JSONL denials: %v, want the shorthand's", got)
	}
}

// FuzzCountDenials: any log counts only kinds of the table, at most one
// per line, and never an audit verdict as a denial.
func FuzzCountDenials(f *testing.F) {
	f.Add([]byte("2026-04-01T04:04:32.190Z OCSF HTTP:POST [MED] DENIED POST http://h:8081/p [policy:p engine:l7] [reason:L7_REQUEST deny]\n"), false)
	f.Add([]byte(`{"class_uid":4002,"action_id":1,"message":"L7_REQUEST audit GET h:1/x reason=y","firewall_rule":{"name":"p","type":"l7"}}`), true)
	f.Fuzz(func(t *testing.T, data []byte, audits bool) {
		got := map[denial.Kind]int{}
		countDenials(got, "f", data, audits)
		n := 0
		for k, v := range got {
			if _, ok := denial.Lookup(k); !ok || k.Denied() == audits {
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
		m := &masker{}
		m.Add("SECRETVALUE")
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
			total += len(f.data)
			if !logFileName.MatchString(f.name) || len(f.data) > 64 {
				t.Errorf("kept %q (%d bytes)", f.name, len(f.data))
			}
		}
		if total > 100 || len(files) > 3 {
			t.Errorf("%d files, %d bytes", len(files), total)
		}
	})
}

// BenchmarkRunEvidence measures the evidence collection's share of a run
// against the openshell fake: evidence-ms is the "keep OpenShell logs"
// step, run-ms the whole run, and evidence/run their ratio.
func BenchmarkRunEvidence(b *testing.B) {
	h := newHarness(b, CIGitHub)
	h.env["OPENSHELL_FAKE_READY_POLLS"] = "1"
	h.env["OPENSHELL_FAKE_EVENTS"] = eventsFixture(b)
	var ev, total float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.log.Reset()
		h.opts.DiagDir = b.TempDir()
		res, err := h.run(context.Background(), Request{})
		if err != nil {
			b.Fatalf("%v\n%s", err, h.log.String())
		}
		for _, s := range res.Steps {
			if s.Name == "keep OpenShell logs" {
				ev += s.MS
			}
		}
		total += float64(res.Duration.Microseconds()) / 1000
	}
	b.ReportMetric(ev/float64(b.N), "evidence-ms/op")
	b.ReportMetric(total/float64(b.N), "run-ms/op")
	b.ReportMetric(ev/total, "evidence/run")
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
	m := &masker{}
	m.Add("tok-SECRET-abc123")
	b.SetBytes(int64(len(archive)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		files, _, err := readLogTar(bytes.NewReader(archive), evidenceFileMax, evidenceTotalMax, evidenceMaxFiles)
		if err != nil || len(files) != 1 {
			b.Fatal(err)
		}
		d := map[denial.Kind]int{}
		countDenials(d, files[0].name, redactLog(m, files[0].data, false), false)
		if d[denial.KindL7Deny] != 10000 {
			b.Fatal(d)
		}
	}
}

// TestRunDeniedWarnsOnGitLab: GitLab has no job summary; the warning is a
// yellow line with the same command.
func TestRunDeniedWarnsOnGitLab(t *testing.T) {
	h := newHarness(t, CIGitLab)
	h.env["OPENSHELL_FAKE_EVENTS"] = eventsFixture(t)
	res, err := h.run(context.Background(), Request{})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	want := "\x1b[1;33mWARNING: fullsend run triage: requests denied\x1b[0m: 4 requests were denied (l4-no-endpoint 1, l7-deny 3); download the run's evidence artifact and run `fullsend policy suggest triage --logs " + filepath.Base(res.Evidence.Dir) + "`"
	if !strings.Contains(h.log.String(), want) {
		t.Errorf("no yellow warning line:\n%s", h.log.String())
	}
}

// TestRunDeniedLocal: outside CI the command names the evidence directory
// itself; a run whose only verdicts are audit ones gets --include-audit and
// no warning.
func TestRunDeniedLocal(t *testing.T) {
	vals := placeholder.Values{"FORGE_HOST": "github.com", "ISSUE_NUMBER": "7", "OWNER": "acme", "REPO_NAME": "widgets"}
	h := newHarness(t, CILocal)
	h.env["OPENSHELL_FAKE_EVENTS"] = eventsFixture(t)
	res, err := h.run(context.Background(), Request{Values: vals})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if want := "warning: fullsend run triage: requests denied: 4 requests were denied (l4-no-endpoint 1, l7-deny 3); run `fullsend policy suggest triage --logs " + res.Evidence.Dir + "`"; !strings.Contains(h.log.String(), want) {
		t.Errorf("want %q in:\n%s", want, h.log.String())
	}

	h = newHarness(t, CILocal)
	delete(h.env, "OPENSHELL_FAKE_GATEWAY") // the runner's own gateway: JSONL on
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	data, _ := os.ReadFile(eventsFixture(t))
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "L7_REQUEST audit") {
			os.WriteFile(audit, []byte(line+"\n"), 0o600)
		}
	}
	h.env["OPENSHELL_FAKE_EVENTS"] = audit
	res, err = h.run(context.Background(), Request{Values: vals})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if !reflect.DeepEqual(res.Denials, map[denial.Kind]int{denial.KindAudit: 1}) || !strings.HasSuffix(res.Evidence.Suggest, " --include-audit") ||
		strings.Contains(h.log.String(), "warning: fullsend run") {
		t.Errorf("denials %v, suggest %q\n%s", res.Denials, res.Evidence.Suggest, h.log.String())
	}
}
