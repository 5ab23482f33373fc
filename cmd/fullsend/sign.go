package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fullsend-ai/agent-sandbox/publish"
	"github.com/fullsend-ai/agent-sandbox/sign"
)

// signFlags are the signing flags shared by `image sign` and
// `image build --sign`: the publish signing options, plus the files the
// secrets are read from.
type signFlags struct {
	opts              publish.SignOptions
	passwordFile      string
	identityTokenFile string
}

func addSignFlags(fl *pflag.FlagSet, f *signFlags) {
	o := &f.opts
	fl.StringVar(&o.Key, "key", "", "cosign private key file, or KMS URI (scheme://...; see docs/sign-verify.md); password from COSIGN_PASSWORD or --password-file")
	fl.BoolVar(&o.Keyless, "keyless", false, "sign keylessly: Fulcio certificate for the CI's OIDC identity, Rekor entry")
	fl.StringVar(&f.passwordFile, "password-file", "", "file holding the private key password (default: $COSIGN_PASSWORD)")
	fl.StringVar(&o.FulcioURL, "fulcio-url", sign.DefaultFulcioURL, "Fulcio instance for --keyless")
	fl.StringVar(&o.RekorURL, "rekor-url", sign.DefaultRekorURL, "Rekor instance (--keyless, or --key with --tlog-upload)")
	fl.BoolVar(&o.TlogUpload, "tlog-upload", false, "with --key: also record the signature in Rekor (public log; keyless always does)")
	fl.BoolVar(&o.InsecureSkipTlogUpload, "insecure-skip-tlog-upload", false, "with --keyless: do not record in Rekor (signatures then verify only while the 10-minute certificate is valid)")
	fl.StringVar(&f.identityTokenFile, "identity-token-file", "", "file holding the OIDC token for --keyless (default: SIGSTORE_ID_TOKEN, or the GitHub Actions token service)")
	fl.StringArrayVarP(&o.Annotations, "annotation", "a", nil, "extra signed annotation KEY=VALUE (repeatable)")
	fl.StringVar(&o.GitRevision, "git-revision", "", "git revision to sign as a claim (default: the image's revision annotation, else GITHUB_SHA / CI_COMMIT_SHA)")
	fl.BoolVar(&o.SBOM, "sbom", true, "attach an SPDX SBOM attestation (files under --sbom-path, Go modules of the binaries)")
	fl.StringSliceVar(&o.SBOMPaths, "sbom-path", nil, "image path prefixes the SBOM lists (default: opt/fullsend/, usr/local/bin/fullsend, usr/bin/fullsend)")
	fl.BoolVar(&o.SBOMAllLayers, "sbom-all-layers", false, "list files from every layer, not only the layers fullsend image build added (reads the whole base image)")
	fl.BoolVar(&o.Provenance, "provenance", true, "attach a SLSA provenance v1 attestation")
	fl.StringVar(&o.BuilderID, "builder-id", "", "SLSA builder id (default: the CI workflow / runner; outside CI "+sign.LocalBuilderID+")")
}

// options returns the signing options, with the password and the OIDC
// token read from the flags' files when the signer is made.
func (f *signFlags) options() publish.SignOptions {
	o := f.opts
	o.Password = f.readPassword
	if f.identityTokenFile != "" {
		o.IDToken = func() (string, error) {
			b, err := os.ReadFile(f.identityTokenFile)
			if err != nil {
				return "", fmt.Errorf("reading --identity-token-file: %w", err)
			}
			return strings.TrimSpace(string(b)), nil
		}
	}
	return o
}

// readPassword returns the private key password from --password-file or
// COSIGN_PASSWORD. Secrets never come from argv.
func (f *signFlags) readPassword() ([]byte, error) {
	if f.passwordFile != "" {
		b, err := os.ReadFile(f.passwordFile)
		if err != nil {
			return nil, fmt.Errorf("reading --password-file: %w", err)
		}
		return []byte(strings.TrimRight(string(b), "\r\n")), nil
	}
	return []byte(os.Getenv("COSIGN_PASSWORD")), nil
}

func newImageSignCmd() *cobra.Command {
	var f signFlags
	var output outputFormat
	var layoutDir string
	cmd := &cobra.Command{
		Use:   "sign IMAGE",
		Short: "Sign an existing image by digest, with SBOM and SLSA provenance attestations",
		Long: `Sign an image already in a registry (or in an OCI layout with --oci-layout)
the cosign way: a cosign v2 signature under the sha256-<digest>.sig tag and
in-toto attestations under .att, verifiable by fullsend verify, cosign verify,
Kyverno and policy-controller.

A tag is resolved to its digest once (and logged); only the digest is signed.
The signature claims the repository, the digest, the policy manifest digest
(from the image's dev.fullsend.policies.digest annotation), the git revision,
the fullsend version and the CI run URL.`,
		Example: `  COSIGN_PASSWORD=... fullsend image sign --key cosign.key ghcr.io/acme/agents@sha256:...
  fullsend image sign --keyless ghcr.io/acme/agents:v1.2.0     # in CI, with id-token: write
  fullsend image sign --key cosign.key --oci-layout out/image ghcr.io/acme/agents`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := runImageSign(cmd.Context(), cmd.ErrOrStderr(), &f, args[0], layoutDir)
			if err != nil {
				return err
			}
			return printSignResult(cmd.OutOrStdout(), output, res)
		},
	}
	addSignFlags(cmd.Flags(), &f)
	cmd.Flags().StringVar(&layoutDir, "oci-layout", "", "sign the image in this OCI layout directory (IMAGE names its repository) instead of a registry")
	addOutputFlag(cmd, &output)
	return cmd
}

// runImageSign is flags -> publish.SignImageOptions -> publish.SignImage.
func runImageSign(ctx context.Context, stderr io.Writer, f *signFlags, ref, layoutDir string) (*sign.Result, error) {
	res, err := publish.SignImage(ctx, publish.SignImageOptions{
		Image: ref, OCILayout: layoutDir, Sign: f.options(), Getenv: os.Getenv, Log: stderr,
	})
	if err != nil {
		return nil, cliError(err, nil)
	}
	return res, nil
}

func printSignResult(w io.Writer, output outputFormat, r *sign.Result) error {
	if output == outputJSON {
		return writeJSON(w, r)
	}
	fmt.Fprintf(w, "signed %s\n  signer:       %s\n  transparency: %s\n", r.Ref, r.Signer, r.Transparency)
	for _, k := range slices.Sorted(maps.Keys(r.Annotations)) {
		fmt.Fprintf(w, "  claim:        %s=%s\n", k, r.Annotations[k])
	}
	for _, a := range r.Attestations {
		fmt.Fprintf(w, "  attestation:  %s\n", a)
	}
	return nil
}

func newImageKeygenCmd() *cobra.Command {
	var prefix, passwordFile string
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Write an encrypted cosign key pair (PREFIX.key, PREFIX.pub)",
		Long: `Generate an ECDSA P-256 key pair in cosign's format: PREFIX.key is encrypted
with the password from COSIGN_PASSWORD or --password-file (never from the
command line) and written with mode 0600; PREFIX.pub is the public key for
fullsend verify --key and cosign verify --key. Existing files are never
overwritten.`,
		Example: `  COSIGN_PASSWORD="$(pass show fullsend/cosign)" fullsend image keygen
  fullsend image keygen --output-prefix keys/release --password-file cosign-password.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := signFlags{passwordFile: passwordFile}
			pass, err := f.readPassword()
			if err != nil {
				return err
			}
			if len(pass) == 0 {
				return usageErrorf("no password: set COSIGN_PASSWORD or pass --password-file (an unencrypted key is refused)")
			}
			priv, pub := prefix+".key", prefix+".pub"
			// --output-prefix keys/release: the directory is created.
			if err := os.MkdirAll(filepath.Dir(priv), 0o755); err != nil {
				return err
			}
			if err := sign.GenerateKeyPair(priv, pub, pass); err != nil {
				return cliError(err, nil)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "private key: %s (mode 0600, encrypted)\npublic key:  %s\n", priv, pub)
			return nil
		},
	}
	cmd.Flags().StringVar(&prefix, "output-prefix", "cosign", "write PREFIX.key and PREFIX.pub")
	cmd.Flags().StringVar(&passwordFile, "password-file", "", "file holding the password (default: $COSIGN_PASSWORD)")
	return cmd
}
