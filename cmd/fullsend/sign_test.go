package main

import (
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/fullsend-ai/agent-sandbox/sign"
	"github.com/fullsend-ai/agent-sandbox/verify"
)

func TestImageKeygenCLI(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "release")
	t.Setenv("COSIGN_PASSWORD", "")
	if _, _, err := runFullsend(t, "image", "keygen", "--output-prefix", prefix); exitCode(err) != 2 {
		t.Fatalf("without a password: exit %d (%v), want 2", exitCode(err), err)
	}
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runFullsend(t, "image", "keygen", "--output-prefix", prefix, "--password-file", pwFile); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if st, err := os.Stat(prefix + ".key"); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("private key: %v %v", st, err)
	}
	if _, _, err := runFullsend(t, "image", "keygen", "--output-prefix", prefix, "--password-file", pwFile); !errors.Is(err, sign.ErrKeyExists) {
		t.Fatalf("second keygen: %v, want ErrKeyExists", err)
	}
}

func TestVerifyCLIUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no signer", []string{"verify", "example.com/a@sha256:" + strings.Repeat("0", 64)}},
		{"unanchored regexp", []string{"verify", "--certificate-identity-regexp", "acme", "--certificate-oidc-issuer", "https://x", "example.com/a:v1"}},
		{"identity without issuer", []string{"verify", "--certificate-identity", "me", "example.com/a:v1"}},
		{"tlog flags contradict", []string{"verify", "--key", "k.pub", "--require-tlog", "--insecure-ignore-tlog", "example.com/a:v1"}},
		{"bad annotation", []string{"verify", "--key", "k.pub", "-a", "novalue", "example.com/a:v1"}},
		{"sign without signer", []string{"image", "sign", "example.com/a:v1"}},
		{"key and keyless", []string{"image", "sign", "--key", "k", "--keyless", "example.com/a:v1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runFullsend(t, tc.args...)
			if exitCode(err) != 2 {
				t.Fatalf("exit %d (%v), want 2", exitCode(err), err)
			}
		})
	}
}

// TestImageBuildSignCLI: build --sign pushes the signature with the image
// (and writes it into the OCI layout); verify accepts both and exports the
// signed policy digest; another key is rejected with exit code 1.
func TestImageBuildSignCLI(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	dir := t.TempDir()
	t.Setenv("COSIGN_PASSWORD", "build-sign-test")
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITLAB_CI", "")
	for _, p := range []string{"good", "other"} {
		if _, stderr, err := runFullsend(t, "image", "keygen", "--output-prefix", filepath.Join(dir, p)); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
	}
	layoutDir := filepath.Join(dir, "layout")
	tag := host + "/acme/agents:v1.2.3"
	stdout, stderr, err := runFullsend(t, append(imageCLIArgs(t), "--tag", tag, "--push", "--oci-layout", layoutDir,
		"--sign", "--key", filepath.Join(dir, "good.key"), "--builder-id", "https://ci.example/builder", "-o", "json")...)
	if err != nil {
		t.Fatalf("image build --sign: %v\n%s", err, stderr)
	}
	var rep imageBuildReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Signatures) != 1 || len(rep.Signatures[0].Attestations) != 2 || rep.Signatures[0].Annotations[sign.AnnotationPoliciesDigest] != rep.PoliciesDigest {
		t.Fatalf("signatures in the report: %+v", rep.Signatures)
	}

	dotenv := filepath.Join(dir, "verify.env")
	for _, args := range [][]string{
		{"verify", "--key", filepath.Join(dir, "good.pub"), "--require-provenance", "--require-sbom", "--dotenv", dotenv, "-o", "json", tag},
		{"verify", "--key", filepath.Join(dir, "good.pub"), "--oci-layout", layoutDir, "-o", "json", host + "/acme/agents"},
		// The tag the build was given: REPO:TAG with --layout (it failed to parse).
		{"verify", "--key", filepath.Join(dir, "good.pub"), "--oci-layout", layoutDir, "-o", "json", tag},
	} {
		stdout, stderr, err := runFullsend(t, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		var res verify.Result
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		if res.Digest != rep.Digest || res.PoliciesDigest != rep.PoliciesDigest {
			t.Errorf("verified %+v, built %s (policies %s)", res, rep.Digest, rep.PoliciesDigest)
		}
	}
	env, _ := os.ReadFile(dotenv)
	if !strings.Contains(string(env), "FULLSEND_POLICIES_DIGEST="+rep.PoliciesDigest+"\n") {
		t.Errorf("dotenv:\n%s", env)
	}
	_, _, err = runFullsend(t, "verify", "--key", filepath.Join(dir, "other.pub"), tag)
	if err == nil || exitCode(err) != 1 || !errors.Is(err, sign.ErrNoValidSignature) {
		t.Fatalf("wrong key: exit %d (%v), want 1 and ErrNoValidSignature", exitCode(err), err)
	}

	// --sandbox-image: the same image as its own sandbox image, by tag,
	// is verified again and handed over by digest.
	sbEnv := filepath.Join(dir, "verify-sandbox.env")
	if _, stderr, err := runFullsend(t, "verify", "--key", filepath.Join(dir, "good.pub"), "--require-provenance", "--sandbox-image", tag, "--dotenv", sbEnv, tag); err != nil {
		t.Fatalf("verify --sandbox-image: %v\n%s", err, stderr)
	}
	env, _ = os.ReadFile(sbEnv)
	if want := "FULLSEND_VERIFIED_SANDBOX_IMAGE=" + host + "/acme/agents@" + rep.Digest + "\n"; !strings.Contains(string(env), want) {
		t.Errorf("dotenv:\n%s\nwant %s", env, want)
	}
	_, _, err = runFullsend(t, "verify", "--key", filepath.Join(dir, "good.pub"), "--sandbox-image", host+"/acme/missing:v1", tag)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "sandbox image "+host+"/acme/missing:v1") {
		t.Fatalf("missing sandbox image: exit %d (%v), want 1 naming it", exitCode(err), err)
	}
}

// TestImageBuildSignLocalCLI: outside CI, `image build --sign --key` works
// as typed; its provenance names the local builder, which verify refuses
// under --require-provenance or a CI builder id (naming both ids) and
// accepts only when required by name.
func TestImageBuildSignLocalCLI(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	dir := t.TempDir()
	t.Setenv("COSIGN_PASSWORD", "build-sign-local-test")
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITLAB_CI", "")
	if _, stderr, err := runFullsend(t, "image", "keygen", "--output-prefix", filepath.Join(dir, "cosign")); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	tag := host + "/acme/agents:v1.2.3"
	if _, stderr, err := runFullsend(t, append(imageCLIArgs(t), "--tag", tag, "--push", "--sign", "--key", filepath.Join(dir, "cosign.key"))...); err != nil {
		t.Fatalf("image build --sign --key outside CI: %v\n%s", err, stderr)
	}
	const ciBuilder = "https://github.com/acme/agents/.github/workflows/release.yml@refs/heads/main"
	verifyArgs := func(extra ...string) []string {
		return append(append([]string{"verify", "--key", filepath.Join(dir, "cosign.pub"), "-o", "json"}, extra...), tag)
	}
	for _, tc := range []struct {
		name  string
		extra []string
		want  []string // substrings of the error
	}{
		{"provenance required", []string{"--require-provenance"},
			[]string{`"` + sign.LocalBuilderID + `" is a local build (signed outside CI)`}},
		{"CI builder id required", []string{"--provenance-builder-id", ciBuilder},
			[]string{`provenance builder id "` + sign.LocalBuilderID + `", required "` + ciBuilder + `"`}},
		{"CI builder regexp", []string{"--provenance-builder-id-regexp", `^https://github\.com/acme/agents/\.github/workflows/.*$`},
			[]string{`provenance builder id "` + sign.LocalBuilderID + `", required to match`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runFullsend(t, verifyArgs(tc.extra...)...)
			if err == nil || exitCode(err) != 1 {
				t.Fatalf("exit %d (%v), want 1", exitCode(err), err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant %q", err, w)
				}
			}
		})
	}
	stdout, stderr, err := runFullsend(t, verifyArgs("--provenance-builder-id", sign.LocalBuilderID)...)
	if err != nil {
		t.Fatalf("verify --provenance-builder-id %s: %v\n%s", sign.LocalBuilderID, err, stderr)
	}
	var res verify.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Attestations) != 1 || res.Attestations[0].Provenance == nil || res.Attestations[0].Provenance.BuilderID != sign.LocalBuilderID {
		t.Errorf("attestations %+v", res.Attestations)
	}
	// Without a provenance requirement a locally signed image verifies.
	if _, stderr, err := runFullsend(t, verifyArgs()...); err != nil {
		t.Fatalf("verify: %v\n%s", err, stderr)
	}
}
