package forge

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// staticTransport answers every upstream request in memory, so the benchmark
// measures the proxy's own work.
type staticTransport struct{}

func (staticTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"number":42,"title":"crash on start"}`)), Request: r}, nil
}

func benchServer(b *testing.B) (*Server, string, string) {
	cred, _ := NewCredential(testForgeToken)
	reg := NewRegistry()
	s, err := New(Config{Upstream: "https://forge.invalid", Credential: cred, Scope: testScope(), Registry: reg,
		Audit: NewAudit(io.Discard), Transport: staticTransport{}, MaxWrites: math.MaxInt})
	if err != nil {
		b.Fatal(err)
	}
	rd, _ := reg.Mint(Identity{Agent: "duplicate-detector", Tier: TierRead})
	wr, _ := reg.Mint(Identity{Agent: "triage", Tier: TierWrite})
	return s, rd, wr
}

func BenchmarkHandlerGetIssue(b *testing.B) {
	s, rd, _ := benchServer(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("GET", "/repos/acme/widgets/issues/7", nil)
			req.Header.Set("Authorization", "Bearer "+rd)
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatalf("status %d", w.Code)
			}
		}
	})
}

func BenchmarkHandlerSearch(b *testing.B) {
	s, rd, _ := benchServer(b)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("GET", `/search/issues?q=crash+on+start+is:open+label:"needs+info"`, nil)
		req.Header.Set("Authorization", "Bearer "+rd)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("status %d", w.Code)
		}
	}
}

func BenchmarkHandlerComment(b *testing.B) {
	s, _, wr := benchServer(b)
	body := `{"body":"` + strings.Repeat("This looks like a duplicate of #3. ", 25) + `"}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/repos/acme/widgets/issues/42/comments", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+wr)
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// BenchmarkScanSecrets measures the outgoing-text scan alone: a clean
// comment (the common case), one with Markdown (scanned a second time as
// rendered) and one with a newline-split key.
func BenchmarkScanSecrets(b *testing.B) {
	comment := strings.Repeat("This looks like a duplicate of #3. ", 25)
	for name, text := range map[string]string{
		"clean":     comment,
		"markdown":  strings.Repeat("This looks like a **duplicate** of [#3](https://x/3), see `log`. ", 15),
		"split-key": comment + anthropicKey[:40] + "\n" + anthropicKey[40:],
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ScanSecrets(text)
			}
		})
	}
}
