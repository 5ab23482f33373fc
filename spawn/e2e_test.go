package spawn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/time/rate"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/forge"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const forgeToken = "ghs_E2EforgeTOKENneverInASandbox0123456789"

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeGitHub records every request and answers like the GitHub API.
type fakeGitHub struct {
	mu   sync.Mutex
	reqs []string // "METHOD /path?query body"
	auth []string
	srv  *httptest.Server
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		line := r.Method + " " + r.URL.Path
		if r.URL.RawQuery != "" {
			line += "?" + r.URL.RawQuery
		}
		if len(b) > 0 {
			line += " " + string(b)
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, line)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/search/issues":
			io.WriteString(w, `{"total_count":1,"incomplete_results":false,"items":[{"number":3,"title":"crash on start"}]}`)
		case strings.HasSuffix(r.URL.Path, "/comments") && r.Method == "POST":
			w.WriteHeader(201)
			io.WriteString(w, `{"id":99}`)
		case strings.HasSuffix(r.URL.Path, "/comments"):
			io.WriteString(w, `[{"id":1,"body":"same here"}]`)
		case strings.HasSuffix(r.URL.Path, "/labels"):
			io.WriteString(w, `[{"name":"duplicate"}]`)
		default:
			io.WriteString(w, `{"number":42,"title":"app crashes on start","body":"steps: run it"}`)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGitHub) requests() ([]string, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...), append([]string(nil), f.auth...)
}

func loadManifest(t testing.TB) *bundle.Manifest {
	t.Helper()
	m, _, err := bundle.ReadManifest(os.DirFS("testdata/policies"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// playRunner is the Runner test double: it plays each subagent of the triage
// system by calling the forge proxy with the token it was handed, like the
// real agent would from inside its sandbox. It records every request.
type playRunner struct {
	client *http.Client
	mu     sync.Mutex
	reqs   []Request
	// writes records the status of each write a subagent attempted.
	writes map[string]int
	// spawns records the status of each spawn a subagent attempted.
	spawns map[string]int
}

func (p *playRunner) Run(ctx context.Context, req Request) (Result, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	base, tok := req.Env[EnvForgeURL], req.Env[EnvAgentToken]
	get := func(path string) (int, error) { return call(ctx, p.client, "GET", base+path, tok, "") }
	var out any
	switch req.Agent {
	case "duplicate-detector":
		if s, err := get("/search/issues?q=crash+on+start+is:issue"); err != nil || s != 200 {
			return Result{}, fmt.Errorf("search: %d %v", s, err)
		}
		if s, err := get("/repos/acme/widgets/issues/3"); err != nil || s != 200 {
			return Result{}, fmt.Errorf("get: %d %v", s, err)
		}
		// A prompt-injected subagent tries to write: the proxy must refuse.
		s, err := call(ctx, p.client, "POST", base+"/repos/acme/widgets/issues/42/comments", tok, `{"body":"closing as dup"}`)
		if err != nil {
			return Result{}, err
		}
		p.record(p.writes, req.Agent, s)
		out = map[string]any{"duplicate_of": 3, "confidence": 0.9}
	case "completeness-assessor":
		if s, err := get("/repos/acme/widgets/issues/42"); err != nil || s != 200 {
			return Result{}, fmt.Errorf("get: %d %v", s, err)
		}
		if s, err := get("/repos/acme/widgets/issues/42/comments"); err != nil || s != 200 {
			return Result{}, fmt.Errorf("comments: %d %v", s, err)
		}
		s, err := call(ctx, p.client, "POST", base+"/repos/acme/widgets/issues/42/labels", tok, `["triaged"]`)
		if err != nil {
			return Result{}, err
		}
		p.record(p.writes, req.Agent, s)
		out = map[string]any{"complete": false, "missing": []string{"version"}}
	case "reproducibility-verifier":
		if s, err := get("/repos/acme/widgets/issues/42"); err != nil || s != 200 {
			return Result{}, fmt.Errorf("get: %d %v", s, err)
		}
		// It has no spawn URL, and even with one its token may not spawn.
		if _, ok := req.Env[EnvSpawnURL]; ok {
			return Result{}, fmt.Errorf("a leaf subagent got a spawn URL")
		}
		s, err := call(ctx, p.client, "POST", spawnURLForTest+Path, tok, `{"agent":"duplicate-detector","prompt":"x"}`)
		if err != nil {
			return Result{}, err
		}
		p.record(p.spawns, req.Agent, s)
		out = map[string]any{"reproducible": "unknown"}
	default:
		return Result{ExitCode: 2, Output: []byte("unknown agent")}, nil
	}
	b, _ := json.Marshal(out)
	return Result{ExitCode: 0, Output: b}, nil
}

func (p *playRunner) record(m map[string]int, agent string, status int) {
	p.mu.Lock()
	m[agent] = status
	p.mu.Unlock()
}

// spawnURLForTest is set by the end-to-end test before runs start.
var spawnURLForTest string

func call(ctx context.Context, c *http.Client, method, url, token, body string) (int, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func TestTriageEndToEnd(t *testing.T) {
	gh := newFakeGitHub(t)
	reg := forge.NewRegistry()
	auditLog, errLog := &syncBuffer{}, &syncBuffer{}
	audit := forge.NewAudit(auditLog)
	cred, err := forge.NewCredential(forgeToken)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := forge.New(forge.Config{Upstream: gh.srv.URL, Credential: cred, Registry: reg, Audit: audit,
		Scope: forge.Scope{Owner: "acme", Repo: "widgets", Issue: 42, Labels: []string{"duplicate", "needs-info", "triaged"}}})
	if err != nil {
		t.Fatal(err)
	}
	proxySrv := httptest.NewUnstartedServer(proxy)
	proxySrv.Config.ErrorLog = log.New(errLog, "", 0)
	proxySrv.Start()
	defer proxy.CloseIdle()
	defer proxySrv.Close()

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	runner := &playRunner{client: client, writes: map[string]int{}, spawns: map[string]int{}}
	svc, err := New(Config{Manifest: loadManifest(t), Registry: reg, Runner: runner, Audit: audit,
		ForgeURL: proxySrv.URL, SpawnURL: "http://spawn.invalid", Rate: rate.Inf})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	spawnSrv := httptest.NewServer(svc)
	defer spawnSrv.Close()
	spawnURLForTest = spawnSrv.URL

	// The runner started the orchestrator with its own token.
	triageTok, err := reg.Mint(forge.Identity{Agent: "triage", Tier: forge.TierWrite})
	if err != nil {
		t.Fatal(err)
	}

	// The orchestrator spawns its three subagents at once.
	subagents := []string{"duplicate-detector", "completeness-assessor", "reproducibility-verifier"}
	results := make([]RunAgentResponse, len(subagents))
	var wg sync.WaitGroup
	for i, name := range subagents {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", spawnSrv.URL+Path, strings.NewReader(`{"agent":"`+name+`","prompt":"assess issue 42"}`))
			req.Header.Set("Authorization", "Bearer "+triageTok)
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				t.Errorf("spawn %s: status %d: %s", name, resp.StatusCode, b)
				return
			}
			if err := json.NewDecoder(resp.Body).Decode(&results[i]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i, r := range results {
		if r.Agent != subagents[i] || r.ExitCode != 0 || !json.Valid(r.Result) || r.ID == "" {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	if !strings.Contains(string(results[0].Result), `"duplicate_of":3`) {
		t.Errorf("duplicate-detector result %s", results[0].Result)
	}

	// The orchestrator writes its verdict.
	if s, err := call(context.Background(), client, "POST", proxySrv.URL+"/repos/acme/widgets/issues/42/comments", triageTok,
		`{"body":"Duplicate of #3; missing version."}`); err != nil || s != 201 {
		t.Fatalf("orchestrator comment: %d %v", s, err)
	}
	if s, err := call(context.Background(), client, "POST", proxySrv.URL+"/repos/acme/widgets/issues/42/labels", triageTok,
		`{"labels":["duplicate","needs-info"]}`); err != nil || s != 200 {
		t.Fatalf("orchestrator labels: %d %v", s, err)
	}

	// Subagents' writes and nested spawns were refused.
	for _, a := range []string{"duplicate-detector", "completeness-assessor"} {
		if runner.writes[a] != http.StatusForbidden {
			t.Errorf("%s write: status %d, want 403", a, runner.writes[a])
		}
	}
	if s := runner.spawns["reproducibility-verifier"]; s != http.StatusForbidden {
		t.Errorf("nested spawn: status %d, want 403", s)
	}

	// The forge saw exactly the reads and the orchestrator's two writes, all
	// with the forge token.
	reqs, auths := gh.requests()
	var writes []string
	for i, r := range reqs {
		if auths[i] != "Bearer "+forgeToken {
			t.Errorf("forge request %q without the forge token", r)
		}
		if strings.HasPrefix(r, "POST") {
			writes = append(writes, r)
		}
	}
	wantWrites := []string{
		`POST /repos/acme/widgets/issues/42/comments {"body":"Duplicate of #3; missing version."}`,
		`POST /repos/acme/widgets/issues/42/labels {"labels":["duplicate","needs-info"]}`,
	}
	if strings.Join(writes, "\n") != strings.Join(wantWrites, "\n") {
		t.Errorf("forge writes:\n%s\nwant:\n%s", strings.Join(writes, "\n"), strings.Join(wantWrites, "\n"))
	}
	if len(reqs) != 2+2+1+2 {
		t.Errorf("forge got %d requests, want 7:\n%s", len(reqs), strings.Join(reqs, "\n"))
	}
	if !contains(reqs, "GET /search/issues?q=crash+on+start+is%3Aissue+repo%3Aacme%2Fwidgets") {
		t.Errorf("search was not scoped: %v", reqs)
	}

	// Every subagent token was revoked; only the orchestrator's is live.
	if n := reg.Len(); n != 1 {
		t.Errorf("%d live tokens after the runs, want 1", n)
	}

	// The forge token is nowhere an agent or a log can see it.
	runner.mu.Lock()
	defer runner.mu.Unlock()
	if len(runner.reqs) != 3 {
		t.Fatalf("runner got %d requests", len(runner.reqs))
	}
	for _, r := range runner.reqs {
		if r.Depth != 1 || r.Parent != "triage" || r.Env[EnvAgent] != r.Agent || r.Env[EnvAgentToken] == "" || r.Env[EnvForgeURL] != proxySrv.URL {
			t.Errorf("request %+v", r)
		}
		b, _ := json.Marshal(r)
		if strings.Contains(string(b), forgeToken) {
			t.Errorf("sandbox request for %s holds the forge token", r.Agent)
		}
	}
	for what, text := range map[string]string{"audit log": auditLog.String(), "server log": errLog.String()} {
		if strings.Contains(text, forgeToken) || strings.Contains(text, triageTok) {
			t.Errorf("%s holds a token", what)
		}
	}

	// The audit log has one entry per request, both services, with denials.
	var entries []forge.AuditEntry
	dec := json.NewDecoder(strings.NewReader(auditLog.String()))
	for dec.More() {
		var e forge.AuditEntry
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	count := map[string]int{}
	for _, e := range entries {
		count[e.Service+"/"+e.Decision]++
	}
	want := map[string]int{"spawn/allow": 3, "spawn/deny": 1, "forge/allow": 7, "forge/deny": 2}
	for k, v := range want {
		if count[k] != v {
			t.Errorf("audit %s: %d entries, want %d (all: %v)", k, count[k], v, count)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
