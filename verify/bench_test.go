package verify

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/fullsend-ai/agent-sandbox/sign"
)

// BenchmarkVerify is the whole verify-before-run policy on a pinned,
// keyed-signed image with provenance, against a loopback registry.
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	repo, _ := name.NewRepository(startRegistry(b, nil) + "/bench/agent-sandbox")
	k := newKeys(b)
	img := newImage(b, 1)
	ref := push(b, repo.Tag("v1"), img)
	signPush(b, k.signer(b), repo, img, sign.Options{Claims: claims(), Provenance: provenance()})
	o := Options{Image: ref.String(), Keys: []string{k.pub}, RequireProvenance: true,
		Annotations: map[string]string{sign.AnnotationPoliciesDigest: testPolicies}}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Verify(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
}
