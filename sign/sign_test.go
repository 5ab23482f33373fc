package sign

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

const testPassword = "correct horse battery staple"

// testRegistry starts go-containerregistry's in-process registry on loopback.
func testRegistry(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(nopLogger())))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// testKeys generates a cosign key pair in a temp dir and loads it.
func testKeys(t testing.TB) (priv, pub string, sv signature.SignerVerifier) {
	t.Helper()
	dir := t.TempDir()
	priv, pub = filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	if err := GenerateKeyPair(priv, pub, []byte(testPassword)); err != nil {
		t.Fatal(err)
	}
	sv, err := LoadPrivateKey(context.Background(), priv, []byte(testPassword))
	if err != nil {
		t.Fatal(err)
	}
	return priv, pub, sv
}

// fullsendLayer is a layer holding fullsend content: a Go executable (this
// test binary, which carries build info) and a policy file. It is built
// once per process: compressing a large binary is the slow part.
var fullsendLayer = sync.OnceValues(func() (v1.Layer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{
		{"opt/fullsend/policies/manifest.json", 0o644, []byte(`{"schema":"test"}`)},
		{"usr/local/bin/fullsend", 0o755, bin},
		{"etc/not-listed", 0o644, []byte("x")},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return nil, err
	}
	// Compute digests now, once, so every image sharing the layer reuses them.
	if _, err := l.Digest(); err != nil {
		return nil, err
	}
	return l, nil
})

// testImage is a random image plus the fullsend layer, annotated with a
// policy manifest digest like image.Build does.
func testImage(t testing.TB, seed int64) v1.Image {
	t.Helper()
	img, err := random.Image(256, 1, random.WithSource(rngSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	layer, err := fullsendLayer()
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.AppendLayers(img, layer)
	if err != nil {
		t.Fatal(err)
	}
	return mutate.Annotations(img, map[string]string{AnnotationPoliciesDigest: "sha256:" + strings.Repeat("ab", 32)}).(v1.Image)
}

func pushImage(t testing.TB, repo name.Repository, img v1.Image) name.Digest {
	t.Helper()
	h, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	ref := repo.Digest(h.String())
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	return ref
}

func testClaims() Claims {
	return Claims{PoliciesDigest: "sha256:" + strings.Repeat("ab", 32), GitRevision: strings.Repeat("1", 40), FullsendVersion: "v0.0.0-test", RunURL: "https://ci.example/run/1"}
}

func TestGenerateKeyPair(t *testing.T) {
	dir := t.TempDir()
	priv, pub := filepath.Join(dir, "k.key"), filepath.Join(dir, "k.pub")
	if err := GenerateKeyPair(priv, pub, nil); !errors.Is(err, ErrNoPassword) {
		t.Fatalf("empty password: got %v, want ErrNoPassword", err)
	}
	if err := GenerateKeyPair(priv, pub, []byte(testPassword)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(priv)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("private key mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(priv)
	if !bytes.Contains(data, []byte("ENCRYPTED SIGSTORE PRIVATE KEY")) {
		t.Errorf("private key is not an encrypted cosign key:\n%s", data)
	}
	if err := GenerateKeyPair(priv, pub, []byte(testPassword)); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("second keygen: got %v, want ErrKeyExists", err)
	}
	tests := []struct {
		name    string
		pass    string
		wantErr string
	}{
		{"right password", testPassword, ""},
		{"wrong password", "nope", "wrong password"},
		{"no password", "", "COSIGN_PASSWORD"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadPrivateKey(context.Background(), priv, []byte(tc.pass))
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("got %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
	if _, err := LoadPublicKey(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPublicKey(context.Background(), priv); err == nil {
		t.Fatal("loading a private key as public key succeeded")
	}
}

func TestIsKMSRef(t *testing.T) {
	for ref, want := range map[string]bool{
		"awskms:///arn:aws:kms:us-east-1:1:key/x": true,
		"hashivault://fullsend":                   true,
		"cosign.key":                              false,
		"./keys/cosign.key":                       false,
		"C:\\keys\\cosign.key":                    false,
		"dir.d://x":                               false,
		"://x":                                    false,
	} {
		if got := IsKMSRef(ref); got != want {
			t.Errorf("IsKMSRef(%q) = %v, want %v", ref, got, want)
		}
	}
}

func TestSignPushCheck(t *testing.T) {
	ctx := context.Background()
	repo, err := name.NewRepository(testRegistry(t) + "/fullsend/agent-sandbox")
	if err != nil {
		t.Fatal(err)
	}
	img := testImage(t, 1)
	ref := pushImage(t, repo, img)
	_, pub, sv := testKeys(t)
	s, err := NewKeyed(sv)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := s.Sign(ctx, Subject{Repository: repo, Image: img}, Options{
		Claims:     testClaims(),
		SBOM:       &SBOMOptions{Tool: "fullsend-test"},
		Provenance: &Provenance{BuilderID: "https://ci.example/builder", SourceRepo: "git+https://example.com/repo", SourceRevision: strings.Repeat("1", 40)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if signed.Ref() != ref.String() {
		t.Fatalf("signed %s, pushed %s", signed.Ref(), ref)
	}
	// Pushing twice must not duplicate the signature (same key, same payload).
	for range 2 {
		if err := signed.Push(ctx); err != nil {
			t.Fatal(err)
		}
	}
	v, err := LoadPublicKey(ctx, pub)
	if err != nil {
		t.Fatal(err)
	}
	e, err := OpenRemote(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Annotations[AnnotationPoliciesDigest]; got == "" {
		t.Errorf("manifest annotations lost: %v", e.Annotations)
	}
	got, err := e.CheckSignatures(ctx, Trust{Keys: []signature.Verifier{v}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d verified signatures, want 1 (dedupe)", len(got))
	}
	cl := got[0].Claims
	if cl.DockerReference != repo.Name() || cl.Annotations[AnnotationRunURL] != "https://ci.example/run/1" {
		t.Errorf("claims %+v", cl)
	}
	for _, pt := range []string{PredicateSPDX, PredicateSLSAProvenance1} {
		atts, err := e.CheckAttestations(ctx, Trust{Keys: []signature.Verifier{v}}, pt, nil)
		if err != nil {
			t.Fatalf("%s: %v", pt, err)
		}
		if len(atts) != 1 {
			t.Fatalf("%s: %d attestations, want 1", pt, len(atts))
		}
	}
}

func TestSBOMContent(t *testing.T) {
	ctx := context.Background()
	repo, _ := name.NewRepository("registry.example/fullsend/agent-sandbox")
	img := testImage(t, 2)
	st, err := sbomStatement(ctx, Subject{Repository: repo, Image: img}, mustRef(t, repo, img), SBOMOptions{Tool: "fullsend-test"})
	if err != nil {
		t.Fatal(err)
	}
	doc := st.Predicate.(*spdxDocument)
	var names []string
	for _, f := range doc.Files {
		names = append(names, f.FileName)
	}
	if strings.Join(names, ",") != "./opt/fullsend/policies/manifest.json,./usr/local/bin/fullsend" {
		t.Errorf("files = %v", names)
	}
	var mods []string
	for _, p := range doc.Packages {
		mods = append(mods, p.Name)
	}
	joined := strings.Join(mods, " ")
	// go test binaries record only the main module; the CLI test checks a
	// real fullsend binary with all its dependencies.
	for _, want := range []string{"github.com/fullsend-ai/agent-sandbox"} {
		if !strings.Contains(joined, want) {
			t.Errorf("SBOM packages lack %s: %s", want, joined)
		}
	}
	// Deterministic: the same image gives the same SBOM bytes.
	st2, err := sbomStatement(ctx, Subject{Repository: repo, Image: img}, mustRef(t, repo, img), SBOMOptions{Tool: "fullsend-test"})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(st)
	b, _ := json.Marshal(st2)
	if !bytes.Equal(a, b) {
		t.Error("SBOM is not deterministic")
	}
}

func mustRef(t testing.TB, repo name.Repository, img v1.Image) name.Digest {
	t.Helper()
	r, err := Subject{Repository: repo, Image: img}.Ref()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestAppendToLayout(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	img := testImage(t, 3)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	repo, _ := name.NewRepository("registry.example/fullsend/agent-sandbox")
	_, pub, sv := testKeys(t)
	s, _ := NewKeyed(sv)
	signed, err := s.Sign(ctx, Subject{Repository: repo, Image: img}, Options{Claims: testClaims(), Provenance: &Provenance{BuilderID: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := signed.AppendToLayout(dir); err != nil {
			t.Fatal(err)
		}
	}
	v, _ := LoadPublicKey(ctx, pub)
	e, err := OpenLayout(dir, repo)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.CheckSignatures(ctx, Trust{Keys: []signature.Verifier{v}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Errorf("%d signatures, want 1", len(got))
	}
	if _, err := e.CheckAttestations(ctx, Trust{Keys: []signature.Verifier{v}}, PredicateSLSAProvenance1, nil); err != nil {
		t.Fatal(err)
	}
	// A layout that does not hold the signed image is refused.
	other := t.TempDir()
	p2, _ := layout.Write(other, empty.Index)
	_ = p2.AppendImage(testImage(t, 4))
	if err := signed.AppendToLayout(other); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Fatalf("got %v, want refusal", err)
	}
}

// TestSBOMGoModules lists the modules of a real Go release binary (crane,
// installed for the integration tests; go test binaries carry no
// dependency list) placed where the fullsend binary goes.
func TestSBOMGoModules(t *testing.T) {
	data, err := os.ReadFile(testtool.Find(t, "crane", ".ci/install.d/20-registry.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: "usr/local/bin/fullsend", Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg})
	_, _ = tw.Write(data)
	_ = tw.Close()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := name.NewRepository("registry.example/x")
	doc, err := buildSBOM(context.Background(), Subject{Repository: repo, Image: img}, mustRef(t, repo, img), SBOMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, p := range doc.Packages {
		if p.Name == "github.com/google/go-containerregistry" {
			found = true
			if p.VersionInfo == "" || !strings.HasPrefix(p.ExternalRefs[0].Locator, "pkg:golang/github.com/google/go-containerregistry@v") {
				t.Errorf("module package %+v", p)
			}
		}
	}
	if !found {
		t.Fatalf("crane's modules missing from the SBOM: %d packages", len(doc.Packages))
	}
	links := 0
	for _, r := range doc.Relationships {
		if r.Type == "STATIC_LINK" {
			links++
		}
	}
	if links < 10 {
		t.Errorf("%d STATIC_LINK relationships, want one per module", links)
	}
}

// TestLayoutSubject reads the one image of a layout, before and after its
// signature is added (signatures and attestations are not candidates), and
// picks by digest when the layout holds several.
func TestLayoutSubject(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	img, img2 := testImage(t, 5), testImage(t, 6)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "v1"})); err != nil {
		t.Fatal(err)
	}
	repo, _ := name.NewRepository("registry.example/fullsend/agent-sandbox")
	d, _ := img.Digest()
	d2, _ := img2.Digest()
	check := func(want v1.Hash, digest string) {
		t.Helper()
		subj, ann, err := LayoutSubject(dir, repo, digest)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := subj.Digest(); got != want || subj.Repository != repo || ann == nil {
			t.Errorf("subject %s (repo %s, annotations %v), want %s", got, subj.Repository, ann, want)
		}
	}
	check(d, "")
	_, _, sv := testKeys(t)
	s, _ := NewKeyed(sv)
	signed, err := s.Sign(ctx, Subject{Repository: repo, Image: img}, Options{Claims: testClaims(), Provenance: &Provenance{BuilderID: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := signed.AppendToLayout(dir); err != nil {
		t.Fatal(err)
	}
	check(d, "")
	check(d, d.String())
	if err := p.AppendImage(img2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LayoutSubject(dir, repo, ""); !errors.Is(err, ErrNoLayoutSubject) {
		t.Errorf("two images, no digest: %v, want ErrNoLayoutSubject", err)
	}
	check(d2, d2.String())
	if _, _, err := LayoutSubject(dir, repo, "sha256:"+strings.Repeat("0", 64)); !errors.Is(err, ErrNoLayoutSubject) {
		t.Errorf("unknown digest: %v, want ErrNoLayoutSubject", err)
	}
}

func TestManifestAnnotations(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want map[string]string
	}{
		{`{"annotations":{"a":"b"}}`, map[string]string{"a": "b"}},
		{`{}`, map[string]string{}},
		{`not json`, map[string]string{}},
	} {
		if got := ManifestAnnotations([]byte(tt.raw)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ManifestAnnotations(%s) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}
