package suggest

import (
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// Every kind of the denial table has a plan, and only those: a kind added
// to package denial fails here until suggest says what it does with it.
func TestKindPlans(t *testing.T) {
	rows := denial.Kinds()
	for _, r := range rows {
		p, ok := kindPlans[r.Kind]
		if !ok || p.Outcome == "" || p.Why == "" {
			t.Errorf("%s: no complete plan (%+v)", r.Kind, p)
		}
	}
	if len(kindPlans) != len(rows) {
		t.Errorf("%d plans for %d kinds", len(kindPlans), len(rows))
	}
	if p := planOf("not-a-kind"); p.Outcome != outcomeManual {
		t.Errorf("an unknown kind is %s", p.Outcome)
	}
}

// docs/policy-suggest.md's "suggest does" column states each kind's
// outcome: every outcome word of the plan is in the row, in bold when it
// is a grant or a refusal.
func TestDocsOutcomes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "policy-suggest.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[denial.Kind][]string{}
	var last denial.Kind
	for _, line := range strings.Split(string(data), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 7 {
			continue
		}
		if k := strings.Trim(strings.TrimSpace(cells[1]), "`"); k != "" {
			last = denial.Kind(k)
		}
		rows[last] = append(rows[last], strings.ToLower(cells[4]))
	}
	for k, p := range kindPlans {
		does := strings.Join(rows[k], " / ")
		if does == "" {
			t.Errorf("docs/policy-suggest.md has no row for %s", k)
			continue
		}
		for _, word := range []string{"suggest", "manual", "refused", "ignored"} {
			if strings.Contains(p.Outcome, word) != strings.Contains(does, word) {
				t.Errorf("docs/policy-suggest.md %s: %q, the plan says %q", k, does, p.Outcome)
				break
			}
		}
	}
}

func TestDeresolve(t *testing.T) {
	v := map[string]string{"OWNER": "acme", "REPO_NAME": "acme", "ISSUE_NUMBER": "7", "FORGE_HOST": "git.example.com", "HOST_IP": "172.17.0.1", "GCP_REGION": "us-east5"}
	for path, want := range map[string]string{
		"/repos/acme/acme/issues/7":           "/repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}",
		"/repos/acmex/w/issues/77":            "/repos/acmex/w/issues/77",
		"/v1/projects/p/locations/us-east5/x": "/v1/projects/p/locations/{{GCP_REGION}}/x",
	} {
		if got, _ := deresolvePath(path, v); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	for host, want := range map[string]string{
		"git.example.com": "{{FORGE_HOST}}", "172.17.0.1": "{{HOST_IP}}",
		"us-east5-aiplatform.googleapis.com": "{{GCP_REGION}}-aiplatform.googleapis.com", "api.github.com": "api.github.com",
	} {
		if got := deresolveHost(host, v); got != want {
			t.Errorf("%s: %s, want %s", host, got, want)
		}
	}
	// One-character values other than ISSUE_NUMBER are left alone.
	if got, _ := deresolvePath("/a/b", map[string]string{"OWNER": "a"}); got != "/a/b" {
		t.Errorf("short value substituted: %s", got)
	}
}

func TestLooksLikeID(t *testing.T) {
	for seg, want := range map[string]bool{"42": true, "7": false, "abc": false, "0123456789abcdef": true,
		"550e8400-e29b-41d4-a716-446655440000": true, "comments": false, "": false} {
		if got := looksLikeID(seg); got != want {
			t.Errorf("%q: %v", seg, got)
		}
	}
}

func TestSafe(t *testing.T) {
	for in, want := range map[string]string{"plain": "plain", "a\x1b[31mb": `a\x1b[31mb`, "é": `\u00e9`, "\xff": `\xff`, `a\b`: `a\\b`, "x\ny": `x\x0ay`} {
		if got := Safe(in); got != want {
			t.Errorf("Safe(%q) = %q, want %q", in, got, want)
		}
	}
}

// A later layer's value wins (logs, then result.json, then --set), nil
// layers are skipped, and the inputs are not changed.
func TestMergeValues(t *testing.T) {
	logs := placeholder.Values{"OWNER": "from-logs", "REPO_NAME": "r"}
	set := placeholder.Values{"OWNER": "from-set"}
	got := MergeValues(logs, nil, placeholder.Values{"ISSUE_NUMBER": "7"}, set)
	want := placeholder.Values{"OWNER": "from-set", "REPO_NAME": "r", "ISSUE_NUMBER": "7"}
	if !maps.Equal(got, want) {
		t.Errorf("MergeValues = %v, want %v", got, want)
	}
	if logs["OWNER"] != "from-logs" {
		t.Errorf("MergeValues changed its input: %v", logs)
	}
	if m := MergeValues(); m == nil || len(m) != 0 {
		t.Errorf("MergeValues() = %#v, want an empty map", m)
	}
}

func TestEventCount(t *testing.T) {
	l := &Logs{Inputs: []denial.InputStats{{Events: 2, Denials: 5}, {Events: 0}, {Events: 3}}}
	if n := l.EventCount(); n != 5 {
		t.Errorf("EventCount = %d, want 5", n)
	}
	if n := (&Logs{}).EventCount(); n != 0 {
		t.Errorf("EventCount of no inputs = %d", n)
	}
}

// refusal checks the log line's host, path, binary and method before the
// destination, in that order, and lets a plain request through.
func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Denial
		want string // a substring of the reason; "" for none
	}{
		{"plain", Denial{Kind: denial.KindL7Deny, Host: "api.example.com", Port: 443, Method: "GET", Path: "/v1/x"}, ""},
		{"bad host first", Denial{Host: "a b", Path: "/*", Binary: "rel"}, "host is not a DNS name"},
		{"glob path", Denial{Host: "api.example.com", Path: "/v1/*"}, "path holds characters"},
		{"relative binary", Denial{Binary: "bin/sh"}, "binary is not a plain absolute"},
		{"odd method", Denial{Kind: denial.KindL7Deny, Host: "api.example.com", Method: "GET /x"}, "method is not a REST method"},
		{"odd method on l7-other", Denial{Kind: denial.KindL7Other, Host: "api.example.com", Port: 443, Method: "GET /x"}, ""},
		{"metadata address", Denial{Host: "169.254.169.254", Port: 80}, "169.254"},
		// Issue 29 §3 (redteam T4-7): the forms getaddrinfo reads as an
		// address are judged by the address.
		{"decimal metadata", Denial{Host: "2852039166", Port: 80}, "2852039166 is 169.254.169.254 as OpenShell's resolver reads it"},
		{"octal metadata", Denial{Host: "0251.0376.0251.0376", Port: 80}, "is 169.254.169.254"},
		{"hex metadata", Denial{Host: "0xa9fea9fe", Port: 80}, "is 169.254.169.254"},
		{"hex bytes", Denial{Host: "0xa9.0xfe.0xa9.0xfe", Port: 80}, "is 169.254.169.254"},
		{"short metadata", Denial{Host: "169.254.43518", Port: 80}, "is 169.254.169.254"},
		{"short loopback", Denial{Host: "127.1", Port: 80}, "is 127.0.0.1"},
		{"octal loopback", Denial{Host: "0177.0.0.1", Port: 80}, "is 127.0.0.1"},
		{"mapped metadata", Denial{Host: "::ffff:169.254.169.254", Port: 80}, "always-blocked"},
		{"mapped metadata hex", Denial{Host: "::ffff:a9fe:a9fe", Port: 80}, "always-blocked"},
		{"mapped loopback", Denial{Host: "::ffff:127.0.0.1", Port: 80}, "always-blocked"},
		{"decimal private", Denial{Host: "167772161", Port: 80}, "10.0.0.1 in a decimal, octal, hex or short form"},
		{"leading zero", Denial{Host: "010.0.0.1", Port: 80}, "8.0.0.1"},
		{"digits name", Denial{Host: "4294967296", Port: 80}, ""},
		{"hex-looking name", Denial{Host: "cafe.example", Port: 443}, ""},
		{"five parts", Denial{Host: "1.2.3.4.5", Port: 80}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := refusal(&tc.d)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("refusal = %q, want one with %q", got, tc.want)
			}
		})
	}
}

// A new endpoint's destination is noted as the mechanistic mapper notes
// it: a private address is high risk, a database port medium, an
// ephemeral port only noted.
func TestAssessDestination(t *testing.T) {
	for _, tc := range []struct {
		value, risk string
		notes       []string
	}{
		{"api.example.com:443", "medium", nil},
		{"db.example.com:5432", "medium", []string{"port 5432 is a well-known database or service port"}},
		{"10.1.2.3:50000", "high", []string{"10.1.2.3 is an internal or private address", "port 50000 is in the ephemeral range"}},
		{"10.1.2.3:6379", "high", []string{"10.1.2.3 is an internal or private address", "port 6379 is a well-known database or service port"}},
	} {
		s := &Suggestion{Change: "add-endpoint", Value: tc.value, methods: map[string]bool{"GET": true}}
		s.assess()
		if s.Risk != tc.risk || !slices.Equal(s.Notes, tc.notes) {
			t.Errorf("%s: risk %s, notes %q; want %s, %q", tc.value, s.Risk, s.Notes, tc.risk, tc.notes)
		}
	}
}

// A log directory needs a log file; its result.json is optional and must
// parse when present.
func TestReadLogsDirectory(t *testing.T) {
	line := "2026-04-01T04:00:00.000Z OCSF NET:OPEN [MED] DENIED /usr/bin/curl(1) -> api.example.com:443 [policy:- engine:opa] [reason:endpoint api.example.com:443 is not allowed by any policy]\n"
	for _, tc := range []struct {
		name    string
		files   map[string]string
		wantErr string // a substring of the error; "" for none
	}{
		{"no log files", map[string]string{"notes.txt": "x"}, "no log files"},
		{"no result.json", map[string]string{"sandbox.log": line}, ""},
		{"bad result.json", map[string]string{"sandbox.log": line, "result.json": "{"}, "want a fullsend run result.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l, err := ReadLogs([]string{dir})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(l.Events) != 1 || l.Values != nil || l.ResultFile != "" {
				t.Fatalf("ReadLogs = %+v, %v", l, err)
			}
		})
	}
}

// edit inserts each kind of change where the frontmatter has (or lacks)
// the list it goes in, and refuses what it cannot edit in place.
func TestEdit(t *testing.T) {
	const ep = "sandbox:\n  endpoints:\n    - host: api.example.com\n      rules:\n        - GET /a\n"
	for _, tc := range []struct {
		name, fm string
		s        Suggestion
		want     string // the frontmatter after the edit, or the error
	}{
		{"rule", ep, Suggestion{Change: "add-rule", YAMLPath: "sandbox.endpoints[0].rules", Value: "POST /b"},
			ep + "        - POST /b\n"},
		{"no rules list", "sandbox:\n  endpoints:\n    - host: api.example.com\n", Suggestion{Change: "add-rule", YAMLPath: "sandbox.endpoints[0].rules", Value: "POST /b"},
			"agent.md:4: the endpoint has no rules list"},
		{"flow list", "sandbox:\n  endpoints:\n    - host: api.example.com\n      rules: [GET /a]\n", Suggestion{Change: "add-rule", YAMLPath: "sandbox.endpoints[0].rules", Value: "POST /b"},
			"agent.md:5: a flow-style list ([...]); rewrite it as a block list (one \"- \" item a line) and run suggest again"},
		{"binary to a list", ep + "      binaries:\n        - /usr/bin/curl\n", Suggestion{Change: "add-binary", YAMLPath: "sandbox.endpoints[0].binaries", Value: "/usr/bin/gh", Rules: []string{"/usr/bin/curl"}},
			ep + "      binaries:\n        - /usr/bin/curl\n        - /usr/bin/gh\n"},
		{"binary, new list", ep, Suggestion{Change: "add-binary", YAMLPath: "sandbox.endpoints[0].binaries", Value: "/usr/bin/gh", Rules: []string{"/usr/bin/curl"}},
			ep + "      binaries:\n        - /usr/bin/curl\n        - /usr/bin/gh\n"},
		{"endpoint, no sandbox", "name: a\n", Suggestion{Change: "add-endpoint", Value: "x.example.com:443", Rules: []string{"GET /x"}, binaries: []string{"/usr/bin/gh"}},
			"name: a\nsandbox:\n  endpoints:\n    - host: x.example.com\n      port: 443\n      protocol: rest\n      rules:\n        - GET /x\n      binaries:\n        - /usr/bin/gh\n"},
		{"endpoint, no list", "sandbox:\n  tier: network\n", Suggestion{Change: "add-endpoint", Value: "x.example.com:8443", Provisional: true},
			"sandbox:\n  tier: network\n  endpoints:\n    - host: x.example.com  # provisional: paths unknown (denied at L4); narrow to rules\n      port: 8443\n      protocol: rest\n      access: read-only\n"},
		{"endpoint, to the list", ep, Suggestion{Change: "add-endpoint", Value: "x.example.com:443", Rules: []string{"GET /x"}},
			ep + "    - host: x.example.com\n      port: 443\n      protocol: rest\n      rules:\n        - GET /x\n"},
		{"sandbox not a mapping", "sandbox: [a]\n", Suggestion{Change: "add-endpoint", Value: "x.example.com:443"},
			"agent.md:2: sandbox: is not a mapping"},
		{"unknown change", ep, Suggestion{Change: "remove-rule"}, `unknown change "remove-rule"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"agent.md": {Data: []byte("---\n" + tc.fm + "---\nbody\n")}}
			src, err := loadSource(fsys, "agent.md")
			if err != nil {
				t.Fatal(err)
			}
			s := tc.s
			if err := (&planner{}).edit(src, &s); err != nil {
				if err.Error() != tc.want {
					t.Errorf("err = %v, want %s", err, tc.want)
				}
				return
			}
			got := string(src.render())
			if want := "---\n" + tc.want + "---\nbody\n"; got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// atonIPv4 reads sandbox bytes: it never panics, and a dotted quad in
// Go's strict form reads as itself.
func FuzzAtonIPv4(f *testing.F) {
	for _, s := range []string{"2852039166", "0251.0376.0251.0376", "0xa9fea9fe", "169.254.43518", "127.1", "0x", "1.2.3.4", "09", "0x1ffffffff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := atonIPv4(s)
		if p, err := netip.ParseAddr(s); err == nil && p.Is4() && (!ok || a != p) {
			t.Errorf("%q: aton %v %v, strict %v", s, a, ok, p)
		}
	})
}
