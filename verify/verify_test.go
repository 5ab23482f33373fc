package verify

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/fullsend-ai/agent-sandbox/sign"
)

const (
	ghIssuer  = "https://token.actions.githubusercontent.com"
	ghSubject = "https://github.com/fullsend-ai/agents/.github/workflows/release.yml@refs/heads/main"
)

// TestTamperMatrix: every attack is rejected, with a message naming why.
func TestTamperMatrix(t *testing.T) {
	ctx := context.Background()
	host := startRegistry(t, nil)
	repo, _ := name.NewRepository(host + "/fullsend/agent-sandbox")
	good := newKeys(t)
	other := newKeys(t)
	kl := newKeyless(t)

	// A correctly signed image with provenance, the baseline every case tampers with.
	signedImg := newImage(t, 1)
	signedRef := push(t, repo.Tag("v1"), signedImg)
	signPush(t, good.signer(t), repo, signedImg, sign.Options{Claims: claims(), Provenance: provenance()})

	type tc struct {
		name  string
		setup func(t *testing.T) Options // returns the policy; Image set by setup
		want  string                     // substring of the error
		is    error                      // sentinel, optional
	}
	keyed := func(img string, keys ...keyPair) Options {
		o := Options{Image: img}
		for _, k := range keys {
			o.Keys = append(o.Keys, k.pub)
		}
		return o
	}
	cases := []tc{
		{"unsigned image", func(t *testing.T) Options {
			ref := push(t, repo.Tag("unsigned"), newImage(t, 2))
			return keyed(ref.String(), good)
		}, "no signatures found", sign.ErrNoSignatures},
		{"wrong key", func(t *testing.T) Options {
			return keyed(signedRef.String(), other)
		}, "from " + other.pub + "): not made with this key", sign.ErrNoValidSignature},
		{"signature copied from another image", func(t *testing.T) Options {
			victim := push(t, repo.Tag("copied"), newImage(t, 3))
			copyTag(t, cosignTag(signedRef, "sig"), cosignTag(victim, "sig"))
			return keyed(victim.String(), good)
		}, "signature copied from another image", ErrClaims},
		{"modified layer", func(t *testing.T) Options {
			// Same image with one layer replaced: a new digest; the old
			// signature, copied along, does not cover it.
			layers, _ := newImage(t, 4).Layers()
			l0, _ := signedImg.Layers()
			img := withLayers(t, append([]v1.Layer{layers[0]}, l0[1:]...)...)
			ref := push(t, repo.Tag("modified"), img)
			copyTag(t, cosignTag(signedRef, "sig"), cosignTag(ref, "sig"))
			return keyed(ref.String(), good)
		}, "claims digest", ErrClaims},
		{"swapped manifest", func(t *testing.T) Options {
			// A registry that serves another manifest for the signed digest.
			evil := newImage(t, 5)
			raw, _ := evil.RawManifest()
			mt, _ := evil.MediaType()
			var swapping atomic.Bool
			h := startRegistry(t, func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if swapping.Load() && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/manifests/"+signedRef.DigestStr()) {
						w.Header().Set("Content-Type", string(mt))
						w.Header().Set("Docker-Content-Digest", signedRef.DigestStr())
						_, _ = w.Write(raw)
						return
					}
					next.ServeHTTP(w, r)
				})
			})
			r2, _ := name.NewRepository(h + "/fullsend/agent-sandbox")
			push(t, r2.Tag("v1"), signedImg)
			push(t, r2.Tag("evil"), evil)
			signPush(t, good.signer(t), r2, signedImg, sign.Options{Claims: claims()})
			swapping.Store(true)
			return keyed(r2.Digest(signedRef.DigestStr()).String(), good)
		}, "does not match", nil},
		{"tag moved after signing", func(t *testing.T) Options {
			tag := repo.Tag("moving")
			push(t, tag, signedImg)
			push(t, tag, newImage(t, 6)) // the tag now names an unsigned image
			return keyed(tag.String(), good)
		}, "no signatures found", sign.ErrNoSignatures},
		{"tag rejected under require-digest", func(t *testing.T) Options {
			o := keyed(repo.Tag("v1").String(), good)
			o.RequireDigest = true
			return o
		}, "not pinned by digest", ErrNotPinned},
		{"wrong repository in the claim", func(t *testing.T) Options {
			img := newImage(t, 7)
			ref := push(t, repo.Tag("wrongrepo"), img)
			elsewhere, _ := name.NewRepository(host + "/someone/else")
			sd, err := good.signer(t).Sign(ctx, sign.Subject{Repository: elsewhere, Image: img}, sign.Options{Claims: claims()})
			if err != nil {
				t.Fatal(err)
			}
			push(t, elsewhere.Tag("x"), img)
			if err := sd.Push(ctx); err != nil {
				t.Fatal(err)
			}
			copyTag(t, cosignTag(elsewhere.Digest(ref.DigestStr()), "sig"), cosignTag(ref, "sig"))
			return keyed(ref.String(), good)
		}, "signature made for another repository", ErrClaims},
		{"missing required annotation", func(t *testing.T) Options {
			o := keyed(signedRef.String(), good)
			o.Annotations = map[string]string{"dev.fullsend.environment": "prod"}
			return o
		}, "lacks required annotation dev.fullsend.environment", ErrClaims},
		{"wrong required policies digest", func(t *testing.T) Options {
			o := keyed(signedRef.String(), good)
			o.Annotations = map[string]string{sign.AnnotationPoliciesDigest: "sha256:" + strings.Repeat("cd", 32)}
			return o
		}, "required", ErrClaims},
		{"wrong keyless identity", func(t *testing.T) Options {
			img := newImage(t, 8)
			ref := push(t, repo.Tag("keyless-id"), img)
			signPush(t, kl.signer(t, "https://github.com/evil/fork/.github/workflows/release.yml@refs/heads/main", ghIssuer), repo, img, sign.Options{Claims: claims()})
			o := kl.policy(ghSubject, ghIssuer)
			o.Image = ref.String()
			return o
		}, "none of the expected identities matched", sign.ErrNoValidSignature},
		{"wrong keyless issuer", func(t *testing.T) Options {
			img := newImage(t, 9)
			ref := push(t, repo.Tag("keyless-iss"), img)
			signPush(t, kl.signer(t, ghSubject, "https://evil.example"), repo, img, sign.Options{Claims: claims()})
			o := kl.policy(ghSubject, ghIssuer)
			o.Image = ref.String()
			return o
		}, "none of the expected identities matched", sign.ErrNoValidSignature},
		{"unanchored identity regexp", func(t *testing.T) Options {
			o := kl.policy("", ghIssuer)
			o.Identity.SubjectRegexp = "github.com/fullsend-ai/"
			o.Image = signedRef.String()
			return o
		}, "must be anchored", ErrPolicy},
		{"alternation escapes the anchors", func(t *testing.T) Options {
			img := newImage(t, 15)
			ref := push(t, repo.Tag("keyless-alt"), img)
			signPush(t, kl.signer(t, "https://evil.example/release.yml", ghIssuer), repo, img, sign.Options{Claims: claims()})
			o := kl.policy("", ghIssuer)
			// Unwrapped, "release\.yml$" would match the end of any subject.
			o.Identity.SubjectRegexp = "^https://github\\.com/fullsend-ai/.*|release\\.yml$"
			o.Image = ref.String()
			return o
		}, "none of the expected identities matched", sign.ErrNoValidSignature},
		{"untrusted certificate", func(t *testing.T) Options {
			img := newImage(t, 10)
			ref := push(t, repo.Tag("untrusted"), img)
			rogue := newKeyless(t) // another CA, not in the trusted root; same log
			signPush(t, rogue.signerLoggingTo(t, ghSubject, ghIssuer, kl), repo, img, sign.Options{Claims: claims()})
			o := kl.policy(ghSubject, ghIssuer)
			o.Image = ref.String()
			return o
		}, "not issued by a CA in the trusted root", sign.ErrNoValidSignature},
		{"expired certificate", func(t *testing.T) Options {
			img := newImage(t, 11)
			ref := push(t, repo.Tag("expired"), img)
			late := newKeyless(t)
			late.logTime.Store(3600) // logged an hour after the 10-minute certificate expired
			signPush(t, late.signer(t, ghSubject, ghIssuer), repo, img, sign.Options{Claims: claims()})
			o := late.policy(ghSubject, ghIssuer)
			o.Image = ref.String()
			return o
		}, "expired", sign.ErrNoValidSignature},
		{"attestation for another digest", func(t *testing.T) Options {
			img := newImage(t, 12)
			ref := push(t, repo.Tag("att-other"), img)
			signPush(t, good.signer(t), repo, img, sign.Options{Claims: claims()})
			copyTag(t, cosignTag(signedRef, "att"), cosignTag(ref, "att"))
			o := keyed(ref.String(), good)
			o.RequireProvenance = true
			return o
		}, "attestation for another digest", sign.ErrNoValidAttestation},
		{"missing provenance", func(t *testing.T) Options {
			img := newImage(t, 13)
			ref := push(t, repo.Tag("noprov"), img)
			signPush(t, good.signer(t), repo, img, sign.Options{Claims: claims()})
			o := keyed(ref.String(), good)
			o.RequireProvenance = true
			return o
		}, "no attestations found", sign.ErrNoAttestations},
		{"provenance from another builder", func(t *testing.T) Options {
			o := keyed(signedRef.String(), good)
			o.ProvenanceBuilderID = "https://ci.example/trusted-builder"
			return o
		}, "provenance builder id", sign.ErrNoValidAttestation},
		{"attestation signed by another key", func(t *testing.T) Options {
			img := newImage(t, 14)
			ref := push(t, repo.Tag("att-key"), img)
			signPush(t, good.signer(t), repo, img, sign.Options{Claims: claims()})
			signPush(t, other.signer(t), repo, img, sign.Options{Claims: claims(), Provenance: provenance()})
			o := keyed(ref.String(), good)
			o.RequireProvenance = true
			return o
		}, "invalid signature", sign.ErrNoValidAttestation},
		{"keyed signature without tlog under require-tlog", func(t *testing.T) Options {
			o := keyed(signedRef.String(), good)
			o.RequireTlog = true
			o.TrustedMaterial = kl.trusted
			return o
		}, "no Rekor bundle on the signature", sign.ErrNoValidSignature},
		{"no signer configured", func(t *testing.T) Options {
			return Options{Image: signedRef.String()}
		}, "no signer given", ErrPolicy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.setup(t)
			res, err := Verify(ctx, o)
			if err == nil {
				t.Fatalf("verified %s; want rejection (%s)", res.Ref, c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to contain %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v is not %v", err, c.is)
			}
		})
	}

	// The baseline itself verifies, pinned and by tag.
	for _, img := range []string{signedRef.String(), repo.Tag("v1").String()} {
		o := keyed(img, other, good) // keys are OR-ed
		o.RequireProvenance = true
		o.ProvenanceBuilderID = "https://ci.example/builder"
		o.Annotations = map[string]string{sign.AnnotationPoliciesDigest: testPolicies}
		var log bytes.Buffer
		o.Log = &log
		res, err := Verify(ctx, o)
		if err != nil {
			t.Fatalf("%s: %v", img, err)
		}
		if res.Ref != signedRef.String() || res.PoliciesDigest != testPolicies {
			t.Errorf("result %+v", res)
		}
		if strings.Contains(img, ":v1") && (res.ResolvedTag == "" || !strings.Contains(log.String(), "resolved")) {
			t.Errorf("tag resolution not reported: %+v, log %q", res, log.String())
		}
	}
}

// TestKeylessVerifies: the happy path of keyless signing through the
// Fulcio client and a transparency log, with the attestations.
func TestKeylessVerifies(t *testing.T) {
	ctx := context.Background()
	repo, _ := name.NewRepository(startRegistry(t, nil) + "/fullsend/agent-sandbox")
	kl := newKeyless(t)
	img := newImage(t, 20)
	ref := push(t, repo.Tag("v1"), img)
	signPush(t, kl.signer(t, ghSubject, ghIssuer), repo, img, sign.Options{Claims: claims(), Provenance: provenance(), SBOM: &sign.SBOMOptions{}})

	for _, id := range []sign.Identity{
		{Subject: ghSubject, Issuer: ghIssuer},
		{SubjectRegexp: `^https://github\.com/fullsend-ai/agents/\.github/workflows/release\.yml@refs/heads/main$`, IssuerRegexp: `^https://token\.actions\.githubusercontent\.com$`},
	} {
		o := Options{Image: ref.String(), Identity: &id, TrustedMaterial: kl.trusted, InsecureIgnoreSCT: true, RequireProvenance: true, RequireSBOM: true}
		res, err := Verify(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(res.Transparency, "rekor") {
			t.Errorf("transparency %q, want the rekor bundle verified", res.Transparency)
		}
		if len(res.Signers) != 1 || !strings.Contains(res.Signers[0], ghSubject) {
			t.Errorf("signers %v", res.Signers)
		}
		if len(res.Attestations) != 2 {
			t.Errorf("attestations %+v", res.Attestations)
		}
	}
}

// TestLayout verifies an OCI layout offline, and the CI outputs.
func TestLayoutAndOutputs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	img := newImage(t, 30)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	repo, _ := name.NewRepository("registry.example/fullsend/agent-sandbox")
	k := newKeys(t)
	sd, err := k.signer(t).Sign(ctx, sign.Subject{Repository: repo, Image: img}, sign.Options{Claims: claims()})
	if err != nil {
		t.Fatal(err)
	}
	if err := sd.AppendToLayout(dir); err != nil {
		t.Fatal(err)
	}
	res, err := Verify(ctx, Options{Image: repo.Name(), Layout: dir, Keys: []string{k.pub}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ref != sd.Ref() || res.Source != "oci-layout" {
		t.Errorf("result %+v", res)
	}
	if _, err := Verify(ctx, Options{Image: "registry.example/other", Layout: dir, Keys: []string{k.pub}}); err == nil || !strings.Contains(err.Error(), "another repository") {
		t.Errorf("layout under another repository: %v", err)
	}

	out := t.TempDir()
	env := map[string]string{"GITHUB_OUTPUT": filepath.Join(out, "gh-out"), "GITHUB_STEP_SUMMARY": filepath.Join(out, "summary.md")}
	wrote, err := WriteGitHub(res, func(k string) string { return env[k] })
	if err != nil || !wrote {
		t.Fatalf("WriteGitHub: %v %v", wrote, err)
	}
	gh, _ := os.ReadFile(env["GITHUB_OUTPUT"])
	want := "ref=" + res.Ref + "\ndigest=" + res.Digest + "\npolicies-digest=" + testPolicies + "\n"
	if string(gh) != want {
		t.Errorf("GITHUB_OUTPUT:\n%s\nwant:\n%s", gh, want)
	}
	dotenv := filepath.Join(out, "verify.env")
	if err := WriteDotenv(res, dotenv); err != nil {
		t.Fatal(err)
	}
	de, _ := os.ReadFile(dotenv)
	if !strings.Contains(string(de), "FULLSEND_IMAGE="+res.Ref+"\n") || !strings.Contains(string(de), "FULLSEND_POLICIES_DIGEST="+testPolicies+"\n") {
		t.Errorf("dotenv:\n%s", de)
	}
	bad := *res
	bad.PoliciesDigest = "x\nINJECTED=1"
	if err := WriteDotenv(&bad, dotenv); err == nil {
		t.Error("an output value with a newline was written")
	}
}
