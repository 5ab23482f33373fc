package verify

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/fullsend-ai/agent-sandbox/sign"
)

// sandboxImage is an image without a policy manifest, as a separate
// sandbox image is.
func sandboxImage(t *testing.T, seed int64) v1.Image {
	t.Helper()
	img, err := random.Image(256, 1, random.WithSource(rand.NewSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// sandboxClaims are the claims of a sandbox image: no policies digest.
func sandboxClaims(extra map[string]string) sign.Claims {
	return sign.Claims{GitRevision: strings.Repeat("2", 40), FullsendVersion: "v0.0.0-test", Extra: extra}
}

// TestSandboxImage: a separate sandbox image passes only under the job
// image's own signer and requirements, and a failure names it.
func TestSandboxImage(t *testing.T) {
	ctx := context.Background()
	host := startRegistry(t, nil)
	jobRepo, _ := name.NewRepository(host + "/fullsend/agent-sandbox")
	sbRepo, _ := name.NewRepository(host + "/fullsend/sandbox")
	good, other := newKeys(t), newKeys(t)

	// Both baseline images: the same key, provenance and SBOM, an
	// annotation the policy below may require.
	env := map[string]string{"dev.fullsend.environment": "prod"}
	jobImg := newImage(t, 40)
	jobRef := push(t, jobRepo.Tag("v1"), jobImg)
	jobClaims := claims()
	jobClaims.Extra = env
	signPush(t, good.signer(t), jobRepo, jobImg, sign.Options{Claims: jobClaims, Provenance: provenance(), SBOM: &sign.SBOMOptions{}})

	sbImg := sandboxImage(t, 41)
	sbRef := push(t, sbRepo.Tag("v1"), sbImg)
	signPush(t, good.signer(t), sbRepo, sbImg, sign.Options{Claims: sandboxClaims(env), Provenance: provenance(), SBOM: &sign.SBOMOptions{}})

	base := func(sandbox string) Options {
		return Options{Image: jobRef.String(), SandboxImage: sandbox, Keys: []string{good.pub},
			Annotations: map[string]string{sign.AnnotationPoliciesDigest: testPolicies}}
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T) Options
		want  string // substring of the error; "" = verifies
		is    error
	}{
		{"same signer and requirements", func(t *testing.T) Options {
			o := base(sbRef.String())
			o.RequireProvenance, o.RequireSBOM = true, true
			o.ProvenanceBuilderID = provenance().BuilderID
			o.Annotations["dev.fullsend.environment"] = "prod"
			return o
		}, "", nil},
		{"tag resolved to its digest", func(t *testing.T) Options {
			return base(sbRepo.Tag("v1").String())
		}, "", nil},
		{"unsigned", func(t *testing.T) Options {
			return base(push(t, sbRepo.Tag("unsigned"), sandboxImage(t, 42)).String())
		}, "no signatures found", sign.ErrNoSignatures},
		{"signed by another key", func(t *testing.T) Options {
			img := sandboxImage(t, 43)
			ref := push(t, sbRepo.Tag("other-key"), img)
			signPush(t, other.signer(t), sbRepo, img, sign.Options{Claims: sandboxClaims(nil)})
			return base(ref.String())
		}, "invalid signature", sign.ErrNoValidSignature},
		{"signature for another repository", func(t *testing.T) Options {
			img := sandboxImage(t, 44)
			ref := push(t, sbRepo.Tag("copied"), img)
			// The job image's repository signed this digest; the sandbox
			// repository's copy of the signature names the wrong one.
			push(t, jobRepo.Tag("sb-copy"), img)
			signPush(t, good.signer(t), jobRepo, img, sign.Options{Claims: sandboxClaims(nil)})
			copyTag(t, cosignTag(jobRepo.Digest(ref.DigestStr()), "sig"), cosignTag(ref, "sig"))
			return base(ref.String())
		}, "signature made for another repository", ErrClaims},
		{"tag under require-digest", func(t *testing.T) Options {
			o := base(sbRepo.Tag("v1").String())
			o.RequireDigest = true
			return o
		}, "not pinned by digest", ErrNotPinned},
		{"provenance required, none signed", func(t *testing.T) Options {
			img := sandboxImage(t, 45)
			ref := push(t, sbRepo.Tag("noprov"), img)
			signPush(t, good.signer(t), sbRepo, img, sign.Options{Claims: sandboxClaims(nil)})
			o := base(ref.String())
			o.RequireProvenance = true
			return o
		}, "no attestations found", sign.ErrNoAttestations},
		{"required annotation missing", func(t *testing.T) Options {
			img := sandboxImage(t, 46)
			ref := push(t, sbRepo.Tag("noenv"), img)
			signPush(t, good.signer(t), sbRepo, img, sign.Options{Claims: sandboxClaims(nil)})
			o := base(ref.String())
			o.Annotations["dev.fullsend.environment"] = "prod"
			return o
		}, "lacks required annotation dev.fullsend.environment", ErrClaims},
		{"the job image fails first", func(t *testing.T) Options {
			o := base(sbRef.String())
			o.Image = push(t, jobRepo.Tag("unsigned"), newImage(t, 47)).String()
			return o
		}, "no signatures found", sign.ErrNoSignatures},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.setup(t)
			res, err := Verify(ctx, o)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				sb := res.Sandbox
				if sb == nil || sb.Ref != sbRef.String() || sb.Digest != sbRef.DigestStr() || sb.Repository != sbRepo.Name() {
					t.Fatalf("sandbox result %+v, want %s", sb, sbRef)
				}
				if sb.PoliciesDigest != "" || res.PoliciesDigest != testPolicies || res.Ref != jobRef.String() {
					t.Errorf("policies digest: job %q, sandbox %q (want the job's only)", res.PoliciesDigest, sb.PoliciesDigest)
				}
				if len(sb.Attestations) != len(res.Attestations) {
					t.Errorf("sandbox attestations %+v, job %+v: want the same requirements", sb.Attestations, res.Attestations)
				}
				return
			}
			if err == nil {
				t.Fatalf("verified %+v; want rejection (%s)", res, c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to contain %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v is not %v", err, c.is)
			}
			if c.name != "the job image fails first" && !strings.Contains(err.Error(), "sandbox image "+o.SandboxImage) {
				t.Errorf("error %q does not name the sandbox image", err)
			}
		})
	}
}

// TestSandboxImageOutputs: the verified sandbox image is handed over as
// FULLSEND_VERIFIED_SANDBOX_IMAGE (sandbox-ref on GitHub), only when one
// was verified, and printed.
func TestSandboxImageOutputs(t *testing.T) {
	sbRef := "registry.example/fullsend/sandbox@sha256:" + strings.Repeat("cd", 32)
	job := &Result{Ref: "registry.example/fullsend/agent-sandbox@sha256:" + strings.Repeat("ab", 32),
		Digest: "sha256:" + strings.Repeat("ab", 32), PoliciesDigest: testPolicies, Signers: []string{"key"}}
	with := *job
	with.Sandbox = &Result{Ref: sbRef, Digest: "sha256:" + strings.Repeat("cd", 32), ResolvedTag: "registry.example/fullsend/sandbox:v1", Signers: []string{"key"}}

	for _, c := range []struct {
		name             string
		res              *Result
		dotenv, ghOutput string
	}{
		{"job image only", job,
			"FULLSEND_IMAGE=" + job.Ref + "\nFULLSEND_IMAGE_DIGEST=" + job.Digest + "\nFULLSEND_POLICIES_DIGEST=" + testPolicies + "\n",
			"ref=" + job.Ref + "\ndigest=" + job.Digest + "\npolicies-digest=" + testPolicies + "\n"},
		{"with a sandbox image", &with,
			"FULLSEND_IMAGE=" + job.Ref + "\nFULLSEND_IMAGE_DIGEST=" + job.Digest + "\nFULLSEND_POLICIES_DIGEST=" + testPolicies +
				"\nFULLSEND_VERIFIED_SANDBOX_IMAGE=" + sbRef + "\nFULLSEND_VERIFIED_SANDBOX_IMAGE_DIGEST=" + with.Sandbox.Digest + "\n",
			"ref=" + job.Ref + "\ndigest=" + job.Digest + "\npolicies-digest=" + testPolicies +
				"\nsandbox-ref=" + sbRef + "\nsandbox-digest=" + with.Sandbox.Digest + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			dotenv := filepath.Join(dir, "verify.env")
			if err := WriteDotenv(c.res, dotenv); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(dotenv); string(got) != c.dotenv {
				t.Errorf("dotenv:\n%s\nwant:\n%s", got, c.dotenv)
			}
			env := map[string]string{"GITHUB_OUTPUT": filepath.Join(dir, "out"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md")}
			if _, err := WriteGitHub(c.res, func(k string) string { return env[k] }); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(env["GITHUB_OUTPUT"]); string(got) != c.ghOutput {
				t.Errorf("GITHUB_OUTPUT:\n%s\nwant:\n%s", got, c.ghOutput)
			}
			summary, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
			var text bytes.Buffer
			if err := WriteText(&text, c.res); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(text.String()), "\n")
			if last := lines[len(lines)-1]; last != job.Ref {
				t.Errorf("last line %q: the job image's ref stays the last line", last)
			}
			if has := c.res.Sandbox != nil; strings.Contains(text.String(), sbRef) != has || strings.Contains(string(summary), sbRef) != has {
				t.Errorf("sandbox image shown %v:\n%s\n%s", has, text.String(), summary)
			}
		})
	}

	bad := with
	sb := *with.Sandbox
	sb.Ref = "x\nFULLSEND_IMAGE=evil"
	bad.Sandbox = &sb
	if err := WriteDotenv(&bad, filepath.Join(t.TempDir(), "verify.env")); err == nil {
		t.Error("a sandbox ref with a newline was written")
	}
}

// TestSandboxImageWithLayout: with the job image verified offline from an
// OCI layout, the sandbox image is still read from its registry, where
// OpenShell pulls it, and --repository stays the job image's.
func TestSandboxImageWithLayout(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t)
	jobRepo, _ := name.NewRepository("registry.example/fullsend/agent-sandbox")
	dir, jobRef := signedLayout(t, jobRepo, k, "")
	sbRepo, _ := name.NewRepository(startRegistry(t, nil) + "/fullsend/sandbox")
	img := sandboxImage(t, 50)
	sbRef := push(t, sbRepo.Tag("v1"), img)
	signPush(t, k.signer(t), sbRepo, img, sign.Options{Claims: sandboxClaims(nil)})

	res, err := Verify(ctx, Options{Image: jobRepo.Name(), Layout: dir, Repository: jobRepo.Name(), Keys: []string{k.pub}, SandboxImage: sbRef.String()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ref != jobRef || res.Source != "oci-layout" || res.Sandbox == nil || res.Sandbox.Ref != sbRef.String() || res.Sandbox.Source != "registry" {
		t.Errorf("result %+v, sandbox %+v", res, res.Sandbox)
	}
}
