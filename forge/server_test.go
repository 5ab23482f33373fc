package forge

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestProxyGitHub(t *testing.T) {
	big := `{"body":"` + strings.Repeat("a", 5000) + `"}`
	tests := []struct {
		name       string
		method     string
		path       string
		token      string // "reader", "writer", "" or a literal
		ctype      string
		body       string
		wantStatus int
		wantFwd    string // upstream method+path+?query, "" when nothing may be forwarded
		wantBody   string // upstream body
	}{
		{name: "get issue", method: "GET", path: "/repos/acme/widgets/issues/7", token: "reader", wantStatus: 200,
			wantFwd: "GET /repos/acme/widgets/issues/7"},
		{name: "owner case folds to configured spelling", method: "GET", path: "/repos/ACME/Widgets/issues/7", token: "reader", wantStatus: 200,
			wantFwd: "GET /repos/acme/widgets/issues/7"},
		{name: "forge 404 is relayed", method: "GET", path: "/repos/acme/widgets/issues/404", token: "reader", wantStatus: 404,
			wantFwd: "GET /repos/acme/widgets/issues/404"},
		{name: "list issues with paging", method: "GET", path: "/repos/acme/widgets/issues?state=open&per_page=50", token: "reader", wantStatus: 200,
			wantFwd: "GET /repos/acme/widgets/issues?per_page=50&state=open"},
		{name: "search is scoped", method: "GET", path: "/search/issues?q=crash+on+start+is:open", token: "reader", wantStatus: 200,
			wantFwd: "GET /search/issues?q=crash+on+start+is%3Aopen+repo%3Aacme%2Fwidgets"},
		{name: "search with own repo keeps one repo qualifier", method: "GET", path: "/search/issues?q=repo:acme/widgets+crash", token: "reader", wantStatus: 200,
			wantFwd: "GET /search/issues?q=crash+repo%3Aacme%2Fwidgets"},
		{name: "list comments", method: "GET", path: "/repos/acme/widgets/issues/9/comments", token: "reader", wantStatus: 200,
			wantFwd: "GET /repos/acme/widgets/issues/9/comments"},
		{name: "writer comments", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "writer", ctype: "application/json",
			body: `{"body":"Looks like a duplicate of #3."}`, wantStatus: 201,
			wantFwd: "POST /repos/acme/widgets/issues/42/comments", wantBody: `{"body":"Looks like a duplicate of #3."}`},
		{name: "writer labels bare array", method: "POST", path: "/repos/acme/widgets/issues/42/labels", token: "writer", ctype: "application/json",
			body: `["duplicate"]`, wantStatus: 200, wantFwd: "POST /repos/acme/widgets/issues/42/labels", wantBody: `{"labels":["duplicate"]}`},
		{name: "writer labels object", method: "POST", path: "/repos/acme/widgets/issues/42/labels", token: "writer", ctype: "application/json; charset=utf-8",
			body: `{"labels":["bug","triaged"]}`, wantStatus: 200, wantFwd: "POST /repos/acme/widgets/issues/42/labels", wantBody: `{"labels":["bug","triaged"]}`},

		// Abuse: every one is refused before anything reaches the forge.
		{name: "no token", method: "GET", path: "/repos/acme/widgets/issues/7", wantStatus: 401},
		{name: "wrong token", method: "GET", path: "/repos/acme/widgets/issues/7", token: "fsa_not-a-minted-token", wantStatus: 401},
		{name: "forge token itself is not an agent token", method: "GET", path: "/repos/acme/widgets/issues/7", token: testForgeToken, wantStatus: 401},
		{name: "another repo", method: "GET", path: "/repos/acme/secrets/issues/7", token: "reader", wantStatus: 403},
		{name: "another owner", method: "GET", path: "/repos/evil/widgets/issues", token: "writer", wantStatus: 403},
		{name: "read-only agent posts a comment", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "reader", ctype: "application/json",
			body: `{"body":"hi"}`, wantStatus: 403},
		{name: "read-only agent adds a label", method: "POST", path: "/repos/acme/widgets/issues/42/labels", token: "reader", ctype: "application/json",
			body: `["bug"]`, wantStatus: 403},
		{name: "another issue number", method: "POST", path: "/repos/acme/widgets/issues/43/comments", token: "writer", ctype: "application/json",
			body: `{"body":"hi"}`, wantStatus: 403},
		{name: "another repo write", method: "POST", path: "/repos/acme/other/issues/42/comments", token: "writer", ctype: "application/json",
			body: `{"body":"hi"}`, wantStatus: 403},
		{name: "oversized body", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "writer", ctype: "application/json",
			body: big, wantStatus: 413},
		{name: "comment over the comment limit", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "writer", ctype: "application/json",
			body: `{"body":"` + strings.Repeat("a", 2000) + `"}`, wantStatus: 400},
		{name: "body with a ghp token", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "writer", ctype: "application/json",
			body: `{"body":"here: ghp_abcdefghijklmnopqrstuvwxyz0123456789"}`, wantStatus: 403},
		{name: "json-escaped ghp token", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "writer", ctype: "application/json",
			body: `{"body":"here: \u0067hp_abcdefghijklmnopqrstuvwxyz0123456789"}`, wantStatus: 403},
		{name: "the forge token itself", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "writer", ctype: "application/json",
			body: `{"body":"` + testForgeToken + `"}`, wantStatus: 403},
		{name: "a pem private key", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "writer", ctype: "application/json",
			body: `{"body":"-----BEGIN OPENSSH PRIVATE KEY-----\nabc"}`, wantStatus: 403},
		{name: "an aws key id", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "writer", ctype: "application/json",
			body: `{"body":"AKIAIOSFODNN7EXAMPLE"}`, wantStatus: 403},
		{name: "a gitlab token", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "writer", ctype: "application/json",
			body: `{"body":"glpat-abcdefghij0123456789"}`, wantStatus: 403},
		{name: "label not in allowlist", method: "POST", path: "/repos/acme/widgets/issues/42/labels", token: "writer", ctype: "application/json",
			body: `["wontfix"]`, wantStatus: 403},
		{name: "unknown body field", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "writer", ctype: "application/json",
			body: `{"body":"hi","issue":1}`, wantStatus: 400},
		{name: "trailing json", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "writer", ctype: "application/json",
			body: `{"body":"hi"}{"body":"x"}`, wantStatus: 400},
		{name: "not json content type", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: "writer", ctype: "text/plain",
			body: `{"body":"hi"}`, wantStatus: 415},
		{name: "get with a body", method: "GET", path: "/repos/acme/widgets/issues/7", token: "reader", body: "x", wantStatus: 400},
		{name: "unknown endpoint", method: "GET", path: "/user", token: "writer", wantStatus: 404},
		{name: "delete", method: "DELETE", path: "/repos/acme/widgets/issues/42/labels", token: "writer", wantStatus: 405},
		{name: "patch issue", method: "PATCH", path: "/repos/acme/widgets/issues/42", token: "writer", ctype: "application/json", body: `{"state":"closed"}`, wantStatus: 405},
		{name: "dot-dot path", method: "GET", path: "/repos/acme/widgets/issues/../../other/issues/1", token: "reader", wantStatus: 404},
		{name: "encoded slash", method: "GET", path: "/repos/acme%2Fwidgets/issues/1", token: "reader", wantStatus: 404},
		{name: "leading zero number", method: "GET", path: "/repos/acme/widgets/issues/042", token: "reader", wantStatus: 404},
		{name: "unknown query parameter", method: "GET", path: "/repos/acme/widgets/issues?creator=x", token: "reader", wantStatus: 400},
		{name: "per_page too big", method: "GET", path: "/repos/acme/widgets/issues?per_page=1000", token: "reader", wantStatus: 400},
		{name: "search another repo", method: "GET", path: "/search/issues?q=crash+repo:acme/secrets", token: "reader", wantStatus: 403},
		{name: "search an org", method: "GET", path: "/search/issues?q=crash+org:acme", token: "reader", wantStatus: 403},
		{name: "search with OR", method: "GET", path: "/search/issues?q=crash+OR+token", token: "reader", wantStatus: 403},
		{name: "search without q", method: "GET", path: "/search/issues", token: "reader", wantStatus: 400},
		{name: "duplicated q", method: "GET", path: "/search/issues?q=a&q=b", token: "reader", wantStatus: 400},
	}
	p := newTestProxy(t, GitHub)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(p.forge.requests())
			tok := map[string]string{"reader": p.reader, "writer": p.writer}[tc.token]
			if tok == "" {
				tok = tc.token
			}
			status, body := p.do(t, tc.method, tc.path, tok, tc.ctype, tc.body)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d; body %s", status, tc.wantStatus, body)
			}
			reqs := p.forge.requests()[before:]
			if tc.wantFwd == "" {
				if len(reqs) != 0 {
					t.Fatalf("refused request reached the forge: %+v", reqs)
				}
				var pe proxyError
				if err := json.Unmarshal([]byte(body), &pe); err != nil || pe.Error != "forge_proxy_denied" || pe.Message == "" {
					t.Fatalf("refusal body %q is not a proxy error", body)
				}
				return
			}
			if len(reqs) != 1 {
				t.Fatalf("forge got %d requests, want 1", len(reqs))
			}
			got := reqs[0].Method + " " + reqs[0].Path
			if reqs[0].Query != "" {
				got += "?" + reqs[0].Query
			}
			if got != tc.wantFwd {
				t.Errorf("forwarded %q, want %q", got, tc.wantFwd)
			}
			if reqs[0].Auth != "Bearer "+testForgeToken {
				t.Errorf("forge got Authorization %q, want the forge token", reqs[0].Auth)
			}
			if reqs[0].Body != tc.wantBody {
				t.Errorf("forge got body %q, want %q", reqs[0].Body, tc.wantBody)
			}
		})
	}

	t.Run("audit", func(t *testing.T) {
		entries := p.auditEntries(t)
		if len(entries) != len(tests) {
			t.Fatalf("%d audit entries, want %d", len(entries), len(tests))
		}
		for i, e := range entries {
			if e.Service != "forge" || e.Method == "" || e.Path == "" || e.Decision == "" || e.Status == 0 || e.Time.IsZero() {
				t.Errorf("entry %d incomplete: %+v", i, e)
			}
			if forwarded := e.ForgeStatus != 0; forwarded != (e.Decision == DecisionAllow) {
				t.Errorf("entry %d: forge status %d with decision %s", i, e.ForgeStatus, e.Decision)
			}
			if e.ForgeStatus == 404 && (e.Status != 404 || e.Reason == "") {
				t.Errorf("entry %d: relayed forge error not recorded: %+v", i, e)
			}
			if e.Decision == DecisionDeny && e.Reason == "" {
				t.Errorf("entry %d: denial without reason", i)
			}
			if e.Decision == DecisionAllow && e.ForgeStatus == 0 {
				t.Errorf("entry %d: allowed without forge status", i)
			}
		}
		assertNoSecret(t, "audit log", p.auditText(), p.reader, p.writer)
	})
}

// assertNoSecret fails when text holds the forge token or an agent token.
func assertNoSecret(t *testing.T, what, text string, agentTokens ...string) {
	t.Helper()
	if strings.Contains(text, testForgeToken) {
		t.Errorf("%s contains the forge token", what)
	}
	for _, tok := range agentTokens {
		if strings.Contains(text, tok) {
			t.Errorf("%s contains an agent token", what)
		}
	}
}

func TestProxyWithholdsResponseHoldingToken(t *testing.T) {
	p := newTestProxy(t, GitHub)
	status, body := p.do(t, "GET", "/repos/acme/widgets/issues/666", p.reader, "", "")
	if status != http.StatusBadGateway {
		t.Fatalf("status %d, want 502", status)
	}
	assertNoSecret(t, "response", body)
	assertNoSecret(t, "audit log", p.auditText())
	if e := p.auditEntries(t); len(e) != 1 || e[0].Decision != DecisionError || e[0].ForgeStatus != 200 {
		t.Fatalf("audit %+v", e)
	}
}

func TestRevokedTokenIsRefused(t *testing.T) {
	p := newTestProxy(t, GitHub)
	p.registry.Revoke(p.reader)
	if status, _ := p.do(t, "GET", "/repos/acme/widgets/issues/7", p.reader, "", ""); status != http.StatusUnauthorized {
		t.Fatalf("revoked token: status %d, want 401", status)
	}
}

func TestProxyGitLab(t *testing.T) {
	p := newTestProxy(t, GitLab)
	tests := []struct {
		name, method, path, token, body string
		wantStatus                      int
		wantFwd, wantBody, wantResp     string
	}{
		{name: "get issue", method: "GET", path: "/repos/acme/widgets/issues/42", token: p.reader, wantStatus: 200,
			wantFwd: "GET /projects/acme%2Fwidgets/issues/42", wantResp: `"number":42`},
		{name: "list", method: "GET", path: "/repos/acme/widgets/issues?state=open&sort=updated", token: p.reader, wantStatus: 200,
			wantFwd: "GET /projects/acme%2Fwidgets/issues?order_by=updated_at&state=opened", wantResp: `"state":"open"`},
		{name: "search", method: "GET", path: "/search/issues?q=crash+label:bug+is:open", token: p.reader, wantStatus: 200,
			wantFwd: "GET /projects/acme%2Fwidgets/issues?labels=bug&search=crash&state=opened", wantResp: `"total_count":1`},
		{name: "comments drop system notes", method: "GET", path: "/repos/acme/widgets/issues/42/comments", token: p.reader, wantStatus: 200,
			wantFwd: "GET /projects/acme%2Fwidgets/issues/42/notes", wantResp: `[{"id":1,"body":"hi","user":{"login":"a"},"created_at":"","updated_at":""}]`},
		{name: "comment", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: p.writer, body: `{"body":"dup of #3"}`, wantStatus: 201,
			wantFwd: "POST /projects/acme%2Fwidgets/issues/42/notes", wantBody: `{"body":"dup of #3"}`, wantResp: `"id":7`},
		{name: "labels", method: "POST", path: "/repos/acme/widgets/issues/42/labels", token: p.writer, body: `["duplicate","triaged"]`, wantStatus: 200,
			wantFwd: "PUT /projects/acme%2Fwidgets/issues/42", wantBody: `{"add_labels":"duplicate,triaged"}`, wantResp: `[{"name":"bug"},{"name":"triaged"}]`},
		{name: "search sorted", method: "GET", path: "/search/issues?q=crash&sort=updated&order=asc", token: p.reader, wantStatus: 200,
			wantFwd: "GET /projects/acme%2Fwidgets/issues?order_by=updated_at&search=crash&sort=asc", wantResp: `"items":[`},
		{name: "search bad sort", method: "GET", path: "/search/issues?q=crash&sort=reactions", token: p.reader, wantStatus: 400},
		{name: "unsupported search qualifier", method: "GET", path: "/search/issues?q=crash+author:bob", token: p.reader, wantStatus: 400},
		{name: "reader write refused", method: "POST", path: "/repos/acme/widgets/issues/42/comments", token: p.reader, body: `{"body":"x"}`, wantStatus: 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(p.forge.requests())
			ctype := ""
			if tc.body != "" {
				ctype = "application/json"
			}
			status, resp := p.do(t, tc.method, tc.path, tc.token, ctype, tc.body)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", status, tc.wantStatus, resp)
			}
			reqs := p.forge.requests()[before:]
			if tc.wantFwd == "" {
				if len(reqs) != 0 {
					t.Fatalf("refused request reached the forge: %+v", reqs)
				}
				return
			}
			if len(reqs) != 1 {
				t.Fatalf("forge got %d requests", len(reqs))
			}
			r := reqs[0]
			path := r.RawPath
			if path == "" {
				path = r.Path
			}
			got := r.Method + " " + path
			if r.Query != "" {
				got += "?" + r.Query
			}
			if got != tc.wantFwd {
				t.Errorf("forwarded %q, want %q", got, tc.wantFwd)
			}
			if r.PrivateToken != testForgeToken || r.Auth != "" {
				t.Errorf("forge got PRIVATE-TOKEN %q Authorization %q", r.PrivateToken, r.Auth)
			}
			if r.Body != tc.wantBody {
				t.Errorf("forge got body %q, want %q", r.Body, tc.wantBody)
			}
			if !strings.Contains(resp, tc.wantResp) {
				t.Errorf("response %s does not contain %s", resp, tc.wantResp)
			}
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	cred, _ := NewCredential(testForgeToken)
	ok := Config{Credential: cred, Registry: NewRegistry(), Scope: testScope(), Upstream: "https://api.github.com"}
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no token", func(c *Config) { c.Credential = Credential{} }, "no forge token"},
		{"no registry", func(c *Config) { c.Registry = nil }, "registry"},
		{"bad repo", func(c *Config) { c.Scope.Repo = "../x" }, "not a valid owner/repo"},
		{"http to a remote host", func(c *Config) { c.Upstream = "http://api.github.com" }, "only allowed to loopback"},
		{"credentials in url", func(c *Config) { c.Upstream = "https://u:p@api.github.com" }, "without credentials"},
		{"ftp", func(c *Config) { c.Upstream = "ftp://x" }, "scheme must be https"},
		{"kind", func(c *Config) { c.Kind = "gitea" }, "unknown forge kind"},
		{"gitlab header", func(c *Config) { c.Kind = GitLab; c.GitLabTokenHeader = "Authorization" }, "PRIVATE-TOKEN or JOB-TOKEN"},
		{"bad label", func(c *Config) { c.Scope.Labels = []string{"a,b"} }, "label"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			_, err := New(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), testForgeToken) {
				t.Fatal("error reveals the token")
			}
		})
	}
	if _, err := New(ok); err != nil {
		t.Fatalf("valid config: %v", err)
	}
}

func TestWriteBudget(t *testing.T) {
	p := newTestProxy(t, GitHub)
	p.server.cfg.MaxWrites = 2
	var got []int
	for range 3 {
		s, _ := p.do(t, "POST", "/repos/acme/widgets/issues/42/comments", p.writer, "application/json", `{"body":"hi"}`)
		got = append(got, s)
	}
	if got[0] != 201 || got[1] != 201 || got[2] != http.StatusTooManyRequests {
		t.Fatalf("statuses %v, want 201 201 429", got)
	}
	if n := len(p.forge.requests()); n != 2 {
		t.Fatalf("forge got %d writes, want 2", n)
	}
}

func TestServeGracefulShutdown(t *testing.T) {
	ff := newFakeForge(t)
	cred, _ := NewCredential(testForgeToken)
	reg := NewRegistry()
	srv, err := New(Config{Upstream: ff.srv.URL, Credential: cred, Scope: testScope(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := reg.Mint(Identity{Agent: "triage", Tier: TierRead})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- srv.Serve(ctx, ln) }()
	tr := &http.Transport{}
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/repos/acme/widgets/issues/7", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tr.CloseIdleConnections()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve after cancel: %v", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("still accepting after shutdown")
	}
}
