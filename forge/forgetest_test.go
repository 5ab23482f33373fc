package forge

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testForgeToken is the fake forge token every test proxy holds. Tests grep
// for it in everything an agent or a log can see.
const testForgeToken = "ghs_TESTforgeTOKENdoNotLeak0123456789abcd"

// escapedForgeToken is testForgeToken with its first letter JSON-escaped.
var escapedForgeToken = `\u0067` + testForgeToken[1:]

// recorded is one request the fake forge API received.
type recorded struct {
	Method, Path, RawPath, Query, Auth, PrivateToken, Body string
}

// fakeForge is a recording stand-in for the GitHub or GitLab API.
type fakeForge struct {
	mu   sync.Mutex
	reqs []recorded
	srv  *httptest.Server
}

func newFakeForge(t testing.TB) *fakeForge {
	t.Helper()
	f := &fakeForge{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeForge) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{r.Method, r.URL.Path, r.URL.RawPath, r.URL.RawQuery,
		r.Header.Get("Authorization"), r.Header.Get("PRIVATE-TOKEN"), string(b)})
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/projects/"): // GitLab
		switch {
		case strings.HasSuffix(p, "/notes") && r.Method == "POST":
			w.WriteHeader(201)
			io.WriteString(w, `{"id":7,"body":"ok","author":{"username":"bot"},"system":false}`)
		case strings.HasSuffix(p, "/notes"):
			io.WriteString(w, `[{"id":1,"body":"hi","author":{"username":"a"},"system":false},{"id":2,"body":"added label","system":true}]`)
		case strings.HasSuffix(p, "/issues/667"): // the token JSON-escaped, which the conversion decodes
			io.WriteString(w, `{"iid":667,"description":"`+escapedForgeToken+`","state":"opened"}`)
		case strings.HasSuffix(p, "/issues"):
			io.WriteString(w, `[{"iid":3,"title":"t","description":"d","state":"opened","labels":["bug"],"author":{"username":"u"}}]`)
		default:
			io.WriteString(w, `{"iid":42,"title":"t","description":"d","state":"opened","labels":["bug","triaged"],"author":{"username":"u"},"user_notes_count":2}`)
		}
	case p == "/search/issues":
		io.WriteString(w, `{"total_count":1,"incomplete_results":false,"items":[{"number":3}]}`)
	case strings.HasSuffix(p, "/comments") && r.Method == "POST":
		w.WriteHeader(201)
		io.WriteString(w, `{"id":1}`)
	case strings.HasSuffix(p, "/comments"):
		io.WriteString(w, `[]`)
	case strings.HasSuffix(p, "/labels"):
		io.WriteString(w, `[{"name":"bug"}]`)
	case strings.HasSuffix(p, "/issues"):
		io.WriteString(w, `[]`)
	case strings.HasSuffix(p, "/issues/404"):
		w.WriteHeader(404)
		io.WriteString(w, `{"message":"Not Found"}`)
	case strings.HasSuffix(p, "/issues/667"): // the token JSON-escaped
		io.WriteString(w, `{"body":"`+escapedForgeToken+`"}`)
	case strings.HasSuffix(p, "/issues/666"): // a forge echoing the token back
		io.WriteString(w, `{"body":"`+testForgeToken+`"}`)
	default:
		io.WriteString(w, `{"number":42,"title":"crash on start"}`)
	}
}

func (f *fakeForge) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// testProxy is a proxy in front of a fake forge, with one read and one write
// agent token minted.
type testProxy struct {
	forge    *fakeForge
	server   *Server
	url      string
	audit    *bytes.Buffer
	auditMu  *sync.Mutex
	client   *http.Client
	reader   string
	writer   string
	registry *Registry
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func testScope() Scope {
	return Scope{Owner: "acme", Repo: "widgets", Issue: 42, Labels: []string{"bug", "duplicate", "needs-info", "triaged"}, MaxCommentBytes: 1024}
}

func newTestProxy(t testing.TB, kind Kind) *testProxy {
	t.Helper()
	ff := newFakeForge(t)
	cred, err := NewCredential(testForgeToken)
	if err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry()
	buf, mu := &bytes.Buffer{}, &sync.Mutex{}
	srv, err := New(Config{Kind: kind, Upstream: ff.srv.URL, Credential: cred, Scope: testScope(),
		Registry: reg, Audit: NewAudit(lockedBuffer{mu, buf}), UpstreamTimeout: 5 * time.Second, MaxRequestBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewServer(srv)
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		ps.Close()
		srv.CloseIdle()
	})
	rd, err := reg.Mint(Identity{Agent: "duplicate-detector", Tier: TierRead, Depth: 1, Parent: "triage"})
	if err != nil {
		t.Fatal(err)
	}
	wr, err := reg.Mint(Identity{Agent: "triage", Tier: TierWrite})
	if err != nil {
		t.Fatal(err)
	}
	return &testProxy{forge: ff, server: srv, url: ps.URL, audit: buf, auditMu: mu, client: &http.Client{Transport: tr},
		reader: rd, writer: wr, registry: reg}
}

func (p *testProxy) do(t testing.TB, method, path, token, ctype, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, p.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		req.Body = nil
		req.ContentLength = 0
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (p *testProxy) auditEntries(t testing.TB) []AuditEntry {
	t.Helper()
	p.auditMu.Lock()
	defer p.auditMu.Unlock()
	var out []AuditEntry
	dec := json.NewDecoder(bytes.NewReader(p.audit.Bytes()))
	for dec.More() {
		var e AuditEntry
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("audit log is not JSON lines: %v", err)
		}
		out = append(out, e)
	}
	return out
}

func (p *testProxy) auditText() string {
	p.auditMu.Lock()
	defer p.auditMu.Unlock()
	return p.audit.String()
}
