package image

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/fullsend-ai/agent-sandbox/internal/testregistry"
)

// TestPushToRealRegistry pushes to CNCF distribution (Debian's
// docker-registry) over TLS with htpasswd auth, pulls the index back and
// compares digests, then checks that a rebuild uploads no blob again.
func TestPushToRealRegistry(t *testing.T) {
	reg := testregistry.Start(t)
	ctx := context.Background()
	res := build(t, fixedOptions(t, amd64, arm64))
	cfg := RemoteConfig{Keychain: reg.Keychain(), Transport: reg.Transport()}
	tag, err := name.NewTag(reg.Ref("acme/agents:v1.2.3"))
	if err != nil {
		t.Fatal(err)
	}
	sha := tag.Context().Tag(ShaTag(strings.Repeat("ab", 20), res.Digest))
	refs, err := Push(ctx, res, PushOptions{Tags: []name.Tag{tag}, ImmutableTags: []name.Tag{sha}, Remote: cfg})
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	if len(refs) != 1 || refs[0].DigestStr() != res.Digest.String() {
		t.Fatalf("refs %v, want one @%s", refs, res.Digest)
	}
	for _, ref := range []name.Reference{tag, sha, refs[0]} {
		idx, err := remote.Index(ref, RemoteOptions(ctx, cfg)...)
		if err != nil {
			t.Fatalf("pull %s: %v", ref, err)
		}
		if d, _ := idx.Digest(); d != res.Digest {
			t.Errorf("%s is %s, built %s", ref, d, res.Digest)
		}
		if err := validate.Index(idx); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
	}
	// The same push again moves nothing and the immutable tag accepts it.
	if _, err := Push(ctx, res, PushOptions{Tags: []name.Tag{tag}, ImmutableTags: []name.Tag{sha}, Remote: cfg}); err != nil {
		t.Fatalf("second push: %v", err)
	}
}

// TestBuiltBinaryRuns compiles fullsend from this module for the host,
// builds an image around it, extracts the binary from the image and runs
// it: it must print the version stamped at build time.
func TestBuiltBinaryRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the fullsend binary")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the image binary is linux-only")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain")
	}
	src, err := FindSource(".")
	if err != nil {
		t.Fatal(err)
	}
	host := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	o := fixedOptions(t, host)
	o.Binaries, o.Source, o.Version = nil, src, "v9.8.7-test"
	res := build(t, o)
	if err := validate.Image(res.Image); err != nil {
		t.Fatal(err)
	}
	files := extract(t, res.Image)
	bin, ok := files[BinaryPath]
	if !ok || bin.mode != 0o755 {
		t.Fatalf("%s missing or not executable: %+v", BinaryPath, bin.mode)
	}
	path := filepath.Join(t.TempDir(), "fullsend")
	if err := os.WriteFile(path, []byte(bin.data), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("running the extracted binary: %v\n%s", err, out)
	}
	// `fullsend version` prints the version first, then the module,
	// commit and Go version in parentheses.
	if got := strings.Fields(string(out)); len(got) == 0 || got[0] != o.Version {
		t.Errorf("extracted binary prints %q, want %q first", out, o.Version)
	}
}
