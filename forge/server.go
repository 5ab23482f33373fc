package forge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fullsend-ai/agent-sandbox/secretscan"
)

// DefaultListen is where compiled policies expect the proxy: the host as
// seen from inside a sandbox container.
const DefaultListen = "host.docker.internal:8081"

// Config configures a forge proxy.
type Config struct {
	// Kind is github (default) or gitlab.
	Kind Kind
	// Upstream is the forge API base URL; empty means the public API of Kind.
	Upstream string
	// Credential is the forge token. Required.
	Credential Credential
	// GitLabTokenHeader is PRIVATE-TOKEN (default) or JOB-TOKEN.
	GitLabTokenHeader string
	// Scope limits repository, issue, labels and body sizes.
	Scope Scope
	// Registry resolves agent bearer tokens. Required.
	Registry *Registry
	// Audit receives one entry per request; nil discards.
	Audit *Audit
	// UpstreamTimeout bounds each forge API call (default 30s).
	UpstreamTimeout time.Duration
	// MaxRequestBytes bounds request bodies (default 128 KiB).
	MaxRequestBytes int64
	// MaxResponseBytes bounds forge responses relayed to agents (default 8 MiB).
	MaxResponseBytes int64
	// MaxWrites bounds the writes forwarded over the proxy's lifetime, all
	// agents together (default 20): a prompt-injected orchestrator cannot
	// flood the issue with comments.
	MaxWrites int
	// Transport overrides the upstream transport (tests); nil builds one.
	Transport http.RoundTripper
	// ErrorLog receives HTTP server errors; nil discards them.
	ErrorLog *log.Logger
}

// Server is the forge proxy. Create it with New; it is an http.Handler.
type Server struct {
	cfg       Config
	backend   backend
	client    *http.Client
	transport *http.Transport // owned, closed on shutdown; nil when injected
	writes    atomic.Int64    // writes forwarded so far
}

// ErrNoCredential reports a proxy configured without the forge token it holds.
var ErrNoCredential = errors.New("no forge token")

// New validates cfg and returns a proxy.
func New(cfg Config) (*Server, error) {
	if err := cfg.complete(); err != nil {
		return nil, err
	}
	b, err := newBackend(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, backend: b}
	rt := cfg.Transport
	if rt == nil {
		s.transport = newTransport(cfg.UpstreamTimeout)
		rt = s.transport
	}
	s.client = &http.Client{
		Transport: rt,
		Timeout:   cfg.UpstreamTimeout,
		// Never follow a redirect: the proxy talks to one API and nothing else.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	secretscan.Default() // compile the secret rules now rather than on the first request
	return s, nil
}

// complete fills in the defaults of cfg and validates it.
func (cfg *Config) complete() error {
	if cfg.Kind == "" {
		cfg.Kind = GitHub
	}
	if cfg.Upstream == "" {
		cfg.Upstream = DefaultUpstream(cfg.Kind)
	}
	cfg.Upstream = strings.TrimRight(cfg.Upstream, "/")
	if cfg.Credential.IsZero() {
		return fmt.Errorf("forge proxy: %w", ErrNoCredential)
	}
	if cfg.Registry == nil {
		return errors.New("forge proxy: no agent token registry")
	}
	if err := cfg.Scope.Validate(); err != nil {
		return fmt.Errorf("forge proxy: %w", err)
	}
	if err := checkUpstream(cfg.Upstream); err != nil {
		return fmt.Errorf("forge proxy: %w", err)
	}
	cfg.UpstreamTimeout = positiveOr(cfg.UpstreamTimeout, 30*time.Second)
	cfg.MaxRequestBytes = positiveOr(cfg.MaxRequestBytes, 128<<10)
	cfg.MaxResponseBytes = positiveOr(cfg.MaxResponseBytes, 8<<20)
	cfg.MaxWrites = positiveOr(cfg.MaxWrites, 20)
	return nil
}

// positiveOr returns v, or def when v is not positive.
func positiveOr[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// newBackend returns the backend of the forge kind.
func newBackend(cfg Config) (backend, error) {
	switch cfg.Kind {
	case GitHub:
		return githubBackend{base: cfg.Upstream, owner: cfg.Scope.Owner, repo: cfg.Scope.Repo, credential: cfg.Credential}, nil
	case GitLab:
		h := cfg.GitLabTokenHeader
		if h == "" {
			h = "PRIVATE-TOKEN"
		}
		if h != "PRIVATE-TOKEN" && h != "JOB-TOKEN" {
			return nil, fmt.Errorf("forge proxy: GitLab token header %q: want PRIVATE-TOKEN or JOB-TOKEN", h)
		}
		return gitlabBackend{base: cfg.Upstream, owner: cfg.Scope.Owner, repo: cfg.Scope.Repo, credential: cfg.Credential, tokenHeader: h}, nil
	}
	return nil, fmt.Errorf("forge proxy: unknown forge kind %q (want github or gitlab)", cfg.Kind)
}

// newTransport is the proxy's own upstream transport.
func newTransport(responseTimeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: responseTimeout,
		ExpectContinueTimeout: time.Second,
	}
}

// checkUpstream requires an absolute http(s) URL without credentials, query
// or fragment; plain http only to loopback (tests, local fakes).
func checkUpstream(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("upstream %q: %w", raw, err)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Host == "" {
		return fmt.Errorf("upstream %q: want scheme://host[/path] without credentials, query or fragment", raw)
	}
	switch u.Scheme {
	case "https":
	case "http":
		ip := net.ParseIP(u.Hostname())
		if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return fmt.Errorf("upstream %q: plain http is only allowed to loopback (the token would travel in clear)", raw)
		}
	default:
		return fmt.Errorf("upstream %q: scheme must be https", raw)
	}
	return nil
}

// Registry returns the agent token registry, for minting.
func (s *Server) Registry() *Registry { return s.cfg.Registry }

// Serve serves the proxy on ln until ctx is cancelled, then shuts down
// gracefully (in-flight requests get up to 10 seconds) and releases the
// upstream connections. It returns nil after a clean shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return ServeHandler(ctx, ln, s, ServeOptions{
		WriteTimeout: s.cfg.UpstreamTimeout + 10*time.Second,
		ErrorLog:     s.cfg.ErrorLog,
		OnShutdown:   s.CloseIdle,
	})
}

// CloseIdle releases idle upstream connections.
func (s *Server) CloseIdle() {
	if s.transport != nil {
		s.transport.CloseIdleConnections()
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	e := AuditEntry{Service: "forge", RequestID: newRequestID(), Method: r.Method, Path: r.URL.EscapedPath()}
	status, forgeStatus, reason := s.handle(w, r, &e)
	e.Time = start.UTC()
	e.Status = status
	e.ForgeStatus = forgeStatus
	e.Reason = reason
	switch {
	case status < 400, forgeStatus != 0 && status == forgeStatus:
		// Allowed and forwarded; a forge error (say 404) is relayed as is
		// and recorded in forge_status and reason.
		e.Decision = DecisionAllow
	case forgeStatus != 0 || status >= 500:
		e.Decision = DecisionError
	default:
		e.Decision = DecisionDeny
	}
	e.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	s.cfg.Audit.Log(e)
}

// handle serves one request and returns the status sent, the forge status
// (0 when not forwarded) and the reason for the audit log.
func (s *Server) handle(w http.ResponseWriter, r *http.Request, e *AuditEntry) (int, int, string) {
	c, status, forgeStatus, reason := s.admit(w, r, e)
	if status != 0 {
		return status, forgeStatus, reason
	}
	return s.forward(w, r, c)
}

// admit checks a request against the route table, the caller's token and
// tier, the scope, the body rules and the write budget. It returns the call
// to forward, or the refusal already sent (a non-zero status).
func (s *Server) admit(w http.ResponseWriter, r *http.Request, e *AuditEntry) (call, int, int, string) {
	refuse := func(status, forgeStatus int, reason string) (call, int, int, string) {
		return call{}, status, forgeStatus, reason
	}
	rt, params, allow, err := Match(r.Method, r.URL.EscapedPath())
	switch {
	case errors.Is(err, ErrMethodNotAllowed):
		w.Header().Set("Allow", allow)
		return refuse(deny(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on this path"))
	case err != nil:
		return refuse(deny(w, http.StatusNotFound, "no such endpoint on the forge proxy"))
	}
	e.Route = rt.ID

	id, err := s.authenticate(r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fullsend-forge"`)
		return refuse(deny(w, http.StatusUnauthorized, err.Error()))
	}
	e.Agent = id.Agent
	if rt.Access == Write && id.Tier != TierWrite {
		return refuse(deny(w, http.StatusForbidden, fmt.Sprintf("agent %s has the %s tier and may not write", id.Agent, id.Tier)))
	}
	if err := s.cfg.Scope.checkParams(rt, params); err != nil {
		return refuse(denyErr(w, err))
	}
	query, err := s.cfg.Scope.checkQuery(rt, r.URL.RawQuery)
	if err != nil {
		return refuse(denyErr(w, err))
	}
	c := call{route: rt, params: params, query: query}
	if status, reason := s.readBody(w, r, &c); status != 0 {
		return refuse(deny(w, status, reason))
	}
	if rt.Access == Write && s.writes.Add(1) > int64(s.cfg.MaxWrites) {
		return refuse(deny(w, http.StatusTooManyRequests, fmt.Sprintf("write budget of %d exhausted", s.cfg.MaxWrites)))
	}
	return c, 0, 0, ""
}

// forward sends an admitted call to the forge and relays the answer.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, c call) (int, int, string) {
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.UpstreamTimeout)
	defer cancel()
	req, err := s.backend.request(ctx, c)
	if err != nil {
		return denyErr(w, err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		// url.Error carries the URL, never headers, so the token stays out.
		return deny(w, http.StatusBadGateway, "forge API unreachable: "+redactURLError(err))
	}
	defer resp.Body.Close()
	body, reason := s.upstreamBody(c, resp)
	if reason != "" {
		return fail(w, http.StatusBadGateway, resp.StatusCode, reason)
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" || s.cfg.Kind == GitLab {
		ct = "application/json; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
	if resp.StatusCode >= 400 {
		reason = "forge API answered " + resp.Status
	}
	return resp.StatusCode, resp.StatusCode, reason
}

// upstreamBody reads the forge's answer within the size limit, withholds it
// when it holds the forge token, and converts a success to the GitHub shape.
// A non-empty reason says why the answer is not relayed.
func (s *Server) upstreamBody(c call, resp *http.Response) ([]byte, string) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.cfg.MaxResponseBytes+1))
	if err != nil {
		return nil, "reading forge response: " + redactURLError(err)
	}
	if int64(len(body)) > s.cfg.MaxResponseBytes {
		return nil, fmt.Sprintf("forge response is larger than %d bytes", s.cfg.MaxResponseBytes)
	}
	if s.cfg.Credential.appearsIn(body) {
		return nil, "forge response contained the forge token; withheld"
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if body, err = s.backend.response(c, body); err != nil {
			return nil, err.Error()
		}
		// The converted body is what the agent gets: check it as well.
		if s.cfg.Credential.appearsIn(body) {
			return nil, "converted forge response contained the forge token; withheld"
		}
	}
	return body, ""
}

// authenticate resolves the caller's bearer token.
func (s *Server) authenticate(r *http.Request) (Identity, error) {
	tok, ok := BearerToken(r)
	if !ok {
		return Identity{}, errors.New("missing bearer token")
	}
	id, err := s.cfg.Registry.Lookup(tok)
	if err != nil {
		return Identity{}, errors.New("invalid bearer token")
	}
	return id, nil
}

// BearerToken extracts the token of an `Authorization: Bearer T` (or GitHub's
// `token T`) header.
func BearerToken(r *http.Request) (string, bool) {
	h := r.Header.Values("Authorization")
	if len(h) != 1 {
		return "", false
	}
	scheme, tok, ok := strings.Cut(h[0], " ")
	if !ok || (!strings.EqualFold(scheme, "bearer") && !strings.EqualFold(scheme, "token")) {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// readBody enforces the body rules: none on GETs; on writes a JSON body
// within the size limit that decodes strictly and carries no credential.
// It returns a non-zero status to refuse.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, c *call) (int, string) {
	if c.route.Access == Read {
		if r.ContentLength > 0 || len(r.TransferEncoding) > 0 {
			return http.StatusBadRequest, "GET requests take no body"
		}
		return 0, ""
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return http.StatusUnsupportedMediaType, "write bodies must be application/json"
	}
	if r.ContentLength > s.cfg.MaxRequestBytes {
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("body is %d bytes, the limit is %d", r.ContentLength, s.cfg.MaxRequestBytes)
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxRequestBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return http.StatusRequestEntityTooLarge, fmt.Sprintf("body is larger than %d bytes", s.cfg.MaxRequestBytes)
		}
		return http.StatusBadRequest, "reading body: " + err.Error()
	}
	if s.cfg.Credential.appearsIn(raw) {
		return http.StatusForbidden, "refusing to post a credential (the forge token)"
	}
	return s.writeBody(c, raw)
}

// writeBody decodes the body of a comment or label write strictly into c
// and refuses text that holds a credential.
func (s *Server) writeBody(c *call, raw []byte) (int, string) {
	var text string
	var err error
	switch c.route.ID {
	case CommentCreate:
		c.comment, err = s.cfg.Scope.decodeComment(raw)
		text = c.comment
	case LabelsAdd:
		c.labels, err = s.cfg.Scope.decodeLabels(raw)
		text = strings.Join(c.labels, "\n")
	}
	if err != nil {
		return statusOf(err), err.Error()
	}
	if s.cfg.Credential.appearsIn([]byte(text)) {
		return http.StatusForbidden, "refusing to post a credential (the forge token)"
	}
	if p := ScanSecrets(text); p != "" {
		return http.StatusForbidden, "refusing to post a credential (matched pattern " + p + ")"
	}
	return 0, ""
}

func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrScope):
		return http.StatusForbidden
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// proxyError is the JSON body of every refusal, shaped like a GitHub error.
type proxyError struct {
	Message string `json:"message"`
	Error   string `json:"error"`
}

// deniedCode is the error code of every proxy refusal.
const deniedCode = "forge_proxy_denied"

func deny(w http.ResponseWriter, status int, reason string) (int, int, string) {
	WriteError(w, status, deniedCode, reason)
	return status, 0, reason
}

func denyErr(w http.ResponseWriter, err error) (int, int, string) {
	return deny(w, statusOf(err), err.Error())
}

func fail(w http.ResponseWriter, status, forgeStatus int, reason string) (int, int, string) {
	WriteError(w, status, deniedCode, reason)
	return status, forgeStatus, reason
}

// WriteError writes a JSON refusal shaped like a GitHub error:
// {"message": reason, "error": code}.
func WriteError(w http.ResponseWriter, status int, code, reason string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(proxyError{Message: reason, Error: code})
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
