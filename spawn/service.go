package spawn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/forge"
)

// DefaultListen is where compiled policies expect the spawn service.
const DefaultListen = "host.docker.internal:8082"

// Path is the one endpoint the service serves.
const Path = "/run-agent"

// Config configures the spawn service. Zero limits take the defaults noted.
type Config struct {
	// Manifest is the compiled policy manifest: agents, tiers, Spawns lists.
	Manifest *bundle.Manifest
	// Registry authenticates callers and mints subagent tokens; share it
	// with the forge proxy so the proxy knows every subagent.
	Registry *forge.Registry
	// Runner runs subagents in sandboxes.
	Runner Runner
	// Audit receives one entry per request; nil discards.
	Audit *forge.Audit
	// ForgeURL is the forge proxy as sandboxes reach it.
	ForgeURL string
	// SpawnURL is this service as sandboxes reach it.
	SpawnURL string
	// MaxConcurrent bounds sandboxes running at once (default 4).
	MaxConcurrent int
	// MaxQueue bounds requests waiting for a slot (default 16); more are refused.
	MaxQueue int
	// QueueWait bounds the wait for a slot (default 2m).
	QueueWait time.Duration
	// Timeout bounds one subagent run (default 15m).
	Timeout time.Duration
	// MaxDepth bounds spawn nesting (default 1: the orchestrator spawns, subagents do not).
	MaxDepth int
	// Rate and Burst limit spawn requests across all callers (default 1/s, burst 8).
	Rate  rate.Limit
	Burst int
	// MaxRequestBytes bounds a request body (default 64 KiB).
	MaxRequestBytes int64
	// MaxResultBytes bounds a subagent's output (default 1 MiB).
	MaxResultBytes int
	// ErrorLog receives HTTP server errors; nil discards them.
	ErrorLog *log.Logger
}

// Service is the spawn service. Create it with New; it is an http.Handler.
type Service struct {
	cfg     Config
	limiter *rate.Limiter
	slots   chan struct{}
	pending atomic.Int64 // running + waiting
	runs    sync.WaitGroup
	base    context.Context
	stop    context.CancelFunc
}

// Errors callers can branch on.
var (
	ErrNotAllowed = errors.New("spawn not allowed")
	ErrBusy       = errors.New("too many subagents")
)

// New validates cfg and returns a service. Close it (or let Serve return)
// to cancel runs still in flight.
func New(cfg Config) (*Service, error) {
	if cfg.Manifest == nil || cfg.Registry == nil || cfg.Runner == nil {
		return nil, errors.New("spawn service: manifest, registry and runner are required")
	}
	if cfg.ForgeURL == "" {
		return nil, errors.New("spawn service: no forge proxy URL for sandboxes")
	}
	cfg.MaxConcurrent = positiveOr(cfg.MaxConcurrent, 4)
	cfg.MaxQueue = positiveOr(cfg.MaxQueue, 16)
	cfg.MaxDepth = positiveOr(cfg.MaxDepth, 1)
	cfg.Burst = positiveOr(cfg.Burst, 8)
	cfg.MaxResultBytes = positiveOr(cfg.MaxResultBytes, 1<<20)
	cfg.QueueWait = positiveOr(cfg.QueueWait, 2*time.Minute)
	cfg.Timeout = positiveOr(cfg.Timeout, 15*time.Minute)
	cfg.Rate = positiveOr(cfg.Rate, 1)
	cfg.MaxRequestBytes = positiveOr(cfg.MaxRequestBytes, 64<<10)
	if err := checkSpawns(cfg.Manifest); err != nil {
		return nil, err
	}
	base, stop := context.WithCancel(context.Background())
	return &Service{
		cfg:     cfg,
		limiter: rate.NewLimiter(cfg.Rate, cfg.Burst),
		slots:   make(chan struct{}, cfg.MaxConcurrent),
		base:    base,
		stop:    stop,
	}, nil
}

// positiveOr returns v, or def when v is not positive.
func positiveOr[T int | int64 | time.Duration | rate.Limit](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// checkSpawns requires every agent a manifest agent spawns to be in the
// manifest.
func checkSpawns(m *bundle.Manifest) error {
	for name, a := range m.Agents {
		for _, sub := range a.Spawns {
			if _, ok := m.Agents[sub]; !ok {
				return fmt.Errorf("spawn service: manifest: agent %s spawns %q, which is not in the manifest", name, sub)
			}
		}
	}
	return nil
}

// Serve serves the service on ln until ctx is cancelled; then it cancels
// running subagents, shuts the HTTP server down gracefully and returns once
// every run has finished (runners return only after cleanup).
func (s *Service) Serve(ctx context.Context, ln net.Listener) error {
	stopRuns := context.AfterFunc(ctx, s.stop)
	defer stopRuns()
	err := forge.ServeHandler(ctx, ln, s, forge.ServeOptions{
		WriteTimeout: s.cfg.QueueWait + s.cfg.Timeout + 30*time.Second,
		ErrorLog:     s.cfg.ErrorLog,
	})
	s.Close()
	return err
}

// Close cancels running subagents and waits until every run has finished.
func (s *Service) Close() {
	s.stop()
	s.runs.Wait()
}

// ServeHTTP implements http.Handler.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	e := forge.AuditEntry{Service: "spawn", RequestID: newID(), Method: r.Method, Path: r.URL.EscapedPath()}
	status, reason := s.handle(w, r, &e)
	e.Time = start.UTC()
	e.Status = status
	e.Reason = reason
	switch {
	case status < 400:
		e.Decision = forge.DecisionAllow
	case status >= 500 && status != http.StatusServiceUnavailable:
		e.Decision = forge.DecisionError
	default:
		e.Decision = forge.DecisionDeny
	}
	e.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	s.cfg.Audit.Log(e)
}

func (s *Service) handle(w http.ResponseWriter, r *http.Request, e *forge.AuditEntry) (int, string) {
	if r.URL.Path != Path {
		return refuse(w, http.StatusNotFound, "no such endpoint (POST "+Path+")")
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return refuse(w, http.StatusMethodNotAllowed, "use POST")
	}
	caller, reason := s.authenticate(r)
	if reason != "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fullsend-spawn"`)
		return refuse(w, http.StatusUnauthorized, reason)
	}
	e.Agent = caller.Agent
	req, err := DecodeRunAgent(http.MaxBytesReader(w, r.Body, s.cfg.MaxRequestBytes), s.cfg.MaxRequestBytes)
	if err != nil {
		return s.refuseBody(w, err)
	}
	e.Target = req.Agent
	child, err := s.authorize(caller, req.Agent)
	if err != nil {
		return refuse(w, http.StatusForbidden, err.Error())
	}
	if !s.limiter.Allow() {
		w.Header().Set("Retry-After", "1")
		return refuse(w, http.StatusTooManyRequests, "spawn rate limit exceeded")
	}
	release, status, err := s.acquire(r.Context())
	if err != nil {
		w.Header().Set("Retry-After", "5")
		return refuse(w, status, err.Error())
	}
	defer release()
	return s.run(w, r.Context(), e, req, child)
}

// authenticate resolves the caller's bearer token; a non-empty reason says
// why it cannot.
func (s *Service) authenticate(r *http.Request) (forge.Identity, string) {
	tok, ok := forge.BearerToken(r)
	if !ok {
		return forge.Identity{}, "missing bearer token"
	}
	caller, err := s.cfg.Registry.Lookup(tok)
	if err != nil {
		return forge.Identity{}, "invalid bearer token"
	}
	return caller, ""
}

// refuseBody refuses a request body that does not decode: too large, or
// malformed.
func (s *Service) refuseBody(w http.ResponseWriter, err error) (int, string) {
	var mbe *http.MaxBytesError
	if errors.Is(err, ErrTooLarge) || errors.As(err, &mbe) {
		return refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body is larger than %d bytes", s.cfg.MaxRequestBytes))
	}
	return refuse(w, http.StatusBadRequest, err.Error())
}

// authorize checks the caller may spawn target and returns the child's identity.
func (s *Service) authorize(caller forge.Identity, target string) (forge.Identity, error) {
	entry, ok := s.cfg.Manifest.Agents[caller.Agent]
	if !ok {
		return forge.Identity{}, fmt.Errorf("caller %s is not in the policy manifest: %w", caller.Agent, ErrNotAllowed)
	}
	if !slices.Contains(entry.Spawns, target) {
		return forge.Identity{}, fmt.Errorf("agent %s may not spawn %s (its Agent(...) list: %v): %w", caller.Agent, target, entry.Spawns, ErrNotAllowed)
	}
	sub, ok := s.cfg.Manifest.Agents[target]
	if !ok {
		return forge.Identity{}, fmt.Errorf("agent %s is not in the policy manifest: %w", target, ErrNotAllowed)
	}
	if caller.Depth+1 > s.cfg.MaxDepth {
		return forge.Identity{}, fmt.Errorf("spawn depth %d exceeds the limit %d: %w", caller.Depth+1, s.cfg.MaxDepth, ErrNotAllowed)
	}
	tier := forge.TierFromManifest(sub.Tier)
	if caller.Tier != forge.TierWrite {
		tier = forge.TierRead // a child never gets more forge access than its parent
	}
	return forge.Identity{Agent: target, Tier: tier, Depth: caller.Depth + 1, Parent: caller.Agent}, nil
}

// acquire waits for a sandbox slot, bounded by MaxQueue waiters and
// QueueWait. It returns the release function or the status to refuse with.
func (s *Service) acquire(ctx context.Context) (func(), int, error) {
	if n := s.pending.Add(1); n > int64(s.cfg.MaxConcurrent+s.cfg.MaxQueue) {
		s.pending.Add(-1)
		return nil, http.StatusServiceUnavailable, fmt.Errorf("%d sandboxes running and %d queued: %w", s.cfg.MaxConcurrent, s.cfg.MaxQueue, ErrBusy)
	}
	t := time.NewTimer(s.cfg.QueueWait)
	defer t.Stop()
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots; s.pending.Add(-1) }, 0, nil
	case <-t.C:
		s.pending.Add(-1)
		return nil, http.StatusServiceUnavailable, fmt.Errorf("no sandbox slot within %s: %w", s.cfg.QueueWait, ErrBusy)
	case <-ctx.Done():
		s.pending.Add(-1)
		return nil, http.StatusServiceUnavailable, fmt.Errorf("caller went away while queued: %w", ErrBusy)
	case <-s.base.Done():
		s.pending.Add(-1)
		return nil, http.StatusServiceUnavailable, fmt.Errorf("service is shutting down: %w", ErrBusy)
	}
}

// run mints the child's token, runs it and answers with its result.
func (s *Service) run(w http.ResponseWriter, reqCtx context.Context, e *forge.AuditEntry, req RunAgentRequest, child forge.Identity) (int, string) {
	s.runs.Add(1)
	defer s.runs.Done()
	token, err := s.cfg.Registry.Mint(child)
	if err != nil {
		return refuse(w, http.StatusInternalServerError, "minting subagent token: "+err.Error())
	}
	defer s.cfg.Registry.Revoke(token)

	env := map[string]string{
		EnvAgent:      child.Agent,
		EnvRunID:      e.RequestID,
		EnvForgeURL:   s.cfg.ForgeURL,
		EnvAgentToken: token,
	}
	if s.cfg.SpawnURL != "" && len(s.cfg.Manifest.Agents[child.Agent].Spawns) > 0 && child.Depth < s.cfg.MaxDepth {
		env[EnvSpawnURL] = s.cfg.SpawnURL
	}
	ctx, cancel := context.WithTimeout(reqCtx, s.cfg.Timeout)
	defer cancel()
	stop := context.AfterFunc(s.base, cancel)
	defer stop()

	start := time.Now()
	res, err := s.cfg.Runner.Run(ctx, Request{
		ID: e.RequestID, Agent: child.Agent, Prompt: req.Prompt, Parent: child.Parent, Depth: child.Depth,
		Tier: s.cfg.Manifest.Agents[child.Agent].Tier, Env: env, Timeout: s.cfg.Timeout,
	})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return refuse(w, http.StatusGatewayTimeout, fmt.Sprintf("subagent %s timed out after %s", child.Agent, s.cfg.Timeout))
		}
		return refuse(w, http.StatusBadGateway, fmt.Sprintf("running subagent %s: %v", child.Agent, err))
	}
	code := res.ExitCode
	e.ExitCode = &code
	if len(res.Output) > s.cfg.MaxResultBytes {
		return refuse(w, http.StatusBadGateway, fmt.Sprintf("subagent %s output is larger than %d bytes", child.Agent, s.cfg.MaxResultBytes))
	}
	result := json.RawMessage(res.Output)
	if !json.Valid(result) {
		b, _ := json.Marshal(string(res.Output))
		result = b
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(RunAgentResponse{
		ID: e.RequestID, Agent: child.Agent, ExitCode: res.ExitCode, Result: result,
		DurationMS: time.Since(start).Milliseconds(),
	})
	reason := ""
	if res.ExitCode != 0 {
		reason = "subagent exited with status " + strconv.Itoa(res.ExitCode)
	}
	return http.StatusOK, reason
}

func refuse(w http.ResponseWriter, status int, reason string) (int, string) {
	forge.WriteError(w, status, "spawn_denied", reason)
	return status, reason
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
