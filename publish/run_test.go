package publish

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fullsend-ai/agent-sandbox/image"
	"github.com/fullsend-ai/agent-sandbox/sign"
	"github.com/fullsend-ai/agent-sandbox/verify"
)

// TestRunGoldenOutputs: the golden build through Run, written to an OCI
// layout, a tarball and a digest file, keeps the library's golden digest.
func TestRunGoldenOutputs(t *testing.T) {
	o := goldenOptions(t)
	out := t.TempDir()
	o.OCILayout, o.Tarball, o.DigestFile = filepath.Join(out, "layout"), filepath.Join(out, "image.tar"), filepath.Join(out, "digest")
	var log strings.Builder
	o.Log = &log
	prepared := false
	o.Prepare = func(context.Context) error { prepared = true; return nil }
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Image.Digest.String(), goldenDigest(t, "single"); got != want {
		t.Errorf("digest %s, golden %s", got, want)
	}
	if !prepared {
		t.Error("Prepare was not called")
	}
	if res.OCILayout != o.OCILayout || res.Tarball != o.Tarball || len(res.Refs) != 0 || len(res.Tags) != 0 || res.Signatures != nil {
		t.Errorf("published %+v", res.Published)
	}
	if got, _ := os.ReadFile(o.DigestFile); string(got) != res.Image.Digest.String()+"\n" {
		t.Errorf("digest file %q", got)
	}
	idx, err := layout.ImageIndexFromPath(o.OCILayout)
	if err != nil {
		t.Fatal(err)
	}
	if im, _ := idx.IndexManifest(); len(im.Manifests) != 1 || im.Manifests[0].Digest != res.Image.Digest {
		t.Errorf("layout holds %+v", im)
	}
	if _, err := os.Stat(o.Tarball); err != nil {
		t.Error(err)
	}
	if !strings.Contains(log.String(), "timestamps: 2023-11-14T22:13:20Z (SOURCE_DATE_EPOCH)") {
		t.Errorf("log does not report the timestamp source:\n%s", log.String())
	}
}

// TestRunSignsBeforeTagging: with signing and a push, the image goes up
// by digest, then its signature and attestations, and only then any tag;
// the OCI layout holds the same signature, and both verify.
func TestRunSignsBeforeTagging(t *testing.T) {
	host, rec := testRegistry(t)
	o := goldenOptions(t)
	o.Tags = []string{host + "/acme/agents:v1.2.3"}
	o.Push = true
	o.OCILayout = filepath.Join(t.TempDir(), "layout")
	o.Sign = keyed(t)
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	digest := res.Image.Digest
	if want := host + "/acme/agents@" + digest.String(); len(res.Refs) != 1 || res.Refs[0] != want {
		t.Errorf("refs %v, want [%s]", res.Refs, want)
	}
	wantTags := []string{host + "/acme/agents:v1.2.3", host + "/acme/agents:sha-0123456789ab"}
	if strings.Join(res.Tags, " ") != strings.Join(wantTags, " ") {
		t.Errorf("tags %v, want %v", res.Tags, wantTags)
	}
	if len(res.Signatures) != 1 || len(res.Signatures[0].Attestations) != 2 ||
		res.Signatures[0].Annotations[sign.AnnotationPoliciesDigest] != "sha256:"+res.Image.PoliciesDigest {
		t.Fatalf("signatures %+v", res.Signatures)
	}

	assertSignedBeforeTagged(t, rec.requests(), digest)

	for _, vo := range []verify.Options{
		{Image: o.Tags[0], Keys: []string{publicKey(t)}, RequireProvenance: true, RequireSBOM: true},
		{Image: host + "/acme/agents", Layout: o.OCILayout, Keys: []string{publicKey(t)}, RequireProvenance: true, RequireSBOM: true},
	} {
		vr, err := verify.Verify(context.Background(), vo)
		if err != nil {
			t.Fatalf("verify %s (layout %q): %v", vo.Image, vo.Layout, err)
		}
		if vr.Digest != digest.String() || vr.PoliciesDigest != "sha256:"+res.Image.PoliciesDigest {
			t.Errorf("verified %+v", vr)
		}
	}
}

// assertSignedBeforeTagged checks the registry saw the image by digest,
// then its signature and attestations, and only then the tags.
func assertSignedBeforeTagged(t *testing.T, reqs []string, digest v1.Hash) {
	t.Helper()
	put := func(suffix string) int {
		return firstIndex(reqs, func(r string) bool { return strings.HasPrefix(r, "PUT ") && strings.HasSuffix(r, "/manifests/"+suffix) })
	}
	byDigest, sig, att := put(digest.String()), put("sha256-"+digest.Hex+".sig"), put("sha256-"+digest.Hex+".att")
	tag, sha := put("v1.2.3"), put("sha-0123456789ab")
	if min(byDigest, sig, att, tag, sha) < 0 {
		t.Fatalf("missing uploads (image %d, sig %d, att %d, tag %d, sha %d):\n%s", byDigest, sig, att, tag, sha, strings.Join(reqs, "\n"))
	}
	if byDigest > sig || max(sig, att) > min(tag, sha) {
		t.Errorf("order image %d, sig %d, att %d, tag %d, sha-tag %d: a tag was written before the signatures", byDigest, sig, att, tag, sha)
	}
}

// TestRunFailedSigningWritesNothing: a signing failure after the build
// (in CI without a builder id) leaves no output behind.
func TestRunFailedSigningWritesNothing(t *testing.T) {
	host, rec := testRegistry(t)
	o := goldenOptions(t)
	o.Tags = []string{host + "/acme/agents:v1.2.3"}
	o.Push = true
	o.OCILayout = filepath.Join(t.TempDir(), "layout")
	o.Sign = keyed(t)
	o.Sign.BuilderID = ""
	o.Getenv = env(map[string]string{"SOURCE_DATE_EPOCH": "1700000000", "GITHUB_ACTIONS": "true"})
	_, err := Run(context.Background(), o)
	var oe *OptionError
	if !errors.As(err, &oe) || !errors.Is(err, sign.ErrNoBuilderID) {
		t.Fatalf("error %v, want an OptionError of ErrNoBuilderID", err)
	}
	if _, err := os.Stat(o.OCILayout); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("layout written: %v", err)
	}
	if n := firstIndex(rec.requests(), func(r string) bool { return strings.HasPrefix(r, "PUT ") }); n >= 0 {
		t.Errorf("something was pushed: %v", rec.requests())
	}
}

// TestRunOptionErrors: every invalid input is an *OptionError of its kind,
// found before anything is built.
func TestRunOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Options)
		kind error
	}{
		{"no base", func(o *Options) { o.Base = "" }, ErrNoBase},
		{"push without tag", func(o *Options) { o.Push = true }, ErrPushNeedsTag},
		{"bad tag", func(o *Options) { o.Tags = []string{"no-tag-here"} }, ErrTag},
		{"bad platform", func(o *Options) { o.Platforms = []string{"linux/amd64/v1/x/y"} }, ErrPlatform},
		{"missing dir", func(o *Options) { o.Dir = "./does-not-exist" }, ErrNotDir},
		{"bad epoch", func(o *Options) { o.Getenv = env(map[string]string{"SOURCE_DATE_EPOCH": "yesterday"}) }, ErrEpoch},
		{"binary without path", func(o *Options) { o.Binaries = []string{"linux/amd64"} }, ErrBinarySpec},
		{"binary for another platform", func(o *Options) { o.Binaries = []string{"linux/arm64=/bin/true"} }, ErrBinaryPlatform},
		{"sign without tag", func(o *Options) { o.Sign = &SignOptions{Key: "k"}; o.OCILayout = "x" }, ErrSignNeedsTag},
		{"sign without output", func(o *Options) { o.Sign = &SignOptions{Key: "k"}; o.Tags = []string{"r.example/a:v1"} }, ErrSignNeedsOutput},
		{"no signer", func(o *Options) { o.Sign = &SignOptions{}; o.Tags = []string{"r.example/a:v1"}; o.OCILayout = "x" }, ErrNoSigner},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := goldenOptions(t)
			o.Prepare = func(context.Context) error { t.Error("Prepare ran"); return nil }
			tt.edit(&o)
			_, err := Run(context.Background(), o)
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Kind != tt.kind || !errors.Is(err, tt.kind) {
				t.Fatalf("error %v, want an OptionError of %v", err, tt.kind)
			}
		})
	}
}

func TestImageOptionsDefaults(t *testing.T) {
	o := goldenOptions(t)
	o.Version, o.Revision, o.SourceURL, o.CacheDir = "", "", "", ""
	o.NoCache = true
	o.Getenv = env(map[string]string{"SOURCE_DATE_EPOCH": "0", "GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/agents"})
	dir := t.TempDir()
	o.Dir = dir // not a git work tree
	bo, err := o.ImageOptions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if bo.Version != "" || bo.Revision != "" || bo.CacheDir != "" || bo.SourceURL != "https://github.com/acme/agents" {
		t.Errorf("defaults: version %q revision %q cache %q source %q", bo.Version, bo.Revision, bo.CacheDir, bo.SourceURL)
	}
	if bo.Binaries["linux/amd64"] == "" || bo.Source != "" {
		t.Errorf("binaries %v, source %q (want no source with every binary given)", bo.Binaries, bo.Source)
	}
}

// TestRunPushFailureLeavesNoTag: a failing signature push stops before any
// tag is written.
func TestRunPushFailureLeavesNoTag(t *testing.T) {
	host, _ := testRegistry(t)
	o := goldenOptions(t)
	o.Tags = []string{host + "/acme/agents:v1.2.3"}
	o.Push = true
	o.Sign = keyed(t)
	pub := Registry{Tags: mustTags(t, o.Tags...)}
	img, err := image.Build(context.Background(), mustImageOptions(t, o))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := o.Sign.Signer(context.Background(), o.getenv)
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := o.signatures(context.Background(), signer, img, pub.Tags, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	// A signature for a subject the registry does not hold cannot be
	// pushed: its image is checked first.
	sigs = append(sigs, mustSignOther(t, signer, host))
	_, err = pub.Publish(context.Background(), &Artifact{Image: img, Signatures: sigs})
	if err == nil {
		t.Fatal("Publish succeeded with an unpushable signature")
	}
	if _, err := remote.Head(pub.Tags[0]); err == nil {
		t.Fatal("tag written although a signature failed")
	}
}

// mustSignOther signs an image the registry does not hold.
func mustSignOther(t *testing.T, signer *sign.Signer, host string) *sign.Signed {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := name.NewRepository(host + "/acme/agents")
	if err != nil {
		t.Fatal(err)
	}
	sd, err := signer.Sign(context.Background(), sign.Subject{Repository: repo, Image: img}, sign.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sd
}

func mustTags(t *testing.T, specs ...string) []name.Tag {
	t.Helper()
	var out []name.Tag
	for _, s := range specs {
		tag, err := name.NewTag(s, name.StrictValidation)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tag)
	}
	return out
}

func mustImageOptions(t *testing.T, o Options) image.Options {
	t.Helper()
	bo, err := o.ImageOptions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return bo
}
