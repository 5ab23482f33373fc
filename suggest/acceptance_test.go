package suggest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/compile/lintcheck"
	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/lint"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/policycue"
	"github.com/fullsend-ai/agent-sandbox/suggest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const (
	triage = "../testdata/triage"
	agent  = "duplicate-detector"
	logs   = "testdata/logs/"
)

// job are the values of the run the fixtures come from.
var job = placeholder.Values{"OWNER": "acme", "REPO_NAME": "widgets", "ISSUE_NUMBER": "7"}

var catalog = sync.OnceValues(func() (*policycue.Catalog, error) { return policycue.LoadCatalog(nil, "") })

// compiler compiles a project file system as `policy suggest` does
// (cmd/fullsend suggestCompiler): the built-in catalog, the validator.
func compiler(t testing.TB) suggest.Compiler {
	cat, err := catalog()
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, fsys fs.FS) (*suggest.Target, error) {
		proj, err := agentdef.Load(fsys)
		if err != nil {
			return nil, err
		}
		out, err := compile.Compile(ctx, proj, fsys, compile.Options{Catalog: cat, Checks: []compile.Check{compile.ValidateCheck}})
		if err != nil {
			return nil, err
		}
		return targetOf(out), nil
	}
}

// targetOf is the agent as out compiled it, with the agents that spawn it,
// as the CLI's compiler gives it (cmd/fullsend suggestTargetOf).
func targetOf(out *compile.Output) *suggest.Target {
	c := out.Agents[agent]
	t := &suggest.Target{Name: agent, File: c.Agent.File, Tier: string(c.Tier), Policy: c.Policy, Effective: c.Effective()}
	for _, name := range out.AgentNames() {
		pc := out.Agents[name]
		if name == agent || !slices.Contains(pc.Spawns, agent) {
			continue
		}
		pa := suggest.Parent{Name: name, File: pc.Agent.File, Policy: pc.Effective()}
		for _, w := range pc.Agent.Sandbox.SpawnWidening {
			if w.Agent.Name == agent {
				for _, h := range w.Hosts {
					pa.Hosts = append(pa.Hosts, h.Name)
				}
			}
		}
		t.Parents = append(t.Parents, pa)
	}
	return t
}

// target compiles the project in dir as `policy compile --agent` does.
func target(t testing.TB, dir string) *suggest.Target {
	t.Helper()
	out, err := compile.CompileDir(context.Background(), dir, compile.ProjectOptions{Agents: []string{agent}, Lint: lintcheck.Start(lint.Options{})})
	if err != nil {
		t.Fatalf("compiling %s: %v", dir, err)
	}
	c := out.Agents[agent]
	return &suggest.Target{Name: agent, File: c.Agent.File, Tier: string(c.Tier), Policy: c.Policy}
}

type runOpts struct {
	generalize   bool
	only         []string
	dir          string
	values       placeholder.Values
	includeAudit bool
	strictPaths  bool
	minCount     int
	to           string
}

// run reads the log files and runs suggest on the project.
func run(t testing.TB, o runOpts, files ...string) *suggest.Result {
	t.Helper()
	res, err := tryRun(t, o, files...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func tryRun(t testing.TB, o runOpts, files ...string) (*suggest.Result, error) {
	t.Helper()
	if o.dir == "" {
		o.dir = triage
	}
	l, err := suggest.ReadLogs(files)
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(o.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	vals := placeholder.Values{}
	for k, v := range l.Values {
		vals[k] = v
	}
	for k, v := range o.values {
		vals[k] = v
	}
	return suggest.Run(context.Background(), suggest.Options{
		Agent: target(t, o.dir), Project: root.FS(), Compile: compiler(t), Values: vals,
		IncludeAudit: o.includeAudit, StrictPaths: o.strictPaths, MinCount: o.minCount, To: o.to,
		Generalize: o.generalize, Only: o.only,
	}, l.Events, l.Inputs)
}

// copyProject copies testdata/triage into a temporary directory.
func copyProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(triage)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func render(t *testing.T, res *suggest.Result) (text, js, patch string) {
	t.Helper()
	var a, b, c bytes.Buffer
	if err := suggest.WriteText(&a, res); err != nil {
		t.Fatal(err)
	}
	if err := suggest.WriteJSON(&b, res); err != nil {
		t.Fatal(err)
	}
	if err := suggest.WritePatch(&c, res); err != nil {
		t.Fatal(err)
	}
	return a.String(), b.String(), c.String()
}

func noCI(string) string { return "" }

// decideOn answers a request against a compiled policy with the job's values.
func decideOn(t *testing.T, pol *openshell.Policy, req string) decide.Decision {
	t.Helper()
	p := pol.Clone()
	vals := placeholder.Examples()
	for k, v := range job {
		vals[k] = v
	}
	if _, err := openshell.ApplyPlaceholders(p, vals); err != nil {
		t.Fatal(err)
	}
	d, err := decide.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := decide.ParseRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	return d.Decide(r)
}

// A.5 #1: an L7 write with the job's values -> one rule with placeholders,
// on the agent file's endpoint; after --write and a recompile the grant
// allows exactly that request.
func TestL7WritePlaceholders(t *testing.T) {
	res := run(t, runOpts{values: job}, logs+"l7-write.log")
	if len(res.Suggestions) != 1 {
		t.Fatalf("want 1 suggestion, got %d: %+v", len(res.Suggestions), res.Suggestions)
	}
	s := res.Suggestions[0]
	want := "POST /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/comments"
	if s.Change != "add-rule" || s.Value != want || s.File != "agents/duplicate-detector.md" || s.YAMLPath != "sandbox.endpoints[0].rules" {
		t.Errorf("suggestion = %s %q in %s %s", s.Change, s.Value, s.File, s.YAMLPath)
	}
	if !slices.Contains(s.Categories, "capability_expansion") {
		t.Errorf("categories = %v, want capability_expansion", s.Categories)
	}
	// fullsend's tier model puts a write method above tier network: the
	// patch raises the declared tier, and says so (risk critical).
	if s.TierBefore != "network" || s.TierAfter != "full" || s.Risk != "critical" {
		t.Errorf("tier %s -> %s, risk %s; want network -> full, critical", s.TierBefore, s.TierAfter, s.Risk)
	}
	// The bundled expectation "subagents cannot comment" now fails: suggest
	// says so instead of hiding it.
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "duplicate-detector.policytest.yaml:29") }) {
		t.Errorf("no warning about the broken expectation: %v", res.Warnings)
	}

	dir := copyProject(t)
	if err := suggest.Write(dir, res, noCI); err != nil {
		t.Fatal(err)
	}
	// The human chooses the grant: drop the expectation it contradicts.
	pt := filepath.Join(dir, "agents/duplicate-detector.policytest.yaml")
	data, _ := os.ReadFile(pt)
	data = bytes.Replace(data, []byte(`  - name: subagents cannot comment
    request: POST http://host.docker.internal:8081/repos/acme/widgets/issues/5/comments from /usr/bin/curl at 172.17.0.1
    expect: deny
`), nil, 1)
	if err := os.WriteFile(pt, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := compile.CompileDir(context.Background(), dir, compile.ProjectOptions{Lint: lintcheck.Start(lint.Options{})})
	if err != nil {
		t.Fatalf("the patched project does not compile: %v", err)
	}
	if err := compile.Write(filepath.Join(dir, "policies"), out); err != nil {
		t.Fatal(err)
	}
	if diffs, err := compile.Diff(filepath.Join(dir, "policies"), out); err != nil || len(diffs) > 0 {
		t.Fatalf("policy compile --check after a recompile: %v %v", diffs, err)
	}
	pol := out.Agents[agent].Policy
	for req, allowed := range map[string]bool{
		"POST http://host.docker.internal:8081/repos/acme/widgets/issues/7/comments from /usr/bin/curl":    true,
		"POST http://host.docker.internal:8081/repos/acme/widgets/issues/8/comments from /usr/bin/curl":    false,
		"DELETE http://host.docker.internal:8081/repos/acme/widgets/issues/7 from /usr/bin/curl":           false,
		"POST http://host.docker.internal:8081/repos/acme/widgets/issues/7/comments from /usr/bin/python3": false,
	} {
		if d := decideOn(t, pol, req); d.Allowed != allowed {
			t.Errorf("%s: allowed=%v, want %v (%s)", req, d.Allowed, allowed, d.Reason)
		}
	}
}

// isShorthandWarning reports the warning that denials rest on shorthand
// lines alone.
func isShorthandWarning(w string) bool {
	return strings.HasPrefix(w, "some denials rest on shorthand lines alone")
}

// analysis is the part of the JSON output that does not name the inputs.
func analysis(t *testing.T, res *suggest.Result) string {
	t.Helper()
	cp := *res
	cp.Inputs = nil
	cp.Denials = nil
	for _, d := range res.Denials {
		x := *d
		x.Lines = nil // where each was read
		cp.Denials = append(cp.Denials, &x)
	}
	b, err := json.MarshalIndent(cp, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A.5 #2: the same event in the three formats gives the same analysis;
// all three at once count it once.
func TestSameEventThreeFormats(t *testing.T) {
	var first string
	for _, f := range []string{"l7-write.log", "l7-write.cli.log", "l7-write.jsonl"} {
		res := run(t, runOpts{values: job}, logs+f)
		// Only the text formats rest on lines the agent could have
		// written whole: they, and only they, carry the warning.
		warned := slices.ContainsFunc(res.Warnings, isShorthandWarning)
		if want := !strings.HasSuffix(f, ".jsonl"); warned != want {
			t.Errorf("%s: shorthand-alone warning %v, want %v (%q)", f, warned, want, res.Warnings)
		}
		res.Warnings = slices.DeleteFunc(res.Warnings, isShorthandWarning)
		got := analysis(t, res)
		if first == "" {
			first = got
			continue
		}
		if got != first {
			t.Errorf("%s gives another analysis than l7-write.log:\n%s\nvs\n%s", f, got, first)
		}
	}
	res := run(t, runOpts{values: job}, logs+"l7-write.log", logs+"l7-write.cli.log", logs+"l7-write.jsonl")
	if len(res.Denials) != 1 || res.Denials[0].Count != 1 {
		t.Fatalf("three formats of one event: %d denials, count %d; want 1, 1", len(res.Denials), res.Denials[0].Count)
	}
	if got := res.Inputs; len(got) != 3 || got[0].Format != denial.FormatShorthand || got[1].Format != denial.FormatCLI || got[2].Format != denial.FormatJSONL {
		t.Errorf("formats detected: %+v", got)
	}
}

// A.5 #3: an HTTPS host denied at L4 -> a provisional read-only endpoint;
// --strict-paths lists it as manual; the older reason parses the same.
func TestL4NoEndpoint(t *testing.T) {
	res := run(t, runOpts{values: job}, logs+"l4.log")
	if len(res.Suggestions) != 1 {
		t.Fatalf("want 1 suggestion, got %+v", res.Suggestions)
	}
	s := res.Suggestions[0]
	if s.Change != "add-endpoint" || s.Value != "api.github.com:443" || !s.Provisional || s.Risk != "medium" {
		t.Errorf("suggestion = %+v", s)
	}
	if !strings.Contains(res.Patch, "+      access: read-only") || !strings.Contains(res.Patch, "provisional") {
		t.Errorf("patch:\n%s", res.Patch)
	}
	old := run(t, runOpts{values: job}, logs+"l4-old.log")
	if analysis(t, old) != analysis(t, res) {
		t.Errorf("[reason:no matching policy] parses differently")
	}
	strict := run(t, runOpts{values: job, strictPaths: true}, logs+"l4.log")
	if len(strict.Suggestions) != 0 || len(strict.Manual) != 1 {
		t.Errorf("--strict-paths: %d suggestions, %d manual; want 0, 1", len(strict.Suggestions), len(strict.Manual))
	}
}

// A.5 #4: three sibling hosts stay three endpoints; no wildcard host.
func TestNoWildcardHosts(t *testing.T) {
	res := run(t, runOpts{values: job}, logs+"siblings.log")
	var hosts []string
	for _, s := range res.Suggestions {
		hosts = append(hosts, s.Value)
	}
	if want := []string{"a.example.com:443", "b.example.com:443", "c.example.com:443"}; !slices.Equal(hosts, want) {
		t.Errorf("endpoints = %v, want %v", hosts, want)
	}
	for _, l := range strings.Split(res.Patch, "\n") {
		if strings.HasPrefix(l, "+") && strings.Contains(l, "*") {
			t.Errorf("patch line with *: %s", l)
		}
	}
}

// A.5 #5: metadata, loopback and control-plane destinations are refused,
// never suggested.
func TestRefusals(t *testing.T) {
	res := run(t, runOpts{values: job}, logs+"refusals.log")
	if len(res.Suggestions) != 0 || len(res.Manual) != 0 || len(res.Refused) != 4 {
		t.Fatalf("%d suggestions, %d manual, %d refused; want 0, 0, 4", len(res.Suggestions), len(res.Manual), len(res.Refused))
	}
	if res.Patch != "" {
		t.Errorf("patch for refusals:\n%s", res.Patch)
	}
	if !strings.Contains(res.PolicyTest, "CONNECT 169.254.169.254:80 from /usr/bin/curl") || !strings.Contains(res.PolicyTest, "expect: deny") {
		t.Errorf("no deny expectation for the metadata address:\n%s", res.PolicyTest)
	}
}

// A.5 #6: an address outside allowed_ips is a manual finding naming it.
func TestAllowedIPsManual(t *testing.T) {
	res := run(t, runOpts{values: job}, logs+"allowed-ips.log")
	if len(res.Manual) != 1 || !strings.Contains(res.Manual[0].Why, "10.0.3.7") {
		t.Fatalf("manual = %+v", res.Manual)
	}
	for _, l := range strings.Split(res.Patch, "\n") {
		if strings.HasPrefix(l, "+") && strings.Contains(l, "allowed_ips") {
			t.Errorf("patch adds allowed_ips: %s", l)
		}
	}
}

// A.5 #7: the binary of a cut binary reason, despite its nested brackets.
func TestBinary(t *testing.T) {
	res := run(t, runOpts{values: job}, logs+"binary.log")
	if len(res.Denials) != 1 || res.Denials[0].Binary != "/usr/bin/python3.11" {
		t.Fatalf("denials = %+v", res.Denials)
	}
	if got := res.Denials[0].Ancestors; !slices.Equal(got, []string{"/usr/bin/bash", "/usr/local/bin/claude"}) {
		t.Errorf("ancestors = %v", got)
	}
	if len(res.Suggestions) != 1 {
		t.Fatalf("suggestions = %+v", res.Suggestions)
	}
	s := res.Suggestions[0]
	if s.Change != "add-binary" || s.Value != "/usr/bin/python3.11" || s.Risk != "high" {
		t.Errorf("suggestion = %+v", s)
	}
	if !strings.Contains(res.Patch, "+        - /usr/bin/curl\n+        - /usr/bin/python3.11") {
		t.Errorf("the patch must keep the binaries the tools implied:\n%s", res.Patch)
	}
}

// A.5 #8: query strings never reach any output.
func TestQuerySecrets(t *testing.T) {
	res := run(t, runOpts{values: job}, logs+"query.log")
	text, js, patch := render(t, res)
	for name, out := range map[string]string{"text": text, "json": js, "patch": patch, "policytest": res.PolicyTest} {
		if strings.Contains(out, "secret-456") {
			t.Errorf("%s output holds the query secret", name)
		}
	}
	if len(res.Suggestions) != 2 {
		t.Errorf("want 2 suggestions (the forward endpoint and the L7 rule), got %d", len(res.Suggestions))
	}
}

// A.5 #9: audit verdicts count only with --include-audit; shorthand input
// for an agent with an audit endpoint gets a warning.
func TestAudit(t *testing.T) {
	res := run(t, runOpts{values: job}, logs+"audit.jsonl")
	if len(res.Denials) != 0 || len(res.Suggestions) != 0 {
		t.Errorf("without --include-audit: %d denials, %d suggestions", len(res.Denials), len(res.Suggestions))
	}
	res = run(t, runOpts{values: job, includeAudit: true}, logs+"audit.jsonl")
	if len(res.Suggestions) != 1 || res.Suggestions[0].Value != "GET /repos/{{OWNER}}/{{REPO_NAME}}/pulls" || res.Denials[0].Kind != denial.KindAudit {
		t.Fatalf("with --include-audit: %+v", res.Suggestions)
	}

	pol := &openshell.Policy{Version: 1, NetworkPolicies: map[string]openshell.NetworkPolicy{"gh": {Name: "gh",
		Endpoints: []openshell.Endpoint{{Host: "api.github.com", Port: 443, Protocol: "rest", Enforcement: "audit", Access: "read-only"}},
		Binaries:  []openshell.Binary{{Path: "/usr/bin/gh"}}}}}
	l, err := suggest.ReadLogs([]string{logs + "l4.log"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := suggest.Run(context.Background(), suggest.Options{Agent: &suggest.Target{Name: "a", File: "agents/a.md", Tier: "network", Policy: pol},
		Project: os.DirFS(triage), StrictPaths: true}, l.Events, l.Inputs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(out.Warnings, func(w string) bool { return strings.Contains(w, "JSONL") }) {
		t.Errorf("no warning that audit verdicts need JSONL: %v", out.Warnings)
	}
}

// A.5 #10: suggest, apply, suggest again on the same logs -> nothing new,
// every denial already allowed.
func TestIdempotence(t *testing.T) {
	dir := copyProject(t)
	res := run(t, runOpts{dir: dir, values: job}, logs+"query.log", logs+"binary.log")
	if len(res.Suggestions) == 0 {
		t.Fatal("no suggestions to apply")
	}
	if err := suggest.Write(dir, res, noCI); err != nil {
		t.Fatal(err)
	}
	again := run(t, runOpts{dir: dir, values: job}, logs+"query.log", logs+"binary.log")
	if len(again.Suggestions) != 0 || again.Patch != "" {
		t.Fatalf("second run: %d suggestions, patch:\n%s", len(again.Suggestions), again.Patch)
	}
	if len(again.Ignored) != len(again.Denials) {
		t.Fatalf("ignored %d of %d denials", len(again.Ignored), len(again.Denials))
	}
	for _, f := range again.Ignored {
		if f.Why != "already allowed by the current policy" {
			t.Errorf("%s: %s", f.Denial, f.Why)
		}
	}
}

// A.5 #11: reload races are ignored, tracing lines skipped, cut lines
// counted unparsed, and the analysis is printed. Issue 33: a cut line is
// also what an injected binary path leaves, so the denial that may share a
// block with it (noise.log line 5, nothing but plain lines between it and
// the cut line 6) is suspect: listed with its raw lines, never planned,
// and the run needs a human (exit 3). The same lines without the cut ones
// plan it, so the neighbourhood alone keeps it out. The reload race (line
// 3) is behind a line holding "//" (line 4), which no injected block
// crosses, so it is still analysed and ignored.
func TestNoise(t *testing.T) {
	b, err := os.ReadFile(logs + "noise.log")
	if err != nil {
		t.Fatal(err)
	}
	var whole []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if _, res := denial.ParseLine([]byte(l)); res != denial.LineUnparsed {
			whole = append(whole, l)
		}
	}
	tests := []struct {
		name             string
		file             string
		unparsed, events int
		suspect          []int
		suggested        []string
	}{
		{"noise.log", logs + "noise.log", 4, 4, []int{5}, nil},
		{"without its cut lines", writeLog(t, whole...), 0, 4, nil, []string{"downloads.example.org:443"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, runOpts{values: job}, tt.file)
			if got := suggested(res); !slices.Equal(got, tt.suggested) {
				t.Errorf("suggested %q, want %q", got, tt.suggested)
			}
			if len(res.Ignored) != 1 || !strings.Contains(res.Ignored[0].Why, "reload race") {
				t.Errorf("ignored %+v, want the reload race", res.Ignored)
			}
			if in := res.Inputs[0]; in.Unparsed != tt.unparsed || in.Events != tt.events {
				t.Errorf("input stats = %+v, want %d unparsed, %d events", in, tt.unparsed, tt.events)
			}
			var lines []int
			for _, s := range res.Suspect {
				lines = append(lines, s.Line)
				if s.Host != "downloads.example.org" || !strings.Contains(s.Why, "unparsed line 6") || len(s.Raw) != 2 {
					t.Errorf("suspect %+v: want downloads.example.org, next to the unparsed line 6, with both raw lines", s)
				}
			}
			if !slices.Equal(lines, tt.suspect) || res.NeedsHuman() != len(tt.suspect) {
				t.Errorf("suspect lines %v (needs a human %d), want %v", lines, res.NeedsHuman(), tt.suspect)
			}
		})
	}
}

// A.5 #12: hosts that are not DNS names and paths with glob syntax are
// refused; the text output escapes them. Issue 33: a binary that is not a
// plain path (spaces, a forged [policy:] context) is suspect before
// anything else, so never planned; a Markdown link as a host does not
// parse. hostile.log puts that unparsed line first: after an event, it
// would make the event suspect (TestNoise), and this test is about what
// suggest refuses by itself.
func TestUntrustedText(t *testing.T) {
	res := run(t, runOpts{values: job}, logs+"hostile.log")
	if len(res.Suggestions) != 0 {
		t.Errorf("suggestions from hostile lines: %+v", res.Suggestions)
	}
	var refused []string
	for _, f := range res.Refused {
		refused = append(refused, f.Why)
	}
	if len(refused) != 2 || !strings.Contains(refused[0], "not a DNS name") || !strings.Contains(refused[1], "glob") {
		t.Errorf("refused = %q, want the escape-laden host and the glob path", refused)
	}
	if len(res.Suspect) != 1 || res.Suspect[0].Binary != "/tmp/x y [policy:a engine:b]" || !strings.Contains(res.Suspect[0].Why, "not a plain absolute path") {
		t.Errorf("suspect = %+v, want the binary with a forged [policy:] context", res.Suspect)
	}
	if res.Inputs[0].Unparsed != 1 {
		t.Errorf("the Markdown link as a host: unparsed = %d, want 1", res.Inputs[0].Unparsed)
	}
	text, _, _ := render(t, res)
	if strings.ContainsRune(text, 0x1b) {
		t.Error("the text output carries an escape character")
	}
	if !strings.Contains(text, `evil\x1b[31m.example.com`) {
		t.Errorf("the hostile host is not shown escaped:\n%s", text)
	}
}

// A.5 #13: the order of the inputs does not change the analysis: neither
// the order of the --logs files nor the order of the lines of a file that
// holds no unparsed line. Issue 33: the lines of a file with cut lines
// (noise.log) keep their order, because which events may share an
// injected block with a cut line is a property of the order
// (denial/inject.go); shuffling them would move events next to a cut line
// or away from one, and their trust with them.
func TestDeterminism(t *testing.T) {
	files := map[string][]string{}
	names := []string{"l7-write.log", "l4.log", "siblings.log", "refusals.log", "allowed-ips.log", "binary.log", "query.log", "noise.log", "hostile.log"}
	for _, f := range names {
		b, err := os.ReadFile(logs + f)
		if err != nil {
			t.Fatal(err)
		}
		files[f] = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	dir := t.TempDir()
	var want string
	for i := range 4 {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		order := slices.Clone(names)
		r.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		var paths []string
		for _, f := range order {
			lines := slices.Clone(files[f])
			if !slices.ContainsFunc(lines, func(l string) bool { _, res := denial.ParseLine([]byte(l)); return res == denial.LineUnparsed }) {
				r.Shuffle(len(lines), func(a, b int) { lines[a], lines[b] = lines[b], lines[a] })
			}
			p := filepath.Join(dir, f)
			if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		res := run(t, runOpts{values: job}, paths...)
		if res.SuspectEvents == 0 {
			t.Fatal("no suspect event: noise.log's line next to its cut line is not judged")
		}
		got := analysis(t, res)
		if i == 0 {
			want = got
		} else if got != want {
			t.Fatalf("shuffle %d (files %v) gives another analysis:\n%s\nwant\n%s", i, order, got, want)
		}
	}
}

// --write is refused in CI, whatever the CI.
func TestWriteRefusedInCI(t *testing.T) {
	res := run(t, runOpts{values: job}, logs+"l4.log")
	dir := copyProject(t)
	for _, env := range []map[string]string{{"CI": "true"}, {"GITHUB_ACTIONS": "true"}, {"GITLAB_CI": "true"}} {
		err := suggest.Write(dir, res, func(k string) string { return env[k] })
		if err != suggest.ErrInCI {
			t.Errorf("%v: err = %v, want ErrInCI", env, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "agents/duplicate-detector.md"))
	orig, _ := os.ReadFile(filepath.Join(triage, "agents/duplicate-detector.md"))
	if !bytes.Equal(b, orig) {
		t.Error("the file changed although the write was refused")
	}
}

// A run's log directory: its log files and result.json's placeholders.
func TestRunDirectory(t *testing.T) {
	res := run(t, runOpts{}, "testdata/run/")
	if len(res.Inputs) != 2 {
		t.Fatalf("inputs = %+v", res.Inputs)
	}
	var values []string
	for _, s := range res.Suggestions {
		values = append(values, s.Value)
	}
	if !slices.Contains(values, "POST /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/comments") {
		t.Errorf("result.json's placeholders were not put back: %v", values)
	}
	for _, d := range res.Denials {
		if d.Kind == denial.KindL7Deny && d.Method == "POST" && d.Count != 1 {
			t.Errorf("the JSONL and shorthand copies of one event count %d", d.Count)
		}
	}
}

// Golden outputs of a run with every kind of finding, in the three
// output formats. go test ./suggest -run Golden -update rewrites them.
func TestGolden(t *testing.T) {
	res := run(t, runOpts{values: job}, logs+"l7-write.log", logs+"l4.log", logs+"refusals.log", logs+"allowed-ips.log", logs+"binary.log", logs+"noise.log")
	text, js, patch := render(t, res)
	for name, got := range map[string]string{"mixed.txt": text, "mixed.json": js, "mixed.patch": patch} {
		path := filepath.Join("testdata/golden", name)
		if *update {
			if err := os.MkdirAll("testdata/golden", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs from the golden file (run with -update to accept):\n%s", name, got)
		}
	}
	// The snippet is a valid expectation file.
	if _, err := decide.ParseExpectFile("snippet.policytest.yaml", []byte(res.PolicyTest)); err != nil {
		t.Errorf("the policy-test snippet does not parse: %v\n%s", err, res.PolicyTest)
	}
}

// writeLog writes lines into a temporary log file.
func writeLog(t *testing.T, lines ...string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "sandbox.log")
	if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func l7Deny(ts, method, path string) string {
	return ts + " OCSF HTTP:" + method + " [MED] DENIED " + method + " http://host.docker.internal:8081" + path +
		" [policy:host_docker_internal_8081 engine:l7] [reason:L7_REQUEST deny " + method + " host.docker.internal:8081" + path +
		" reason=" + method + " " + path + " not permitted by policy]"
}

// Only with --generalize, and only the last segment may become "*": when
// every value seen there looks like an id (OpenShell's looks_like_id), or
// three values were seen; never a placeholder segment, never "**". Without
// it every rule is exactly what was denied (redteam T4-2: the agent chooses
// the values).
func TestGeneralize(t *testing.T) {
	ids := writeLog(t,
		l7Deny("2026-04-01T04:00:00.000Z", "GET", "/repos/acme/widgets/pulls/12345"),
		l7Deny("2026-04-01T04:00:01.000Z", "GET", "/repos/acme/widgets/pulls/12346"))
	three := writeLog(t,
		l7Deny("2026-04-01T04:00:00.000Z", "GET", "/repos/acme/widgets/labels/bug"),
		l7Deny("2026-04-01T04:00:01.000Z", "GET", "/repos/acme/widgets/labels/docs"),
		l7Deny("2026-04-01T04:00:02.000Z", "GET", "/repos/acme/widgets/labels/triage"))
	two := writeLog(t,
		l7Deny("2026-04-01T04:00:00.000Z", "GET", "/repos/acme/widgets/labels/bug"),
		l7Deny("2026-04-01T04:00:01.000Z", "GET", "/repos/acme/widgets/labels/docs"))
	branches := writeLog(t,
		l7Deny("2026-04-01T04:00:00.000Z", "DELETE", "/repos/acme/widgets/git/refs/heads/a"),
		l7Deny("2026-04-01T04:00:01.000Z", "DELETE", "/repos/acme/widgets/git/refs/heads/b"),
		l7Deny("2026-04-01T04:00:02.000Z", "DELETE", "/repos/acme/widgets/git/refs/heads/c"))
	tests := []struct {
		name       string
		log        string
		generalize bool
		want       []string
		risk       string // of the widened rule
	}{
		{"ids", ids, true, []string{"GET /repos/{{OWNER}}/{{REPO_NAME}}/pulls/*"}, "medium"},
		{"ids, not asked", ids, false, []string{"GET /repos/{{OWNER}}/{{REPO_NAME}}/pulls/12345", "GET /repos/{{OWNER}}/{{REPO_NAME}}/pulls/12346"}, ""},
		{"three values", three, true, []string{"GET /repos/{{OWNER}}/{{REPO_NAME}}/labels/*"}, "medium"},
		{"two names stay exact", two, true, []string{"GET /repos/{{OWNER}}/{{REPO_NAME}}/labels/bug", "GET /repos/{{OWNER}}/{{REPO_NAME}}/labels/docs"}, ""},
		{"T4-2 branches, not asked", branches, false, []string{"DELETE /repos/{{OWNER}}/{{REPO_NAME}}/git/refs/heads/a", "DELETE /repos/{{OWNER}}/{{REPO_NAME}}/git/refs/heads/b", "DELETE /repos/{{OWNER}}/{{REPO_NAME}}/git/refs/heads/c"}, ""},
		{"T4-2 branches, asked", branches, true, []string{"DELETE /repos/{{OWNER}}/{{REPO_NAME}}/git/refs/heads/*"}, "critical"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, runOpts{values: job, generalize: tt.generalize}, tt.log)
			if got := suggested(res); !slices.Equal(got, tt.want) {
				t.Fatalf("suggestions = %q, want %q", got, tt.want)
			}
			for _, s := range res.Suggestions {
				if s.Widened != (tt.risk != "") || tt.risk != "" && (s.Risk != tt.risk || !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, "<any value>") })) {
					t.Errorf("%s: widened %v, risk %s, notes %q; want risk %q and the widest request named", s.Value, s.Widened, s.Risk, s.Notes, tt.risk)
				}
			}
		})
	}
}

// --min-count ignores rare denials.
func TestMinCount(t *testing.T) {
	f := writeLog(t,
		l7Deny("2026-04-01T04:00:00.000Z", "GET", "/repos/acme/widgets/pulls"),
		l7Deny("2026-04-01T04:00:05.000Z", "GET", "/repos/acme/widgets/pulls"),
		l7Deny("2026-04-01T04:00:06.000Z", "GET", "/repos/acme/widgets/tags"))
	res := run(t, runOpts{values: job, minCount: 2}, f)
	if len(res.Suggestions) != 1 || res.Suggestions[0].Value != "GET /repos/{{OWNER}}/{{REPO_NAME}}/pulls" {
		t.Errorf("suggestions = %+v", res.Suggestions)
	}
	if len(res.Ignored) != 1 || !strings.Contains(res.Ignored[0].Why, "--min-count") {
		t.Errorf("ignored = %+v", res.Ignored)
	}
}

// Without the job's values the path stays concrete: nothing is guessed.
func TestNoValuesNoPlaceholders(t *testing.T) {
	res := run(t, runOpts{}, logs+"l7-write.log")
	if len(res.Suggestions) != 1 || res.Suggestions[0].Value != "POST /repos/acme/widgets/issues/7/comments" {
		t.Errorf("suggestions = %+v", res.Suggestions)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "no placeholder values") }) {
		t.Errorf("no warning about the missing values: %v", res.Warnings)
	}
}

// A new endpoint on a private address literal is high risk.
func TestPrivateAddressRisk(t *testing.T) {
	f := writeLog(t, "2026-04-01T04:00:00.000Z OCSF NET:OPEN [MED] DENIED /usr/bin/curl(1) -> 10.0.0.5:8443 [policy:- engine:opa] [reason:endpoint 10.0.0.5:8443 is not allowed by any policy]")
	res := run(t, runOpts{values: job}, f)
	if len(res.Suggestions) != 1 || res.Suggestions[0].Risk != "high" {
		t.Fatalf("suggestions = %+v", res.Suggestions)
	}
}

// --to skill:NAME puts new endpoints and rules in the skill.
func TestToSkill(t *testing.T) {
	res := run(t, runOpts{values: job, to: "skill:duplicate-detector"}, logs+"l4.log", logs+"query.log")
	for _, s := range res.Suggestions {
		if s.File != "skills/duplicate-detector/SKILL.md" {
			t.Errorf("%s %s goes to %s", s.Change, s.Value, s.File)
		}
	}
	if len(res.Suggestions) != 3 {
		t.Errorf("suggestions = %d, want 3", len(res.Suggestions))
	}
}

// An L4 denial and a forward request to one host make one endpoint with
// the seen rule, not a provisional one.
func TestForwardBeatsProvisional(t *testing.T) {
	f := writeLog(t,
		"2026-04-01T04:00:00.000Z OCSF NET:OPEN [MED] DENIED /usr/bin/curl(1) -> downloads.example.com:80 [policy:- engine:opa] [reason:endpoint downloads.example.com:80 is not allowed by any policy]",
		"2026-04-01T04:00:01.000Z OCSF HTTP:GET [MED] DENIED /usr/bin/curl(1) -> GET http://downloads.example.com/files/a.csv [policy:- engine:opa] [reason:endpoint downloads.example.com:80 is not allowed by any policy]")
	res := run(t, runOpts{values: job}, f)
	if len(res.Suggestions) != 1 {
		t.Fatalf("suggestions = %+v", res.Suggestions)
	}
	s := res.Suggestions[0]
	if s.Provisional || !slices.Equal(s.Rules, []string{"GET /files/a.csv"}) || len(s.Covers) != 2 {
		t.Errorf("suggestion = %+v", s)
	}
	if strings.Contains(res.Patch, "access:") {
		t.Errorf("patch:\n%s", res.Patch)
	}
}
