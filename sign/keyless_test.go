package sign

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/sigstore/sigstore/pkg/signature"
)

func TestDiscoverIDToken(t *testing.T) {
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer request-token" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		if r.URL.Query().Get("audience") != "sigstore" {
			http.Error(w, "audience", http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(`{"value":"gh-oidc-token"}`))
	}))
	t.Cleanup(gh.Close)
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr error
		errText string
	}{
		{"gitlab id_tokens", map[string]string{"SIGSTORE_ID_TOKEN": " gl-token\n"}, "gl-token", nil, ""},
		{"github token service", map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": gh.URL + "/token?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token"}, "gh-oidc-token", nil, ""},
		{"github without id-token permission", map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": gh.URL + "/token", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "wrong"}, "", nil, "id-token: write"},
		{"nothing", map[string]string{}, "", ErrNoIDToken, "SIGSTORE_ID_TOKEN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DiscoverIDToken(context.Background(), func(k string) string { return tc.env[k] }, gh.Client())
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) || !strings.Contains(err.Error(), tc.errText) {
				t.Fatalf("got %q, %v; want error %v containing %q", got, err, tc.wantErr, tc.errText)
			}
			if strings.Contains(err.Error(), "request-token") || strings.Contains(err.Error(), "wrong") {
				t.Fatalf("error leaks a token: %v", err)
			}
		})
	}
}

func TestKMSRefWithoutProvider(t *testing.T) {
	// No provider is linked and no sigstore-kms-nosuch plugin is on PATH.
	t.Setenv("PATH", t.TempDir())
	_, err := LoadPrivateKey(context.Background(), "nosuch://key", nil)
	if err == nil || !strings.Contains(err.Error(), "no kms provider found") {
		t.Fatalf("got %v, want a missing-provider error", err)
	}
}

// TestSignIndex: a multi-platform index is signed (and its SBOM covers
// every platform image) like a single image.
func TestSignIndex(t *testing.T) {
	ctx := context.Background()
	repo, _ := name.NewRepository(testRegistry(t) + "/fullsend/index")
	idx, err := random.Index(128, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := idx.Digest()
	ref := repo.Digest(h.String())
	if err := remoteWriteIndex(ref, idx); err != nil {
		t.Fatal(err)
	}
	_, pub, sv := testKeys(t)
	s, _ := NewKeyed(sv)
	sd, err := s.Sign(ctx, Subject{Repository: repo, Index: idx}, Options{Claims: testClaims(), SBOM: &SBOMOptions{Paths: []string{""}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sd.Push(ctx); err != nil {
		t.Fatal(err)
	}
	v, _ := LoadPublicKey(ctx, pub)
	e, err := OpenRemote(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	trust := Trust{Keys: []signature.Verifier{v}}
	if _, err := e.CheckSignatures(ctx, trust, nil); err != nil {
		t.Fatal(err)
	}
	atts, err := e.CheckAttestations(ctx, trust, PredicateSPDX, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(atts[0].Statement.Predicate), `"SPDXRef-File-`); n < 2*2 {
		t.Errorf("SBOM lists %d file ids, want the files of both platform images", n)
	}
	if _, err := (Subject{Repository: repo}).Digest(); !errors.Is(err, ErrNoSubject) {
		t.Errorf("empty subject: %v", err)
	}
}
