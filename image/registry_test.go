package image

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// faults wraps a registry handler and injects failures: a request whose
// method and path match a rule fails the rule's number of times, with a
// status code or by dropping the connection.
type faults struct {
	next  http.Handler
	mu    sync.Mutex
	rules []*fault
	seen  []string
}

type fault struct {
	method, pathContains string
	status               int // 0: drop the connection
	remaining            int // <0: forever
	hits                 atomic.Int32
}

func (f *faults) add(r *fault) { f.mu.Lock(); f.rules = append(f.rules, r); f.mu.Unlock() }

// requests returns the requests served so far, as "METHOD /path".
func (f *faults) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func (f *faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.seen = append(f.seen, r.Method+" "+r.URL.Path)
	var hit *fault
	for _, rule := range f.rules {
		if rule.method == r.Method && strings.Contains(r.URL.Path, rule.pathContains) && rule.remaining != 0 {
			rule.remaining--
			hit = rule
			break
		}
	}
	f.mu.Unlock()
	if hit == nil {
		f.next.ServeHTTP(w, r)
		return
	}
	hit.hits.Add(1)
	_, _ = io.Copy(io.Discard, r.Body)
	if hit.status != 0 {
		http.Error(w, "injected failure", hit.status)
		return
	}
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// testRegistry is an in-process registry (pkg/registry) behind faults.
func testRegistry(t *testing.T) (host string, f *faults) {
	t.Helper()
	f = &faults{next: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), f
}

func fastRemote() RemoteConfig {
	return RemoteConfig{Backoff: remote.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 4}}
}

func ropts(t *testing.T) []remote.Option {
	return RemoteOptions(context.Background(), fastRemote())
}

// multiArchBase pushes a two-platform base index and returns its reference.
func multiArchBase(t *testing.T, host string) (string, v1.ImageIndex) {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range []v1.Platform{amd64, arm64} {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := img.ConfigFile()
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = p.OS, p.Architecture
		cf.Config.Labels = map[string]string{LabelOpenShellVersion: DefaultOpenShellVersion}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			t.Fatal(err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	ref := host + "/base/ubuntu:22.04"
	r, _ := name.ParseReference(ref)
	if err := remote.WriteIndex(r, idx, ropts(t)...); err != nil {
		t.Fatal(err)
	}
	return ref, idx
}

func TestBuildOnBases(t *testing.T) {
	host, _ := testRegistry(t)
	baseRef, baseIdx := multiArchBase(t, host)
	baseDigest, _ := baseIdx.Digest()

	dir := t.TempDir()
	layoutDir := filepath.Join(dir, "layout")
	lp, err := layout.Write(layoutDir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := lp.AppendIndex(baseIdx); err != nil {
		t.Fatal(err)
	}
	amdImg, err := selectPlatforms(baseIdx, []v1.Platform{amd64}, "test")
	if err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(dir, "base.tar")
	if err := tarball.WriteToFile(tarPath, name.MustParseReference("base:1"), amdImg[0]); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		base       string
		platforms  []v1.Platform
		wantKind   string
		wantDigest bool
		wantErr    error
	}{
		{"registry index, two platforms", baseRef, []v1.Platform{amd64, arm64}, BaseRegistry, true, nil},
		{"registry by digest", host + "/base/ubuntu@" + baseDigest.String(), []v1.Platform{arm64}, BaseRegistry, true, nil},
		{"oci layout", layoutDir, []v1.Platform{amd64, arm64}, BaseLayout, false, nil},
		{"tarball", tarPath, []v1.Platform{amd64}, BaseTarball, false, nil},
		{"tarball lacks a platform", tarPath, []v1.Platform{amd64, arm64}, "", false, ErrPlatformNotInBase},
		{"registry lacks a platform", baseRef, []v1.Platform{{OS: "linux", Architecture: "s390x"}}, "", false, ErrPlatformNotInBase},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := fixedOptions(t, tt.platforms...)
			o.Base = tt.base
			o.Remote = ropts(t)
			res, err := Build(context.Background(), o)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.BaseKind != tt.wantKind {
				t.Errorf("base kind %s, want %s", res.BaseKind, tt.wantKind)
			}
			if tt.wantDigest && res.BaseDigest != baseDigest {
				t.Errorf("base digest %s, want %s", res.BaseDigest, baseDigest)
			}
			var img v1.Image
			if res.Index != nil {
				if err := validate.Index(res.Index); err != nil {
					t.Fatal(err)
				}
				im, _ := res.Index.IndexManifest()
				if img, err = res.Index.Image(im.Manifests[0].Digest); err != nil {
					t.Fatal(err)
				}
				if tt.wantDigest && im.Annotations[AnnotationBaseDigest] != baseDigest.String() {
					t.Errorf("index base.digest %q, want %s", im.Annotations[AnnotationBaseDigest], baseDigest)
				}
			} else {
				img = res.Image
				if err := validate.Image(img); err != nil {
					t.Fatal(err)
				}
			}
			m, _ := img.Manifest()
			if m.Annotations[AnnotationBaseDigest] == "" {
				t.Errorf("manifest has no base.digest annotation")
			}
			if tt.wantKind == BaseRegistry && !strings.Contains(m.Annotations[AnnotationBaseName], "base/ubuntu") {
				t.Errorf("base.name %q", m.Annotations[AnnotationBaseName])
			}
			if len(m.Layers) != 4 { // base layer + binary + content + policies
				t.Errorf("%d layers, want 4", len(m.Layers))
			}
		})
	}
}

func TestBuildRefusesOpenShellMismatch(t *testing.T) {
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Labels = map[string]string{LabelOpenShellVersion: "v0.0.83"}
	img, _ = mutate.ConfigFile(img, cf)
	path := filepath.Join(t.TempDir(), "base.tar")
	if err := tarball.WriteToFile(path, name.MustParseReference("base:1"), img); err != nil {
		t.Fatal(err)
	}
	o := fixedOptions(t, amd64)
	o.Base = path
	if _, err := Build(context.Background(), o); !errors.Is(err, ErrOpenShellMismatch) {
		t.Fatalf("error %v, want ErrOpenShellMismatch", err)
	}
}

func TestPush(t *testing.T) {
	ctx := context.Background()
	res := build(t, fixedOptions(t, amd64, arm64))

	t.Run("digest first, tags last, retries transient failures", func(t *testing.T) {
		host, f := testRegistry(t)
		f.add(&fault{method: http.MethodPatch, pathContains: "/blobs/uploads/", status: http.StatusServiceUnavailable, remaining: 2})
		f.add(&fault{method: http.MethodHead, pathContains: "/blobs/", remaining: 1}) // dropped connection
		f.add(&fault{method: http.MethodPut, pathContains: "/manifests/sha256:", status: http.StatusBadGateway, remaining: 1})
		tag := mustTag(t, host+"/acme/agents:v1.2.3")
		refs, err := Push(ctx, res, PushOptions{Tags: []name.Tag{tag}, ImmutableTags: []name.Tag{tag.Context().Tag(ShaTag("0123456789abcdef", res.Digest))}, Remote: fastRemote()})
		if err != nil {
			t.Fatalf("Push: %v", err)
		}
		if len(refs) != 1 || refs[0].DigestStr() != res.Digest.String() {
			t.Fatalf("refs %v", refs)
		}
		for _, r := range f.rules {
			if r.hits.Load() == 0 {
				t.Errorf("fault %s %s never triggered", r.method, r.pathContains)
			}
		}
		got, err := remote.Index(tag, ropts(t)...)
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := got.Digest(); d != res.Digest {
			t.Errorf("tag points at %s, want %s", d, res.Digest)
		}
		if err := validate.Index(got); err != nil {
			t.Errorf("pulled index: %v", err)
		}
		// No tag PUT before the last digest PUT.
		lastDigestPut, firstTagPut := -1, len(f.requests())
		for i, s := range f.requests() {
			if strings.HasPrefix(s, "PUT ") && strings.Contains(s, "/manifests/sha256:") {
				lastDigestPut = i
			}
			if strings.HasPrefix(s, "PUT ") && strings.Contains(s, "/manifests/") && !strings.Contains(s, "/manifests/sha256:") && i < firstTagPut {
				firstTagPut = i
			}
		}
		if lastDigestPut > firstTagPut {
			t.Errorf("a tag was written (request %d) before the last manifest by digest (request %d)", firstTagPut, lastDigestPut)
		}
	})

	t.Run("BeforeTag runs between the digest push and the tags", func(t *testing.T) {
		host, _ := testRegistry(t)
		tag := mustTag(t, host+"/acme/agents:v1.2.3")
		hookErr := errors.New("signing failed")
		var seen []name.Digest
		_, err := Push(ctx, res, PushOptions{Tags: []name.Tag{tag}, Remote: fastRemote(),
			BeforeTag: func(ctx context.Context, refs []name.Digest) error {
				seen = refs
				// The image must already be there by digest for a signer.
				if _, err := remote.Head(refs[0], ropts(t)...); err != nil {
					t.Errorf("image not pushed before BeforeTag: %v", err)
				}
				return hookErr
			}})
		if !errors.Is(err, hookErr) {
			t.Fatalf("Push err = %v, want the hook's error", err)
		}
		if len(seen) != 1 || seen[0].DigestStr() != res.Digest.String() {
			t.Fatalf("hook refs = %v", seen)
		}
		_, err = remote.Head(tag, ropts(t)...)
		var terr *transport.Error
		if !errors.As(err, &terr) || terr.StatusCode != http.StatusNotFound {
			t.Fatalf("tag exists after a failed BeforeTag: %v", err)
		}
	})

	t.Run("failed push writes no tag", func(t *testing.T) {
		host, f := testRegistry(t)
		f.add(&fault{method: http.MethodPut, pathContains: "/manifests/", status: http.StatusInternalServerError, remaining: -1})
		tag := mustTag(t, host+"/acme/agents:v1.2.3")
		if _, err := Push(ctx, res, PushOptions{Tags: []name.Tag{tag}, Remote: fastRemote()}); err == nil {
			t.Fatal("Push succeeded against a failing registry")
		}
		f.mu.Lock()
		f.rules = nil
		f.mu.Unlock()
		_, err := remote.Head(tag, ropts(t)...)
		var terr *transport.Error
		if !errors.As(err, &terr) || terr.StatusCode != http.StatusNotFound {
			t.Fatalf("tag exists after a failed push (err %v)", err)
		}
	})

	t.Run("blob upload keeps failing", func(t *testing.T) {
		host, f := testRegistry(t)
		f.add(&fault{method: http.MethodPut, pathContains: "/blobs/uploads/", remaining: -1}) // always dropped
		tag := mustTag(t, host+"/acme/agents:v1")
		if _, err := Push(ctx, res, PushOptions{Tags: []name.Tag{tag}, Remote: fastRemote()}); err == nil {
			t.Fatal("Push succeeded")
		}
		for _, s := range f.requests() {
			if strings.HasPrefix(s, "PUT ") && strings.Contains(s, "/manifests/") {
				t.Fatalf("manifest written although blobs failed: %s", s)
			}
		}
	})

	t.Run("progress", func(t *testing.T) {
		host, _ := testRegistry(t)
		var progress strings.Builder
		cfg := fastRemote()
		cfg.Progress = &progress
		if _, err := Push(ctx, res, PushOptions{Tags: []name.Tag{mustTag(t, host+"/acme/agents:v1")}, Remote: cfg}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(progress.String(), "100%") {
			t.Errorf("progress output %q has no 100%% line", progress.String())
		}
	})

	t.Run("latest refused", func(t *testing.T) {
		host, f := testRegistry(t)
		tag := mustTag(t, host+"/acme/agents:latest")
		if _, err := Push(ctx, res, PushOptions{Tags: []name.Tag{tag}, Remote: fastRemote()}); !errors.Is(err, ErrLatestTag) {
			t.Fatalf("error %v, want ErrLatestTag", err)
		}
		if len(f.requests()) != 0 {
			t.Errorf("registry contacted before refusing: %v", f.requests())
		}
		if _, err := Push(ctx, res, PushOptions{Tags: []name.Tag{tag}, AllowLatest: true, Remote: fastRemote()}); err != nil {
			t.Fatalf("with AllowLatest: %v", err)
		}
	})

	t.Run("immutable tag is never moved", func(t *testing.T) {
		host, f := testRegistry(t)
		sha := mustTag(t, host+"/acme/agents:sha-0123456789ab")
		other := build(t, fixedOptions(t, amd64))
		if _, err := Push(ctx, other, PushOptions{ImmutableTags: []name.Tag{sha}, Remote: fastRemote()}); err != nil {
			t.Fatal(err)
		}
		before := len(f.requests())
		_, err := Push(ctx, res, PushOptions{ImmutableTags: []name.Tag{sha}, Remote: fastRemote()})
		if !errors.Is(err, ErrImmutableTag) {
			t.Fatalf("error %v, want ErrImmutableTag", err)
		}
		for _, s := range f.requests()[before:] {
			if !strings.HasPrefix(s, "HEAD ") && !strings.HasPrefix(s, "GET /v2/") {
				t.Errorf("request %s after an immutable-tag conflict", s)
			}
		}
		// Pushing the same image again is fine.
		if _, err := Push(ctx, other, PushOptions{ImmutableTags: []name.Tag{sha}, Remote: fastRemote()}); err != nil {
			t.Fatalf("re-push of the same digest: %v", err)
		}
	})
}

func TestWriteLayoutAndTarball(t *testing.T) {
	dir := t.TempDir()
	multi := build(t, fixedOptions(t, amd64, arm64))
	single := build(t, fixedOptions(t, amd64))

	out := filepath.Join(dir, "layout")
	for i := 0; i < 2; i++ { // the second write replaces the first
		if err := WriteLayout(multi, out, "v1.2.3"); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := layout.ImageIndexFromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != multi.Digest {
		t.Fatalf("layout index %+v, want one entry %s", im.Manifests, multi.Digest)
	}
	if got := im.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; got != "v1.2.3" {
		t.Errorf("ref.name %q", got)
	}
	inner, err := idx.ImageIndex(multi.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(inner); err != nil {
		t.Fatal(err)
	}

	notLayout := filepath.Join(dir, "precious")
	if err := os.MkdirAll(notLayout, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notLayout, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(multi, notLayout, ""); err == nil {
		t.Error("WriteLayout replaced a directory that is not an OCI layout")
	}

	ref := name.MustParseReference("acme/agents:v1")
	for _, res := range []*Result{single, multi} {
		tarPath := filepath.Join(dir, "image.tar")
		if err := WriteTarball(res, tarPath, ref); err != nil {
			t.Fatal(err)
		}
		// The OCI layout inside keeps the exact digest.
		unpacked := filepath.Join(t.TempDir(), "unpacked")
		untar(t, tarPath, unpacked)
		lidx, err := layout.ImageIndexFromPath(unpacked)
		if err != nil {
			t.Fatal(err)
		}
		lim, _ := lidx.IndexManifest()
		if len(lim.Manifests) != 1 || lim.Manifests[0].Digest != res.Digest {
			t.Fatalf("archive index %+v, want %s", lim.Manifests, res.Digest)
		}
		if res.Index != nil {
			inner, err := lidx.ImageIndex(res.Digest)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate.Index(inner); err != nil {
				t.Fatal(err)
			}
			continue
		}
		img, err := lidx.Image(res.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate.Image(img); err != nil {
			t.Fatal(err)
		}
		// The docker manifest.json part loads the same config (image ID).
		dimg, err := tarball.ImageFromPath(tarPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := res.Image.ConfigName()
		if got, _ := dimg.ConfigName(); got != want {
			t.Errorf("docker part config %s, want %s", got, want)
		}
		if err := validate.Image(dimg); err != nil {
			t.Errorf("docker part: %v", err)
		}
	}
}

func untar(t *testing.T, file, dir string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestKeychain(t *testing.T) {
	env := map[string]string{
		"GITHUB_TOKEN":         "ghs_secret",
		"GITHUB_ACTOR":         "octocat",
		"CI_REGISTRY":          "registry.gitlab.example",
		"CI_JOB_TOKEN":         "job-token",
		"CI_REGISTRY_USER":     "",
		"CI_REGISTRY_PASSWORD": "",
	}
	kc := ciKeychain{func(k string) string { return env[k] }}
	tests := []struct {
		registry, user, pass string
	}{
		{"ghcr.io", "octocat", "ghs_secret"},
		{"registry.gitlab.example", "gitlab-ci-token", "job-token"},
		{"docker.io", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.registry, func(t *testing.T) {
			reg, _ := name.NewRegistry(tt.registry)
			a, err := kc.Resolve(reg)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := a.Authorization()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Username != tt.user || cfg.Password != tt.pass {
				t.Errorf("got %q/%q, want %q/%q", cfg.Username, cfg.Password, tt.user, tt.pass)
			}
		})
	}
	env["CI_REGISTRY_USER"], env["CI_REGISTRY_PASSWORD"] = "deploy", "pw"
	reg, _ := name.NewRegistry("registry.gitlab.example")
	a, _ := kc.Resolve(reg)
	if cfg, _ := a.Authorization(); cfg.Username != "deploy" || cfg.Password != "pw" {
		t.Errorf("CI_REGISTRY_USER/PASSWORD not preferred over CI_JOB_TOKEN: %+v", cfg)
	}
}

func mustTag(t *testing.T, s string) name.Tag {
	t.Helper()
	tag, err := name.NewTag(s)
	if err != nil {
		t.Fatal(err)
	}
	return tag
}
