package verify

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fullsend-ai/agent-sandbox/internal/testregistry"
	"github.com/fullsend-ai/agent-sandbox/sign"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

// cosignBin finds the real cosign CLI (.ci/install.d/30-cosign.sh).
func cosignBin(t *testing.T) string {
	t.Helper()
	return testtool.Find(t, "cosign", ".ci/install.d/30-cosign.sh")
}

// cosignRun runs the cosign CLI against the test registry, offline: its
// TUF cache and home are private temp dirs, so nothing reaches Sigstore.
func cosignRun(t *testing.T, bin string, reg *testregistry.Registry, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), reg.Env()...)
	cmd.Env = append(cmd.Env, "HOME="+home, "TUF_ROOT="+filepath.Join(home, "tuf"), "COSIGN_PASSWORD="+testPassword, "COSIGN_EXPERIMENTAL=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestCosignInterop proves both directions against a real registry server
// (TLS, htpasswd): cosign verifies what fullsend signs, and fullsend
// verifies what cosign signs, signatures and attestations alike.
func TestCosignInterop(t *testing.T) {
	bin := cosignBin(t)
	reg := testregistry.Start(t)
	ctx := context.Background()
	ropts := reg.RemoteOptions(ctx)
	repo, err := name.NewRepository(reg.Ref("fullsend/agent-sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	k := newKeys(t)

	t.Run("fullsend signs, cosign verifies", func(t *testing.T) {
		img := newImage(t, 100)
		h, _ := img.Digest()
		ref := repo.Digest(h.String())
		if err := remote.Write(ref, img, ropts...); err != nil {
			t.Fatal(err)
		}
		sd, err := k.signer(t).Sign(ctx, sign.Subject{Repository: repo, Image: img}, sign.Options{
			Claims: claims(), Provenance: provenance(), SBOM: &sign.SBOMOptions{},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := sd.Push(ctx, ropts...); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"verify", "--key", k.pub, "--insecure-ignore-tlog=true", "-a", sign.AnnotationPoliciesDigest + "=" + testPolicies, ref.String()},
			{"verify-attestation", "--key", k.pub, "--insecure-ignore-tlog=true", "--type", "slsaprovenance1", ref.String()},
			{"verify-attestation", "--key", k.pub, "--insecure-ignore-tlog=true", "--type", "spdxjson", ref.String()},
		} {
			out, err := cosignRun(t, bin, reg, args...)
			if err != nil {
				t.Fatalf("cosign %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		// And cosign rejects it under another key.
		other := newKeys(t)
		if out, err := cosignRun(t, bin, reg, "verify", "--key", other.pub, "--insecure-ignore-tlog=true", ref.String()); err == nil {
			t.Fatalf("cosign verified with the wrong key:\n%s", out)
		}
	})

	t.Run("cosign signs, fullsend verifies", func(t *testing.T) {
		img := newImage(t, 101)
		h, _ := img.Digest()
		ref := repo.Digest(h.String())
		if err := remote.Write(repo.Tag("cosign-signed"), img, ropts...); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if out, err := cosignRun(t, bin, reg, "generate-key-pair", "--output-key-prefix", filepath.Join(dir, "ck")); err != nil {
			t.Fatalf("cosign generate-key-pair: %v\n%s", err, out)
		}
		prov, _ := json.Marshal(map[string]any{
			"buildDefinition": map[string]any{"buildType": "https://example/cosign", "externalParameters": map[string]any{},
				"resolvedDependencies": []any{map[string]any{"uri": "git+https://example.com/agents", "digest": map[string]string{"gitCommit": strings.Repeat("2", 40)}}}},
			"runDetails": map[string]any{"builder": map[string]string{"id": "https://ci.example/cosign-builder"}},
		})
		sbom, _ := json.Marshal(map[string]any{"spdxVersion": "SPDX-2.3", "SPDXID": "SPDXRef-DOCUMENT", "name": "x", "dataLicense": "CC0-1.0"})
		provFile, sbomFile := filepath.Join(dir, "prov.json"), filepath.Join(dir, "sbom.json")
		_ = os.WriteFile(provFile, prov, 0o600)
		_ = os.WriteFile(sbomFile, sbom, 0o600)
		key := filepath.Join(dir, "ck.key")
		for _, args := range [][]string{
			{"sign", "--key", key, "--tlog-upload=false", "--yes", "-a", sign.AnnotationPoliciesDigest + "=" + testPolicies, ref.String()},
			{"attest", "--key", key, "--tlog-upload=false", "--yes", "--type", "slsaprovenance1", "--predicate", provFile, ref.String()},
			{"attest", "--key", key, "--tlog-upload=false", "--yes", "--type", "spdxjson", "--predicate", sbomFile, ref.String()},
		} {
			if out, err := cosignRun(t, bin, reg, args...); err != nil {
				t.Fatalf("cosign %s: %v\n%s", args[0], err, out)
			}
		}
		// fullsend loads cosign's key files too: its private key signs a
		// second signature next to cosign's.
		res, err := Verify(ctx, Options{
			Image: repo.Tag("cosign-signed").String(), Keys: []string{filepath.Join(dir, "ck.pub")}, Remote: ropts,
			RequireProvenance: true, RequireSBOM: true, ProvenanceBuilderID: "https://ci.example/cosign-builder",
			Annotations: map[string]string{sign.AnnotationPoliciesDigest: testPolicies},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Ref != ref.String() || res.PoliciesDigest != testPolicies || len(res.Attestations) != 2 {
			t.Errorf("result %+v", res)
		}
		if _, err := Verify(ctx, Options{Image: ref.String(), Keys: []string{k.pub}, Remote: ropts}); err == nil {
			t.Error("verified cosign's signature with another key")
		}
		sv, err := sign.LoadPrivateKey(ctx, key, []byte(testPassword))
		if err != nil {
			t.Fatalf("loading cosign's private key: %v", err)
		}
		if _, err := sign.NewKeyed(sv); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("OCI layouts both ways", func(t *testing.T) {
		// fullsend signs into a layout; cosign verify --local-image reads it.
		img := newImage(t, 102)
		dir := filepath.Join(t.TempDir(), "layout")
		p, err := layout.Write(dir, empty.Index)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.AppendImage(img); err != nil {
			t.Fatal(err)
		}
		sd, err := k.signer(t).Sign(ctx, sign.Subject{Repository: repo, Image: img}, sign.Options{Claims: claims()})
		if err != nil {
			t.Fatal(err)
		}
		if err := sd.AppendToLayout(dir); err != nil {
			t.Fatal(err)
		}
		if out, err := cosignRun(t, bin, reg, "verify", "--key", k.pub, "--insecure-ignore-tlog=true", "--local-image", dir); err != nil {
			t.Fatalf("cosign verify --local-image: %v\n%s", err, out)
		}
		// cosign save writes a signed image's layout; fullsend verifies it offline.
		h, _ := newImage(t, 100).Digest() // signed by fullsend in the first subtest
		saved := filepath.Join(t.TempDir(), "saved")
		if out, err := cosignRun(t, bin, reg, "save", "--dir", saved, repo.Digest(h.String()).String()); err != nil {
			t.Fatalf("cosign save: %v\n%s", err, out)
		}
		if _, err := Verify(ctx, Options{Image: repo.Name(), Layout: saved, Keys: []string{k.pub}}); err != nil {
			t.Fatalf("verifying cosign save's layout: %v", err)
		}
	})

	t.Run("keyless: cosign verifies fullsend's Fulcio signature and Rekor bundle", func(t *testing.T) {
		kl := newKeyless(t)
		img := newImage(t, 103)
		h, _ := img.Digest()
		ref := repo.Digest(h.String())
		if err := remote.Write(ref, img, ropts...); err != nil {
			t.Fatal(err)
		}
		sd, err := kl.signer(t, ghSubject, ghIssuer).Sign(ctx, sign.Subject{Repository: repo, Image: img}, sign.Options{Claims: claims(), Provenance: provenance()})
		if err != nil {
			t.Fatal(err)
		}
		if err := sd.Push(ctx, ropts...); err != nil {
			t.Fatal(err)
		}
		trj, err := kl.trusted.(interface{ MarshalJSON() ([]byte, error) }).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		trFile := filepath.Join(t.TempDir(), "trusted_root.json")
		if err := os.WriteFile(trFile, trj, 0o600); err != nil {
			t.Fatal(err)
		}
		id := []string{"--certificate-identity", ghSubject, "--certificate-oidc-issuer", ghIssuer, "--insecure-ignore-sct=true"}
		if out, err := cosignRun(t, bin, reg, append(append([]string{"verify", "--trusted-root", trFile}, id...), ref.String())...); err != nil {
			t.Fatalf("cosign verify: %v\n%s", err, out)
		}
		// verify-attestation takes --trusted-root only for the new bundle
		// format: give it the CA and the Rekor key as files instead.
		dir := t.TempDir()
		pemFile := func(name string, der []byte, typ string) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
		roots := pemFile("roots.pem", kl.caRoot.Raw, "CERTIFICATE")
		inter := pemFile("inter.pem", kl.caInter.Raw, "CERTIFICATE")
		var rekorDER []byte
		for _, l := range kl.vs.RekorLogs() {
			if rekorDER, err = x509.MarshalPKIXPublicKey(l.PublicKey); err != nil {
				t.Fatal(err)
			}
		}
		t.Setenv("SIGSTORE_REKOR_PUBLIC_KEY", pemFile("rekor.pub", rekorDER, "PUBLIC KEY"))
		args := append(append([]string{"verify-attestation", "--type", "slsaprovenance1", "--ca-roots", roots, "--ca-intermediates", inter}, id...), ref.String())
		if out, err := cosignRun(t, bin, reg, args...); err != nil {
			t.Fatalf("cosign %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		bad := append([]string{"verify", "--trusted-root", trFile, "--certificate-identity", "https://github.com/evil/x", "--certificate-oidc-issuer", ghIssuer, "--insecure-ignore-sct=true"}, ref.String())
		if out, err := cosignRun(t, bin, reg, bad...); err == nil {
			t.Fatalf("cosign accepted the wrong identity:\n%s", out)
		}
	})

	t.Run("keyless: fullsend verifies cosign's Fulcio signature", func(t *testing.T) {
		kl := newKeyless(t)
		img := newImage(t, 104)
		h, _ := img.Digest()
		ref := repo.Digest(h.String())
		if err := remote.Write(ref, img, ropts...); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		roots := filepath.Join(dir, "roots.pem")
		if err := os.WriteFile(roots, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: kl.caRoot.Raw}), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("SIGSTORE_ROOT_FILE", roots)
		// No Rekor here: cosign signs without a tlog entry and skips the SCT
		// check of the in-process CA's certificate.
		tokFile := filepath.Join(dir, "token")
		if err := os.WriteFile(tokFile, []byte(token(ghSubject, ghIssuer)), 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"sign", "--fulcio-url", kl.fulcio.URL, "--identity-token", tokFile,
			"--tlog-upload=false", "--insecure-skip-verify=true", "--yes", ref.String()}
		if out, err := cosignRun(t, bin, reg, args...); err != nil {
			t.Fatalf("cosign sign (keyless): %v\n%s", err, out)
		}
		o := kl.policy(ghSubject, ghIssuer)
		o.Image, o.Remote, o.InsecureIgnoreTlog = ref.String(), ropts, true
		res, err := Verify(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Signers[0], ghSubject) || strings.HasPrefix(res.Transparency, "rekor") {
			t.Errorf("result %+v", res)
		}
		o.Identity = &sign.Identity{Subject: "https://github.com/evil/x", Issuer: ghIssuer}
		if _, err := Verify(ctx, o); err == nil {
			t.Error("verified cosign's keyless signature under another identity")
		}
	})
}
