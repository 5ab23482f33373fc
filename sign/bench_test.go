package sign

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/sigstore/pkg/signature"
)

func benchSetup(b *testing.B) (context.Context, name.Repository, *Signer, signature.Verifier) {
	b.Helper()
	ctx := context.Background()
	repo, err := name.NewRepository(testRegistry(b) + "/bench/agent-sandbox")
	if err != nil {
		b.Fatal(err)
	}
	_, pub, sv := testKeys(b)
	s, err := NewKeyed(sv)
	if err != nil {
		b.Fatal(err)
	}
	v, err := LoadPublicKey(ctx, pub)
	if err != nil {
		b.Fatal(err)
	}
	return ctx, repo, s, v
}

// BenchmarkSign: the signature alone (payload, ECDSA), nothing written.
func BenchmarkSign(b *testing.B) {
	ctx, repo, s, _ := benchSetup(b)
	img := testImage(b, 1)
	subj := Subject{Repository: repo, Image: img}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Sign(ctx, subj, Options{Claims: testClaims()}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignAttestations: signature plus SBOM (reads the image's
// fullsend layer, hashes files, reads Go build info) and provenance.
func BenchmarkSignAttestations(b *testing.B) {
	ctx, repo, s, _ := benchSetup(b)
	img := testImage(b, 1)
	subj := Subject{Repository: repo, Image: img}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Sign(ctx, subj, Options{Claims: testClaims(), SBOM: &SBOMOptions{}, Provenance: &Provenance{BuilderID: "b"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignPush: sign and write the .sig tag to a loopback registry.
func BenchmarkSignPush(b *testing.B) {
	ctx, repo, s, _ := benchSetup(b)
	img := testImage(b, 1)
	pushImage(b, repo, img)
	subj := Subject{Repository: repo, Image: img}
	b.ResetTimer()
	for b.Loop() {
		sd, err := s.Sign(ctx, subj, Options{Claims: testClaims()})
		if err != nil {
			b.Fatal(err)
		}
		if err := sd.Push(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckSignatures: open by digest and verify one signature.
func BenchmarkCheckSignatures(b *testing.B) {
	ctx, repo, s, v := benchSetup(b)
	img := testImage(b, 1)
	ref := pushImage(b, repo, img)
	sd, err := s.Sign(ctx, Subject{Repository: repo, Image: img}, Options{Claims: testClaims()})
	if err != nil {
		b.Fatal(err)
	}
	if err := sd.Push(ctx); err != nil {
		b.Fatal(err)
	}
	trust := Trust{Keys: []signature.Verifier{v}}
	b.ResetTimer()
	for b.Loop() {
		e, err := OpenRemote(ctx, ref)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.CheckSignatures(ctx, trust, nil); err != nil {
			b.Fatal(err)
		}
	}
}
