package publish

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/fullsend-ai/agent-sandbox/sign"
)

// env is a getenv over a map.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// goldenOptions reproduce image's golden single-platform build (see
// image/build_test.go fixedOptions) through publish.Options.
func goldenOptions(t *testing.T) Options {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fullsend")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho fake fullsend for linux/amd64\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Options{
		Base: "scratch", Platforms: []string{"linux/amd64"},
		Binaries: []string{"linux/amd64=" + bin}, Dir: "../image/testdata/project",
		Version: "v1.2.3", Revision: "0123456789abcdef0123456789abcdef01234567",
		SourceURL: "https://github.com/fullsend-ai/agent-sandbox", CacheDir: t.TempDir(),
		ShaTag: true,
		Getenv: env(map[string]string{"SOURCE_DATE_EPOCH": "1700000000"}),
	}
}

func goldenDigest(t *testing.T, which string) string {
	t.Helper()
	data, err := os.ReadFile("../image/testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	golden := map[string]string{}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	return golden[which]
}

// keyDir holds the cosign key pair of the tests (see TestMain).
var keyDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "publish-test-key-")
	if err != nil {
		panic(err)
	}
	keyDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testKey is a cosign key pair written once per test binary.
var testKey = sync.OnceValues(func() (string, error) {
	prefix := filepath.Join(keyDir, "cosign")
	return prefix, sign.GenerateKeyPair(prefix+".key", prefix+".pub", []byte(testPassword))
})

const testPassword = "publish-test"

// keyed returns signing options for the test key with a fixed builder id.
func keyed(t *testing.T) *SignOptions {
	t.Helper()
	prefix, err := testKey()
	if err != nil {
		t.Fatal(err)
	}
	return &SignOptions{
		Key:        prefix + ".key",
		Password:   func() ([]byte, error) { return []byte(testPassword), nil },
		SBOM:       true,
		Provenance: true,
		BuilderID:  "https://ci.example/builder",
	}
}

func publicKey(t *testing.T) string {
	t.Helper()
	prefix, err := testKey()
	if err != nil {
		t.Fatal(err)
	}
	return prefix + ".pub"
}

// recorder is an in-process registry that records "METHOD PATH" of every
// request in order.
type recorder struct {
	mu   sync.Mutex
	reqs []string
	h    http.Handler
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req.Method+" "+req.URL.Path)
	r.mu.Unlock()
	r.h.ServeHTTP(w, req)
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}

func testRegistry(t *testing.T) (string, *recorder) {
	t.Helper()
	rec := &recorder{h: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), rec
}

// firstIndex returns the index of the first request for which match is
// true, or -1.
func firstIndex(reqs []string, match func(string) bool) int {
	for i, r := range reqs {
		if match(r) {
			return i
		}
	}
	return -1
}
