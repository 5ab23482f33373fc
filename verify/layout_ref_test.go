package verify

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/fullsend-ai/agent-sandbox/sign"
)

// signedLayout writes a signed image into an OCI layout, its index entry
// named refName ("" for none) as `fullsend image build --tag --oci-layout`
// names it, and returns the directory and the signed digest reference.
func signedLayout(t *testing.T, repo name.Repository, k keyPair, refName string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	img := newImage(t, 31)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	var opts []layout.Option
	if refName != "" {
		opts = append(opts, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": refName}))
	}
	if err := p.AppendImage(img, opts...); err != nil {
		t.Fatal(err)
	}
	sd, err := k.signer(t).Sign(context.Background(), sign.Subject{Repository: repo, Image: img}, sign.Options{Claims: claims()})
	if err != nil {
		t.Fatal(err)
	}
	if err := sd.AppendToLayout(dir); err != nil {
		t.Fatal(err)
	}
	return dir, sd.Ref()
}

// TestLayoutAcceptsRepoTag is the red-team finding "`verify --layout DIR`
// with REPO:TAG fails to parse": the reference `fullsend image build --tag`
// was given (REPO:TAG, also REPO:TAG@sha256:...) names the repository the
// signature is for; the layout's own tag, when it records one, must agree.
func TestLayoutAcceptsRepoTag(t *testing.T) {
	ctx := context.Background()
	repo, _ := name.NewRepository("registry.example/fullsend/agent-sandbox")
	k := newKeys(t)
	tagged, ref := signedLayout(t, repo, k, "v1.2.0")
	untagged, uref := signedLayout(t, repo, k, "")
	digest := ref[strings.Index(ref, "@")+1:]
	tests := []struct {
		name, dir, image string
		requireDigest    bool
		wantRef          string
		wantTag          string
		wantErr          error
		wantMsg          string
	}{
		{name: "bare repository", dir: tagged, image: repo.Name(), wantRef: ref},
		{name: "repository and tag", dir: tagged, image: repo.Name() + ":v1.2.0", wantRef: ref, wantTag: repo.Name() + ":v1.2.0"},
		{name: "repository, tag and digest", dir: tagged, image: repo.Name() + ":v1.2.0@" + digest, wantRef: ref},
		{name: "repository and digest", dir: tagged, image: repo.Name() + "@" + digest, wantRef: ref},
		{name: "tag of a layout that records none", dir: untagged, image: repo.Name() + ":v1.2.0", wantRef: uref, wantTag: repo.Name() + ":v1.2.0"},
		{name: "another tag than the layout's", dir: tagged, image: repo.Name() + ":v9", wantMsg: `names its image "v1.2.0", not "v9"`},
		{name: "tag with --require-digest", dir: tagged, image: repo.Name() + ":v1.2.0", requireDigest: true, wantErr: ErrNotPinned},
		{name: "another repository with a tag", dir: tagged, image: "registry.example/other:v1.2.0", wantMsg: "another repository"},
		{name: "not a reference", dir: tagged, image: "Registry.example/UPPER:v1", wantErr: ErrPolicy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			res, err := Verify(ctx, Options{Image: tc.image, Layout: tc.dir, Keys: []string{k.pub}, RequireDigest: tc.requireDigest, Log: &log})
			if tc.wantErr != nil || tc.wantMsg != "" {
				if err == nil {
					t.Fatalf("verified %+v", res)
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Errorf("err %v, want %v", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantMsg) {
					t.Errorf("err %v, want %q", err, tc.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Ref != tc.wantRef || res.Repository != repo.Name() || res.Source != "oci-layout" || res.ResolvedTag != tc.wantTag {
				t.Errorf("result %+v", res)
			}
		})
	}
}
