package publish

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/sign"
	"github.com/fullsend-ai/agent-sandbox/verify"
)

// TestSignImage signs a built image afterwards, in an OCI layout and in a
// registry (by tag, resolved once and logged), and verifies both.
func TestSignImage(t *testing.T) {
	ctx := context.Background()
	host, _ := testRegistry(t)
	o := goldenOptions(t)
	o.Tags = []string{host + "/acme/agents:v1.2.3"}
	o.Push, o.ShaTag = true, false
	o.OCILayout = filepath.Join(t.TempDir(), "layout")
	built, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	digest := built.Image.Digest.String()

	var log strings.Builder
	for _, so := range []SignImageOptions{
		{Image: host + "/acme/agents", OCILayout: o.OCILayout},
		{Image: host + "/acme/agents@" + digest, OCILayout: o.OCILayout},
		{Image: o.Tags[0], Log: &log},
	} {
		so.Sign = *keyed(t)
		so.Getenv = env(nil)
		res, err := SignImage(ctx, so)
		if err != nil {
			t.Fatalf("SignImage %s (layout %q): %v", so.Image, so.OCILayout, err)
		}
		if res.Digest != digest || len(res.Attestations) != 2 || res.Annotations[sign.AnnotationRevision] != o.Revision {
			t.Errorf("result %+v", res)
		}
	}
	if !strings.Contains(log.String(), "resolved "+o.Tags[0]+" to "+host+"/acme/agents@"+digest+"; signing the digest") {
		t.Errorf("tag resolution not logged:\n%s", log.String())
	}
	for _, vo := range []verify.Options{
		{Image: host + "/acme/agents@" + digest, Keys: []string{publicKey(t)}, RequireProvenance: true, RequireSBOM: true},
		{Image: host + "/acme/agents", Layout: o.OCILayout, Keys: []string{publicKey(t)}, RequireProvenance: true, RequireSBOM: true},
	} {
		if _, err := verify.Verify(ctx, vo); err != nil {
			t.Errorf("verify %s (layout %q): %v", vo.Image, vo.Layout, err)
		}
	}
}

func TestSignImageErrors(t *testing.T) {
	ctx := context.Background()
	lay := filepath.Join(t.TempDir(), "layout")
	o := goldenOptions(t)
	o.OCILayout = lay
	if _, err := Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    SignImageOptions
		want error
		kind bool // an *OptionError
	}{
		{"no signer", SignImageOptions{Image: "r.example/a:v1"}, ErrNoSigner, true},
		{"bad image reference", SignImageOptions{Image: "UPPER/case:v1", Sign: SignOptions{Key: "k"}}, ErrImageRef, true},
		{"bad layout repository", SignImageOptions{Image: "UPPER/case", OCILayout: lay, Sign: SignOptions{Key: "k"}}, ErrLayoutRepository, true},
		{"digest not in the layout", SignImageOptions{Image: "r.example/a@sha256:" + strings.Repeat("0", 64), OCILayout: lay, Sign: SignOptions{Key: "k"}}, sign.ErrNoLayoutSubject, false},
		{"bad annotation", SignImageOptions{Image: "r.example/a", OCILayout: lay, Sign: SignOptions{Key: "k", Annotations: []string{"x"}}}, ErrAnnotation, true},
		{"no builder id in CI", SignImageOptions{Image: "r.example/a", OCILayout: lay, Sign: SignOptions{Key: "k", Provenance: true},
			Getenv: env(map[string]string{"GITHUB_ACTIONS": "true"})}, sign.ErrNoBuilderID, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.o.Getenv == nil {
				tt.o.Getenv = env(nil)
			}
			_, err := SignImage(ctx, tt.o)
			var oe *OptionError
			if !errors.Is(err, tt.want) || errors.As(err, &oe) != tt.kind {
				t.Fatalf("error %v, want %v (option error: %v)", err, tt.want, tt.kind)
			}
		})
	}
}
