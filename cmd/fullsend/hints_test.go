package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/image"
	"github.com/fullsend-ai/agent-sandbox/publish"
	"github.com/fullsend-ai/agent-sandbox/sign"
	"github.com/fullsend-ai/agent-sandbox/verify"
)

// TestCLIErrorText: library errors carry no flag names; cliError words them
// exactly as the CLI did when the flags were named in the libraries, keeps
// the library error in the chain, and makes invalid options usage errors.
func TestCLIErrorText(t *testing.T) {
	parseErr := errors.New("parse failure")
	opt := func(kind error, value string, err error) error {
		return &publish.OptionError{Kind: kind, Value: value, Err: err}
	}
	tests := []struct {
		name  string
		err   error
		want  string
		is    error
		usage bool
	}{
		// publish options (usage errors)
		{"no base", opt(publish.ErrNoBase, "", nil), "--base is required (a registry reference, an OCI layout dir, an image tarball, or scratch)", publish.ErrNoBase, true},
		{"push without tag", opt(publish.ErrPushNeedsTag, "", nil), "--push needs at least one --tag REGISTRY/REPO:TAG", publish.ErrPushNeedsTag, true},
		{"bad tag", opt(publish.ErrTag, "x", parseErr), `--tag "x": parse failure (want REGISTRY/REPO:TAG)`, parseErr, true},
		{"bad platform", opt(publish.ErrPlatform, "", parseErr), "--platform: parse failure", publish.ErrPlatform, true},
		{"not a dir", opt(publish.ErrNotDir, "proj", nil), "DIR proj: not a directory", publish.ErrNotDir, true},
		{"bad epoch", opt(publish.ErrEpoch, "", errors.New(`SOURCE_DATE_EPOCH="x": want a non-negative integer number of seconds`)),
			`SOURCE_DATE_EPOCH="x": want a non-negative integer number of seconds`, publish.ErrEpoch, true},
		{"bad binary", opt(publish.ErrBinarySpec, "linux/amd64", nil), `--binary "linux/amd64": want PLATFORM=PATH, e.g. linux/amd64=dist/fullsend`, publish.ErrBinarySpec, true},
		{"binary platform", opt(publish.ErrBinaryPlatform, "linux/arm64", nil), "--binary linux/arm64: platform not in --platform linux/amd64,linux/riscv64", publish.ErrBinaryPlatform, true},
		{"sign without tag", opt(publish.ErrSignNeedsTag, "", nil), "--sign needs --tag REGISTRY/REPO:TAG: the signature names the repository", publish.ErrSignNeedsTag, true},
		{"sign without output", opt(publish.ErrSignNeedsOutput, "", nil), "--sign needs --push or --oci-layout to store the signature", publish.ErrSignNeedsOutput, true},
		{"no signer", opt(publish.ErrNoSigner, "", nil), "choose a signer: --key cosign.key (or a KMS URI) or --keyless", publish.ErrNoSigner, true},
		{"key and keyless", opt(publish.ErrKeyAndKeyless, "", nil), "--key and --keyless are exclusive", publish.ErrKeyAndKeyless, true},
		{"tlog keyless", opt(publish.ErrTlogUploadKeyless, "", nil), "--tlog-upload is for --key; --keyless always uploads (see --insecure-skip-tlog-upload)", publish.ErrTlogUploadKeyless, true},
		{"skip tlog keyed", opt(publish.ErrSkipTlogKeyed, "", nil), "--insecure-skip-tlog-upload is for --keyless", publish.ErrSkipTlogKeyed, true},
		{"bad annotation", opt(publish.ErrAnnotation, "novalue", nil), `--annotation "novalue": want KEY=VALUE`, publish.ErrAnnotation, true},
		{"no builder id", opt(sign.ErrNoBuilderID, "", nil), "--provenance needs a builder id: this CI job does not name its workflow or runner (GITHUB_WORKFLOW_REF; CI_SERVER_URL, CI_PROJECT_PATH, CI_RUNNER_ID): pass --builder-id URI (or --provenance=false)", sign.ErrNoBuilderID, true},
		{"bad image ref", opt(publish.ErrImageRef, "X:v1", parseErr), `image reference "X:v1": parse failure`, publish.ErrImageRef, true},
		{"bad layout repo", opt(publish.ErrLayoutRepository, "X", parseErr), `repository "X": parse failure (with --oci-layout, IMAGE names the repository the signature is for)`, publish.ErrLayoutRepository, true},

		// image
		{"no fullsend binary", fmt.Errorf("no fullsend binary for %s: %w", "linux/amd64", &image.BinaryError{Platform: "linux/amd64", Err: image.ErrNoSource}),
			"no fullsend binary for linux/amd64: fullsend source module not found (hint: pass --source DIR or --binary linux/amd64=PATH)", image.ErrNoSource, false},
		{"development build", fmt.Errorf("no fullsend binary for %s: %w", "linux/arm64", &image.BinaryError{Platform: "linux/arm64", Err: image.ErrNoSource, Reason: "this fullsend is a development build"}),
			"no fullsend binary for linux/arm64: this fullsend is a development build; and no fullsend checkout around the current directory (hint: pass --source DIR or --binary linux/arm64=PATH)", image.ErrNoSource, false},
		{"no toolchain", fmt.Errorf("building fullsend for %s: %w: %w", "linux/arm64", &image.BinaryError{Platform: "linux/arm64", Err: image.ErrNoToolchain}, exec.ErrNotFound),
			"building fullsend for linux/arm64: the go toolchain is not on PATH (hint: install Go or pass --binary linux/arm64=PATH): executable file not found in $PATH", exec.ErrNotFound, false},
		{"no source module", fmt.Errorf("no go.mod for module %s in %s or its parents: %w", image.ModulePath, "/tmp", image.ErrNoSource),
			"no go.mod for module github.com/fullsend-ai/agent-sandbox in /tmp or its parents: fullsend source module not found (hint: pass --source DIR or --binary PLATFORM=PATH)", image.ErrNoSource, false},
		{"openshell mismatch", &image.OpenShellMismatchError{Policies: "v0.0.83", Base: "v0.0.111"},
			"policies compiled for OpenShell v0.0.83, base ships v0.0.111: policies target a different OpenShell version than the base image (hint: fullsend policy compile --openshell-version v0.0.111)", image.ErrOpenShellMismatch, false},
		{"no base (library)", image.ErrNoBase, "no base image given (hint: --base REF, an OCI layout dir, a tarball or scratch)", image.ErrNoBase, false},
		{"no platforms (library)", image.ErrNoPlatforms, "no platforms given (hint: --platform linux/amd64)", image.ErrNoPlatforms, false},
		{"push without tag (library)", fmt.Errorf("push: %w", image.ErrNoTag), "push: no tag given (hint: --tag REGISTRY/REPO:VERSION)", image.ErrNoTag, false},
		{"latest", fmt.Errorf("push %s: %w", "r.example/a:latest", image.ErrLatestTag),
			`push r.example/a:latest: refusing the mutable "latest" tag (hint: tag a version; pass --allow-latest to override)`, image.ErrLatestTag, false},

		// sign
		{"key exists", fmt.Errorf("generating key pair: %s: %w", "cosign.key", sign.ErrKeyExists),
			"generating key pair: cosign.key: key file already exists (remove it first or pick another --output-prefix)", sign.ErrKeyExists, false},
		{"no password", fmt.Errorf("loading private key %s: %w: set COSIGN_PASSWORD (%w)", "cosign.key", sign.ErrNoPassword, parseErr),
			"loading private key cosign.key: no key password: set COSIGN_PASSWORD or pass --password-file (parse failure)", parseErr, false},
		{"no builder id (library)", fmt.Errorf("attesting: provenance: %w", sign.ErrNoBuilderID),
			"attesting: provenance: a builder id is required (pass --builder-id URI)", sign.ErrNoBuilderID, false},
		{"unsigned layout", fmt.Errorf("verification FAILED: %w", &sign.UnsignedLayoutError{Path: "out/image"}),
			`verification FAILED: OCI layout out/image marks no signed image (no "kind" annotation): sign it with fullsend image build --sign or cosign save`, nil, false},

		// verify
		{"bad repository", fmt.Errorf("verification FAILED: %w: %w", verify.ErrPolicy, &verify.RepositoryError{Repository: "X", Err: parseErr}),
			`verification FAILED: invalid verification policy: --repository "X": parse failure`, parseErr, false},
		{"no signer (library)", fmt.Errorf("verification FAILED: %w: %w", verify.ErrPolicy, verify.ErrNoSigner),
			"verification FAILED: invalid verification policy: no signer given: pass --key (public key or KMS URI) or --certificate-identity with --certificate-oidc-issuer", verify.ErrPolicy, false},
		{"layout without repository", fmt.Errorf("verification FAILED: %w: %w", verify.ErrPolicy, verify.ErrNoRepository),
			"verification FAILED: invalid verification policy: verifying an OCI layout needs the repository the signature names (IMAGE argument or --repository)", verify.ErrNoRepository, false},
		{"trusted root", fmt.Errorf("verification FAILED: %w: %w", verify.ErrFetchTrustedRoot, parseErr),
			"verification FAILED: fetching the Sigstore trusted root: parse failure (hint: --trusted-root FILE)", verify.ErrFetchTrustedRoot, false},

		// anything else is left alone
		{"other", parseErr, "parse failure", parseErr, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cliError(tt.err, []string{"linux/amd64", "linux/riscv64"})
			if got.Error() != tt.want {
				t.Errorf("text\n got %s\nwant %s", got, tt.want)
			}
			if tt.is != nil && !errors.Is(got, tt.is) {
				t.Errorf("%v is no longer %v", got, tt.is)
			}
			if wantCode := map[bool]int{true: 2, false: 1}[tt.usage]; exitCode(got) != wantCode {
				t.Errorf("exit code %d, want %d", exitCode(got), wantCode)
			}
		})
	}
	if cliError(nil, nil) != nil {
		t.Error("cliError(nil) != nil")
	}
}

// TestDecodeErrorsNameNoGoType: a policy with a misspelt field used to be
// refused by policy lint and policy test with `field prot not found in
// type openshell.Endpoint`; the error names the policy section instead.
func TestDecodeErrorsNameNoGoType(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "p.yaml")
	src := "version: 1\nnetwork_policies:\n  a:\n    name: a\n    endpoints:\n      - host: x.com\n        port: 443\n        prot: rest\n    binaries: [{path: /usr/bin/curl}]\n"
	if err := os.WriteFile(pol, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"policy", "lint", pol},
		{"policy", "test", "--policy", pol, "--request", "GET https://x.com/ from /usr/bin/curl"},
	} {
		_, _, err := runFullsend(t, args...)
		if err == nil || strings.Contains(err.Error(), "openshell.") || !strings.Contains(err.Error(), "unknown field prot in an endpoint") {
			t.Errorf("%v: %v", args, err)
		}
	}
}
