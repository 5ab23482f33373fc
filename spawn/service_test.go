package spawn

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fullsend-ai/agent-sandbox/forge"
)

// gateRunner blocks every run until released (or its context ends) and
// tracks peak concurrency.
type gateRunner struct {
	release  chan struct{}
	running  atomic.Int64
	peak     atomic.Int64
	started  chan string
	finished atomic.Int64
	canceled atomic.Int64
}

func newGateRunner() *gateRunner {
	return &gateRunner{release: make(chan struct{}), started: make(chan string, 1000)}
}

func (g *gateRunner) Run(ctx context.Context, req Request) (Result, error) {
	n := g.running.Add(1)
	defer g.running.Add(-1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	g.started <- req.Agent
	defer g.finished.Add(1)
	select {
	case <-g.release:
		return Result{Output: []byte(`{"ok":true}`)}, nil
	case <-ctx.Done():
		g.canceled.Add(1)
		return Result{}, ctx.Err()
	}
}

type fixture struct {
	svc    *Service
	reg    *forge.Registry
	url    string
	client *http.Client
	triage string
	sub    string // a subagent's token (depth 1)
}

func newFixture(t *testing.T, r Runner, edit func(*Config)) *fixture {
	t.Helper()
	reg := forge.NewRegistry()
	cfg := Config{Manifest: loadManifest(t), Registry: reg, Runner: r, ForgeURL: "http://forge.invalid", Rate: rate.Inf}
	if edit != nil {
		edit(&cfg)
	}
	svc, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc)
	tr := &http.Transport{MaxIdleConnsPerHost: 200}
	t.Cleanup(func() {
		svc.Close()
		tr.CloseIdleConnections()
		srv.Close()
	})
	triage, _ := reg.Mint(forge.Identity{Agent: "triage", Tier: forge.TierWrite})
	sub, _ := reg.Mint(forge.Identity{Agent: "triage", Tier: forge.TierWrite, Depth: 1, Parent: "triage"})
	return &fixture{svc: svc, reg: reg, url: srv.URL, client: &http.Client{Transport: tr}, triage: triage, sub: sub}
}

func (f *fixture) post(t *testing.T, method, path, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type okRunner struct{ calls atomic.Int64 }

func (o *okRunner) Run(context.Context, Request) (Result, error) {
	o.calls.Add(1)
	return Result{Output: []byte("plain text, not JSON")}, nil
}

func TestSpawnRefusals(t *testing.T) {
	r := &okRunner{}
	f := newFixture(t, r, func(c *Config) { c.MaxRequestBytes = 512 })
	reader, _ := f.reg.Mint(forge.Identity{Agent: "duplicate-detector", Tier: forge.TierRead, Depth: 1, Parent: "triage"})
	unknown, _ := f.reg.Mint(forge.Identity{Agent: "intruder", Tier: forge.TierWrite})
	ok := `{"agent":"duplicate-detector","prompt":"look"}`
	tests := []struct {
		name, method, path, token, body string
		want                            int
		wantMsg                         string
	}{
		{"allowed", "POST", Path, f.triage, ok, 200, `"result":"plain text, not JSON"`},
		{"no token", "POST", Path, "", ok, 401, "missing bearer token"},
		{"wrong token", "POST", Path, "fsa_wrong", ok, 401, "invalid bearer token"},
		{"forge token", "POST", Path, forgeToken, ok, 401, "invalid bearer token"},
		{"not in the Agent() list", "POST", Path, reader, ok, 403, "may not spawn duplicate-detector"},
		{"caller not in manifest", "POST", Path, unknown, ok, 403, "not in the policy manifest"},
		{"target not in manifest", "POST", Path, f.triage, `{"agent":"shell","prompt":"x"}`, 403, "may not spawn shell"},
		{"depth exceeded", "POST", Path, f.sub, ok, 403, "spawn depth 2 exceeds the limit 1"},
		{"bad name", "POST", Path, f.triage, `{"agent":"../etc","prompt":"x"}`, 400, "field agent"},
		{"empty prompt", "POST", Path, f.triage, `{"agent":"duplicate-detector","prompt":"  "}`, 400, "field prompt"},
		{"unknown field", "POST", Path, f.triage, `{"agent":"duplicate-detector","prompt":"x","tier":"full"}`, 400, "unknown field"},
		{"trailing data", "POST", Path, f.triage, ok + ok, 400, "trailing data"},
		{"not json", "POST", Path, f.triage, "agent=x", 400, "decoding body"},
		{"oversized", "POST", Path, f.triage, `{"agent":"duplicate-detector","prompt":"` + strings.Repeat("a", 600) + `"}`, 413, "larger than 512"},
		{"get", "GET", Path, f.triage, "", 405, "use POST"},
		{"other path", "POST", "/run-agent/x", f.triage, ok, 404, "no such endpoint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := r.calls.Load()
			status, body := f.post(t, tc.method, tc.path, tc.token, tc.body)
			if status != tc.want || !strings.Contains(body, tc.wantMsg) {
				t.Fatalf("got %d %s, want %d containing %q", status, body, tc.want, tc.wantMsg)
			}
			if ran := r.calls.Load() - before; (status == 200) != (ran == 1) {
				t.Fatalf("status %d but the runner ran %d times", status, ran)
			}
		})
	}
	if n := f.reg.Len(); n != 4 {
		t.Fatalf("%d live tokens, want the 4 the test minted", n)
	}
}

func TestSpawnHundredConcurrent(t *testing.T) {
	g := newGateRunner()
	f := newFixture(t, g, func(c *Config) { c.MaxConcurrent = 4; c.MaxQueue = 16; c.QueueWait = time.Minute })
	const n = 100
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			s, _ := f.post(t, "POST", Path, f.triage, `{"agent":"duplicate-detector","prompt":"look"}`)
			statuses <- s
		})
	}
	// 80 are refused at once; 4 run and 16 wait. Only then release them.
	refused := 0
	for refused < n-20 {
		s := <-statuses
		if s != http.StatusServiceUnavailable {
			t.Fatalf("status %d before any run finished, want 503", s)
		}
		refused++
	}
	for range 4 {
		<-g.started
	}
	close(g.release)
	wg.Wait()
	close(statuses)
	ok := 0
	for s := range statuses {
		if s != 200 {
			t.Errorf("admitted request got %d", s)
		}
		ok++
	}
	if ok != 20 {
		t.Errorf("%d requests admitted, want 20", ok)
	}
	if p := g.peak.Load(); p > 4 {
		t.Errorf("%d sandboxes ran at once, limit 4", p)
	}
	if l := f.reg.Len(); l != 2 {
		t.Errorf("%d live tokens after the runs, want 2", l)
	}
}

func TestSpawnTimeoutQueueAndRate(t *testing.T) {
	t.Run("per-subagent timeout", func(t *testing.T) {
		g := newGateRunner()
		f := newFixture(t, g, func(c *Config) { c.Timeout = 20 * time.Millisecond })
		s, body := f.post(t, "POST", Path, f.triage, `{"agent":"duplicate-detector","prompt":"x"}`)
		if s != http.StatusGatewayTimeout || g.canceled.Load() != 1 {
			t.Fatalf("status %d %s, canceled %d", s, body, g.canceled.Load())
		}
	})
	t.Run("bounded queue wait", func(t *testing.T) {
		g := newGateRunner()
		f := newFixture(t, g, func(c *Config) { c.MaxConcurrent = 1; c.QueueWait = 20 * time.Millisecond })
		done := make(chan int)
		go func() {
			s, _ := f.post(t, "POST", Path, f.triage, `{"agent":"duplicate-detector","prompt":"x"}`)
			done <- s
		}()
		<-g.started
		s, body := f.post(t, "POST", Path, f.triage, `{"agent":"duplicate-detector","prompt":"y"}`)
		if s != http.StatusServiceUnavailable || !strings.Contains(body, "no sandbox slot") {
			t.Fatalf("queued request: %d %s", s, body)
		}
		close(g.release)
		if s := <-done; s != 200 {
			t.Fatalf("first request: %d", s)
		}
	})
	t.Run("rate limit", func(t *testing.T) {
		f := newFixture(t, &okRunner{}, func(c *Config) { c.Rate = rate.Every(time.Hour); c.Burst = 2 })
		var got []int
		for range 3 {
			s, _ := f.post(t, "POST", Path, f.triage, `{"agent":"duplicate-detector","prompt":"x"}`)
			got = append(got, s)
		}
		if got[0] != 200 || got[1] != 200 || got[2] != http.StatusTooManyRequests {
			t.Fatalf("statuses %v, want 200 200 429", got)
		}
	})
}

func TestServeShutdownCancelsRuns(t *testing.T) {
	g := newGateRunner()
	reg := forge.NewRegistry()
	svc, err := New(Config{Manifest: loadManifest(t), Registry: reg, Runner: g, ForgeURL: "http://forge.invalid", Rate: rate.Inf})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- svc.Serve(ctx, ln) }()
	tok, _ := reg.Mint(forge.Identity{Agent: "triage", Tier: forge.TierWrite})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp := make(chan int)
	go func() {
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+Path, strings.NewReader(`{"agent":"duplicate-detector","prompt":"x"}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		r, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			resp <- 0
			return
		}
		r.Body.Close()
		resp <- r.StatusCode
	}()
	<-g.started
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if s := <-resp; s != http.StatusBadGateway {
		t.Fatalf("in-flight run answered %d, want 502 after cancellation", s)
	}
	if g.canceled.Load() != 1 || g.running.Load() != 0 {
		t.Fatalf("runs not cancelled and finished: canceled %d running %d", g.canceled.Load(), g.running.Load())
	}
	if reg.Len() != 1 {
		t.Fatalf("%d live tokens, want only the orchestrator's", reg.Len())
	}
}

func TestNewRejectsBadManifest(t *testing.T) {
	m := loadManifest(t)
	a := m.Agents["triage"]
	a.Spawns = append(a.Spawns, "ghost")
	m.Agents["triage"] = a
	_, err := New(Config{Manifest: m, Registry: forge.NewRegistry(), Runner: &okRunner{}, ForgeURL: "http://x"})
	if err == nil || !strings.Contains(err.Error(), `spawns "ghost"`) {
		t.Fatalf("err %v", err)
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("empty config accepted")
	}
}

func FuzzDecodeRunAgent(f *testing.F) {
	for _, s := range []string{`{"agent":"a","prompt":"b"}`, `{"agent":"A"}`, `[]`, `{"agent":"a","prompt":"b"} {}`, `{"agent":"a-b-c","prompt":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := DecodeRunAgent(strings.NewReader(string(b)), 4096)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if !forge.ValidAgentName(req.Agent) || strings.TrimSpace(req.Prompt) == "" || strings.ContainsRune(req.Prompt, 0) {
			t.Fatalf("accepted %+v", req)
		}
		// What was accepted re-encodes and decodes to the same request.
		again, _ := json.Marshal(req)
		back, err := DecodeRunAgent(strings.NewReader(string(again)), 1<<20)
		if err != nil || back != req {
			t.Fatalf("round trip %+v -> %+v, %v", req, back, err)
		}
	})
}
