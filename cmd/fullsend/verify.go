package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/handover"
	"github.com/fullsend-ai/agent-sandbox/image"
	"github.com/fullsend-ai/agent-sandbox/sign"
	"github.com/fullsend-ai/agent-sandbox/verify"
)

type verifyFlags struct {
	keys                []string
	identity, identityR string
	issuer, issuerR     string
	trustedRoot         string
	requireDigest       bool
	repository          string
	annotations         []string
	policiesDigest      string
	requireProvenance   bool
	requireSBOM         bool
	builderID           string
	builderIDR          string
	sourceRepo          string
	requireTlog         bool
	ignoreTlog          bool
	ignoreSCT           bool
	layout              string
	sandboxImage        string
	dotenv              string
	githubOutput        bool
	output              outputFormat
}

func newVerifyCmd() *cobra.Command {
	var f verifyFlags
	cmd := &cobra.Command{
		Use:   "verify IMAGE",
		Short: "Verify the agent-sandbox image before a CI job runs it (fails closed)",
		Long: `Verify an image before running it. Checks run in this order and any failure
exits non-zero:

  1. digest pinning: REPO@sha256:... is used as is; a tag is resolved once,
     logged, and only its digest is verified (--require-digest rejects tags)
  2. signer: one of the --key public keys (OR-ed), or a keyless certificate
     for --certificate-identity[-regexp] from --certificate-oidc-issuer[-regexp]
     (regular expressions must be anchored ^...$)
  3. claims: the signed digest, the repository (docker-reference), the
     required -a KEY=VALUE annotations, and the policy manifest digest
  4. attestations, when asked: SLSA provenance v1 and/or SPDX SBOM for this
     digest, signed by the same signer; a provenance from a local build
     (builder id ` + sign.LocalBuilderID + `, signed outside CI) passes only
     when --provenance-builder-id names it or the -regexp matches it

With --sandbox-image, a second image, the one every sandbox is created from
instead of IMAGE itself, is verified after IMAGE with the same signer and the
same requirements (pinning, transparency, attestations, -a annotations); its
signature names its own repository, and the policies digest (the job image's
claim) is not asked of it. It is always read from its registry (where
OpenShell pulls it), also with --oci-layout.

Keyed signatures are checked offline without a transparency log unless
--require-tlog; keyless ones need their Rekor entry (inclusion promise,
verified offline against the trusted root). The output says which mode ran.

On success it prints the verified REPO@sha256:..., appends ref, digest and
policies-digest to $GITHUB_OUTPUT (and a summary to $GITHUB_STEP_SUMMARY) in
GitHub Actions, and writes FULLSEND_IMAGE, FULLSEND_IMAGE_DIGEST and
FULLSEND_POLICIES_DIGEST to --dotenv for a GitLab CI job's image:. A verified
sandbox image adds sandbox-ref and sandbox-digest (GitHub) or
FULLSEND_VERIFIED_SANDBOX_IMAGE and FULLSEND_VERIFIED_SANDBOX_IMAGE_DIGEST
(--dotenv): the hand-over 'fullsend run' requires of a separate sandbox image.`,
		Example: `  fullsend verify --key cosign.pub ghcr.io/acme/agents@sha256:...
  fullsend verify --key cosign.pub --require-provenance --require-sbom -o json ghcr.io/acme/agents:v1.2.0
  fullsend verify --certificate-identity https://github.com/acme/agents/.github/workflows/release.yml@refs/heads/main \
    --certificate-oidc-issuer https://token.actions.githubusercontent.com ghcr.io/acme/agents@sha256:...
  fullsend verify --key cosign.pub --dotenv verify.env registry.gitlab.com/acme/agents@sha256:...
  fullsend verify --key cosign.pub --sandbox-image ghcr.io/acme/sandbox@sha256:... ghcr.io/acme/agents@sha256:...
  fullsend verify --key cosign.pub --oci-layout out/image ghcr.io/acme/agents     # offline, OCI layout
  fullsend verify --key cosign.pub --oci-layout out/image ghcr.io/acme/agents:v1.2.0`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), &f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.keys, "key", nil, "public key file or KMS URI (repeatable; any one may have signed)")
	fl.StringVar(&f.identity, "certificate-identity", "", "keyless: exact certificate identity (SAN), e.g. the workflow URI")
	fl.StringVar(&f.identityR, "certificate-identity-regexp", "", "keyless: anchored regexp (^...$) for the certificate identity")
	fl.StringVar(&f.issuer, "certificate-oidc-issuer", "", "keyless: exact OIDC issuer, e.g. https://token.actions.githubusercontent.com")
	fl.StringVar(&f.issuerR, "certificate-oidc-issuer-regexp", "", "keyless: anchored regexp (^...$) for the OIDC issuer")
	fl.StringVar(&f.trustedRoot, "trusted-root", "", "Sigstore trusted_root.json (keyless, --require-tlog); default: fetched over TUF from the public-good instance")
	fl.BoolVar(&f.requireDigest, "require-digest", false, "reject a tag: IMAGE must be REPO@sha256:...")
	fl.StringVar(&f.repository, "repository", "", "repository the signature must name (default: IMAGE's repository)")
	fl.StringArrayVarP(&f.annotations, "annotation", "a", nil, "required signed annotation KEY=VALUE (repeatable)")
	fl.StringVar(&f.policiesDigest, "policies-digest", "", "required policy manifest digest (sha256:...; same as -a dev.fullsend.policies.digest=...)")
	fl.BoolVar(&f.requireProvenance, "require-provenance", false, "require a verified SLSA provenance v1 attestation")
	fl.BoolVar(&f.requireSBOM, "require-sbom", false, "require a verified SPDX SBOM attestation")
	fl.StringVar(&f.builderID, "provenance-builder-id", "", "required provenance builder id, e.g. the release workflow URI; "+sign.LocalBuilderID+" accepts a local build (implies --require-provenance)")
	fl.StringVar(&f.builderIDR, "provenance-builder-id-regexp", "", "anchored regexp (^...$) the provenance builder id must match (implies --require-provenance)")
	fl.StringVar(&f.sourceRepo, "provenance-source", "", "required provenance source repository, e.g. git+https://github.com/acme/agents (implies --require-provenance)")
	fl.BoolVar(&f.requireTlog, "require-tlog", false, "keyed signatures must carry a Rekor entry verified against the trusted root")
	fl.BoolVar(&f.ignoreTlog, "insecure-ignore-tlog", false, "keyless: skip the Rekor check (the certificate must then be valid now)")
	fl.BoolVar(&f.ignoreSCT, "insecure-ignore-sct", false, "keyless: skip the certificate-transparency check (private Fulcio without a CT log)")
	fl.StringVar(&f.layout, "oci-layout", "", "verify the image in this OCI layout directory (offline) instead of the registry; IMAGE is then REPO, REPO:TAG (checked against the layout's tag) or REPO@sha256:...")
	// --oci-layout is the name image build and image sign use; --layout
	// stays as a deprecated alias.
	fl.StringVar(&f.layout, "layout", "", "deprecated alias of --oci-layout")
	_ = fl.MarkDeprecated("layout", "use --oci-layout, as image build and image sign do")
	fl.StringVar(&f.sandboxImage, "sandbox-image", "", "also verify this separate sandbox image (REPO@sha256:..., or a tag resolved once) with the same signer and requirements, and export it as the sandbox image fullsend run must use")
	fl.StringVar(&f.dotenv, "dotenv", "", "write FULLSEND_IMAGE, FULLSEND_IMAGE_DIGEST, FULLSEND_POLICIES_DIGEST (and FULLSEND_VERIFIED_SANDBOX_IMAGE[_DIGEST]) to this dotenv file (GitLab artifacts:reports:dotenv)")
	fl.BoolVar(&f.githubOutput, "github-output", true, "in GitHub Actions, append to $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY")
	addOutputFlag(cmd, &f.output)
	return cmd
}

func (f *verifyFlags) options(ctx context.Context, stderr io.Writer, img string) (verify.Options, error) {
	o := verify.Options{
		Image: img, Layout: f.layout, SandboxImage: f.sandboxImage, RequireDigest: f.requireDigest, Keys: f.keys,
		TrustedRoot: f.trustedRoot, Repository: f.repository,
		RequireTlog: f.requireTlog, InsecureIgnoreTlog: f.ignoreTlog, InsecureIgnoreSCT: f.ignoreSCT,
		RequireProvenance: f.requireProvenance, RequireSBOM: f.requireSBOM,
		ProvenanceBuilderID: f.builderID, ProvenanceBuilderIDRegexp: f.builderIDR, ProvenanceSourceRepo: f.sourceRepo,
		Remote: image.RemoteOptions(ctx, image.RemoteConfig{Keychain: image.Keychain(os.Getenv)}),
		Log:    stderr,
	}
	var err error
	if o.Identity, err = f.keylessIdentity(); err != nil {
		return o, err
	}
	if len(f.keys) == 0 && o.Identity == nil {
		return o, usageErrorf("no signer: pass --key cosign.pub (repeatable) or --certificate-identity and --certificate-oidc-issuer")
	}
	if f.ignoreTlog && f.requireTlog {
		return o, usageErrorf("--require-tlog and --insecure-ignore-tlog contradict each other")
	}
	o.Annotations, err = f.requiredAnnotations()
	return o, err
}

// keylessIdentity is the certificate identity and issuer of the flags, or
// nil when none is given.
func (f *verifyFlags) keylessIdentity() (*sign.Identity, error) {
	if f.identity == "" && f.identityR == "" && f.issuer == "" && f.issuerR == "" {
		return nil, nil
	}
	if (f.identity != "" && f.identityR != "") || (f.issuer != "" && f.issuerR != "") {
		return nil, usageErrorf("give either the exact value or the regexp for the certificate identity and issuer, not both")
	}
	id := &sign.Identity{Subject: f.identity, SubjectRegexp: f.identityR, Issuer: f.issuer, IssuerRegexp: f.issuerR}
	if err := id.Validate(); err != nil {
		return nil, usageErrorf("%v", err)
	}
	return id, nil
}

// requiredAnnotations are the -a KEY=VALUE claims, with --policies-digest.
func (f *verifyFlags) requiredAnnotations() (map[string]string, error) {
	out := map[string]string{}
	for _, a := range f.annotations {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return out, usageErrorf("--annotation %q: want KEY=VALUE", a)
		}
		out[k] = v
	}
	if f.policiesDigest != "" {
		if old, ok := out[handover.PoliciesDigestAnnotation]; ok && old != f.policiesDigest {
			return out, usageErrorf("--policies-digest and -a %s disagree", handover.PoliciesDigestAnnotation)
		}
		out[handover.PoliciesDigestAnnotation] = f.policiesDigest
	}
	return out, nil
}

func runVerify(ctx context.Context, stdout, stderr io.Writer, f *verifyFlags, img string) error {
	o, err := f.options(ctx, stderr, img)
	if err != nil {
		return err
	}
	res, err := verify.Verify(ctx, o)
	if err != nil {
		return cliError(fmt.Errorf("verification FAILED: %w", err), nil)
	}
	if f.githubOutput {
		if _, err := verify.WriteGitHub(res, os.Getenv); err != nil {
			return err
		}
	}
	if f.dotenv != "" {
		if err := verify.WriteDotenv(res, f.dotenv); err != nil {
			return err
		}
	}
	if f.output == outputJSON {
		return writeJSON(stdout, res)
	}
	return verify.WriteText(stdout, res)
}
