package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fullsend-ai/agent-sandbox/image"
	"github.com/fullsend-ai/agent-sandbox/internal/version"
	"github.com/fullsend-ai/agent-sandbox/sign"
)

// signFlags are the signing flags shared by `image sign` and
// `image build --sign`.
type signFlags struct {
	key               string
	keyless           bool
	passwordFile      string
	fulcioURL         string
	rekorURL          string
	tlogUpload        bool
	insecureNoTlog    bool
	identityTokenFile string
	annotations       []string
	revision          string
	sbom, provenance  bool
	sbomPaths         []string
	sbomAllLayers     bool
	builderID         string
}

func addSignFlags(fl *pflag.FlagSet, f *signFlags) {
	fl.StringVar(&f.key, "key", "", "cosign private key file, or KMS URI (scheme://...; see docs/sign-verify.md); password from COSIGN_PASSWORD or --password-file")
	fl.BoolVar(&f.keyless, "keyless", false, "sign keylessly: Fulcio certificate for the CI's OIDC identity, Rekor entry")
	fl.StringVar(&f.passwordFile, "password-file", "", "file holding the private key password (default: $COSIGN_PASSWORD)")
	fl.StringVar(&f.fulcioURL, "fulcio-url", sign.DefaultFulcioURL, "Fulcio instance for --keyless")
	fl.StringVar(&f.rekorURL, "rekor-url", sign.DefaultRekorURL, "Rekor instance (--keyless, or --key with --tlog-upload)")
	fl.BoolVar(&f.tlogUpload, "tlog-upload", false, "with --key: also record the signature in Rekor (public log; keyless always does)")
	fl.BoolVar(&f.insecureNoTlog, "insecure-skip-tlog-upload", false, "with --keyless: do not record in Rekor (signatures then verify only while the 10-minute certificate is valid)")
	fl.StringVar(&f.identityTokenFile, "identity-token-file", "", "file holding the OIDC token for --keyless (default: SIGSTORE_ID_TOKEN, or the GitHub Actions token service)")
	fl.StringArrayVarP(&f.annotations, "annotation", "a", nil, "extra signed annotation KEY=VALUE (repeatable)")
	fl.StringVar(&f.revision, "git-revision", "", "git revision to sign as a claim (default: the image's revision annotation, else GITHUB_SHA / CI_COMMIT_SHA)")
	fl.BoolVar(&f.sbom, "sbom", true, "attach an SPDX SBOM attestation (files under --sbom-path, Go modules of the binaries)")
	fl.StringSliceVar(&f.sbomPaths, "sbom-path", nil, "image path prefixes the SBOM lists (default: opt/fullsend/, usr/local/bin/fullsend, usr/bin/fullsend)")
	fl.BoolVar(&f.sbomAllLayers, "sbom-all-layers", false, "list files from every layer, not only the layers fullsend image build added (reads the whole base image)")
	fl.BoolVar(&f.provenance, "provenance", true, "attach a SLSA provenance v1 attestation")
	fl.StringVar(&f.builderID, "builder-id", "", "SLSA builder id (default: the CI workflow / runner; required outside CI with --provenance)")
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

func (f *signFlags) validate() error {
	switch {
	case f.key == "" && !f.keyless:
		return usageErrorf("choose a signer: --key cosign.key (or a KMS URI) or --keyless")
	case f.key != "" && f.keyless:
		return usageErrorf("--key and --keyless are exclusive")
	case f.keyless && f.tlogUpload:
		return usageErrorf("--tlog-upload is for --key; --keyless always uploads (see --insecure-skip-tlog-upload)")
	case !f.keyless && f.insecureNoTlog:
		return usageErrorf("--insecure-skip-tlog-upload is for --keyless")
	}
	return nil
}

// signer loads the key or obtains the keyless certificate.
func (f *signFlags) signer(ctx context.Context) (*sign.Signer, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	if f.keyless {
		o := sign.KeylessOptions{FulcioURL: f.fulcioURL, RekorURL: f.rekorURL, NoTlogUpload: f.insecureNoTlog}
		if f.identityTokenFile != "" {
			b, err := os.ReadFile(f.identityTokenFile)
			if err != nil {
				return nil, fmt.Errorf("reading --identity-token-file: %w", err)
			}
			o.IDToken = strings.TrimSpace(string(b))
		}
		return sign.NewKeyless(ctx, o)
	}
	pass, err := f.readPassword()
	if err != nil {
		return nil, err
	}
	sv, err := sign.LoadPrivateKey(ctx, f.key, pass)
	if err != nil {
		return nil, err
	}
	s, err := sign.NewKeyed(sv)
	if err != nil {
		return nil, err
	}
	if f.tlogUpload {
		tl, err := sign.NewRekor(f.rekorURL)
		if err != nil {
			return nil, err
		}
		s.WithTransparencyLog(tl)
	}
	return s, nil
}

// options builds the claims and attestation requests for a subject whose
// manifest carries annotations.
func (f *signFlags) options(annotations map[string]string, params map[string]any, baseImage string) (sign.Options, error) {
	extra := map[string]string{}
	for _, a := range f.annotations {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return sign.Options{}, usageErrorf("--annotation %q: want KEY=VALUE", a)
		}
		extra[k] = v
	}
	ci := sign.DetectCI(os.Getenv)
	rev := f.revision
	if rev == "" {
		rev = annotations[image.AnnotationRevision]
	}
	if rev == "" {
		rev = ci.Revision
	}
	o := sign.Options{Claims: sign.Claims{
		PoliciesDigest:  annotations[image.AnnotationPoliciesDigest],
		GitRevision:     rev,
		FullsendVersion: version.String(),
		RunURL:          ci.RunURL,
		Extra:           extra,
	}}
	if f.sbom {
		o.SBOM = &sign.SBOMOptions{Paths: f.sbomPaths, Tool: "fullsend-" + version.String(), AllLayers: f.sbomAllLayers}
	}
	if f.provenance {
		builder := f.builderID
		if builder == "" {
			builder = ci.BuilderID
		}
		if builder == "" {
			return o, usageErrorf("--provenance needs a builder id outside GitHub Actions / GitLab CI: pass --builder-id URI (or --provenance=false)")
		}
		src := ci.SourceRepo
		if src == "" && annotations[image.AnnotationSource] != "" {
			src = "git+" + annotations[image.AnnotationSource]
		}
		o.Provenance = &sign.Provenance{
			BuilderID: builder, SourceRepo: src, SourceRevision: rev, SourceRef: ci.Ref,
			Parameters: params, BaseImage: baseImage, InvocationID: ci.RunURL, FullsendVersion: version.String(),
		}
	}
	return o, nil
}

func newImageSignCmd() *cobra.Command {
	var f signFlags
	var output, layoutDir string
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
			if output != "text" && output != "json" {
				return usageErrorf("unknown output format %q (want text or json)", output)
			}
			res, err := runImageSign(cmd.Context(), cmd.ErrOrStderr(), &f, args[0], layoutDir)
			if err != nil {
				return cliError(err)
			}
			return printSignResult(cmd.OutOrStdout(), output, res)
		},
	}
	addSignFlags(cmd.Flags(), &f)
	cmd.Flags().StringVar(&layoutDir, "oci-layout", "", "sign the image in this OCI layout directory (IMAGE names its repository) instead of a registry")
	addOutputFlag(cmd, &output)
	return cmd
}

func runImageSign(ctx context.Context, stderr io.Writer, f *signFlags, ref, layoutDir string) (*sign.Result, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	ropts := image.RemoteOptions(ctx, image.RemoteConfig{Keychain: image.Keychain(os.Getenv)})
	var subj sign.Subject
	var ann map[string]string
	var err error
	if layoutDir != "" {
		subj, ann, err = layoutSubject(layoutDir, ref)
	} else {
		subj, ann, err = remoteSubject(stderr, ref, ropts)
	}
	if err != nil {
		return nil, err
	}
	opts, err := f.options(ann, nil, baseRef(ann))
	if err != nil {
		return nil, err
	}
	s, err := f.signer(ctx)
	if err != nil {
		return nil, err
	}
	signed, err := s.Sign(ctx, subj, opts)
	if err != nil {
		return nil, err
	}
	if layoutDir != "" {
		err = signed.AppendToLayout(layoutDir)
	} else {
		err = signed.Push(ctx, ropts...)
	}
	if err != nil {
		return nil, err
	}
	return &signed.Result, nil
}

// remoteSubject resolves ref (a tag once, logged) and reads the image or
// index it names.
func remoteSubject(log io.Writer, ref string, ropts []remote.Option) (sign.Subject, map[string]string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return sign.Subject{}, nil, usageErrorf("image reference %q: %v", ref, err)
	}
	desc, err := remote.Get(r, ropts...)
	if err != nil {
		return sign.Subject{}, nil, fmt.Errorf("reading %s: %w", r, err)
	}
	if _, pinned := r.(name.Digest); !pinned {
		fmt.Fprintf(log, "resolved %s to %s@%s; signing the digest\n", r, r.Context().Name(), desc.Digest)
	}
	subj := sign.Subject{Repository: r.Context()}
	if desc.MediaType.IsIndex() {
		subj.Index, err = desc.ImageIndex()
	} else {
		subj.Image, err = desc.Image()
	}
	if err != nil {
		return subj, nil, fmt.Errorf("reading %s: %w", r, err)
	}
	return subj, sign.ManifestAnnotations(desc.Manifest), nil
}

func printSignResult(w io.Writer, output string, r *sign.Result) error {
	if output == "json" {
		return writeJSON(w, r)
	}
	fmt.Fprintf(w, "signed %s\n  signer:       %s\n  transparency: %s\n", r.Ref, r.Signer, r.Transparency)
	for _, k := range sortedAnnotationKeys(r.Annotations) {
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
  fullsend image keygen --output-prefix keys/release --password-file /run/secrets/cosign-password`,
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
			if err := sign.GenerateKeyPair(priv, pub, pass); err != nil {
				return cliError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "private key: %s (mode 0600, encrypted)\npublic key:  %s\n", priv, pub)
			return nil
		},
	}
	cmd.Flags().StringVar(&prefix, "output-prefix", "cosign", "write PREFIX.key and PREFIX.pub")
	cmd.Flags().StringVar(&passwordFile, "password-file", "", "file holding the password (default: $COSIGN_PASSWORD)")
	return cmd
}

// baseRef is the base image by digest, from the base.name and
// base.digest annotations, or "" when they are not both present.
func baseRef(ann map[string]string) string {
	n, d := ann[image.AnnotationBaseName], ann[image.AnnotationBaseDigest]
	if n == "" || d == "" {
		return ""
	}
	if r, err := name.ParseReference(n); err == nil {
		return r.Context().Name() + "@" + d
	}
	return ""
}

func sortedAnnotationKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// layoutSubject reads the image (or index) of an OCI layout to sign. ref
// names the repository the signature is for; with @sha256:... it also
// selects the manifest when the layout holds several.
func layoutSubject(dir, ref string) (sign.Subject, map[string]string, error) {
	repoStr, want, _ := strings.Cut(ref, "@")
	repo, err := name.NewRepository(repoStr)
	if err != nil {
		return sign.Subject{}, nil, usageErrorf("repository %q: %v (with --oci-layout, IMAGE names the repository the signature is for)", repoStr, err)
	}
	return sign.LayoutSubject(dir, repo, want)
}

// buildSigning is `image build --sign`: the signer is ready before the
// build (a wrong password fails fast), the signatures are made on the
// locally computed digest right after it, and written with the outputs:
// into the OCI layout before any push, and to each registry after the image.
type buildSigning struct {
	f      *signFlags
	signer *sign.Signer
	signed []*sign.Signed
}

func newBuildSigning(ctx context.Context, f *signFlags, tags []name.Tag, layoutDir string, push bool) (*buildSigning, error) {
	if len(tags) == 0 {
		return nil, usageErrorf("--sign needs --tag REGISTRY/REPO:TAG: the signature names the repository")
	}
	if !push && layoutDir == "" {
		return nil, usageErrorf("--sign needs --push or --oci-layout to store the signature")
	}
	s, err := f.signer(ctx)
	if err != nil {
		return nil, err
	}
	return &buildSigning{f: f, signer: s}, nil
}

// sign signs the build once per repository named by tags.
func (b *buildSigning) sign(ctx context.Context, res *image.Result, tags []name.Tag, params map[string]any) error {
	if b.f.revision == "" {
		b.f.revision = res.Annotations[image.AnnotationRevision]
	}
	base := ""
	if res.BaseDigest.Hex != "" && res.BaseName != "" {
		base = baseRef(map[string]string{image.AnnotationBaseName: res.BaseName, image.AnnotationBaseDigest: res.BaseDigest.String()})
	}
	opts, err := b.f.options(res.Annotations, params, base)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, t := range tags {
		repo := t.Context()
		if seen[repo.Name()] {
			continue
		}
		seen[repo.Name()] = true
		sd, err := b.signer.Sign(ctx, sign.Subject{Repository: repo, Image: res.Image, Index: res.Index}, opts)
		if err != nil {
			return err
		}
		b.signed = append(b.signed, sd)
	}
	return nil
}

// writeLayout stores the first repository's signature in the OCI layout.
func (b *buildSigning) writeLayout(dir string) error { return b.signed[0].AppendToLayout(dir) }

// push writes every repository's signature next to the pushed image.
func (b *buildSigning) push(ctx context.Context, ropts ...remote.Option) error {
	for _, sd := range b.signed {
		if err := sd.Push(ctx, ropts...); err != nil {
			return err
		}
	}
	return nil
}

func (b *buildSigning) results() []sign.Result {
	var out []sign.Result
	for _, sd := range b.signed {
		out = append(out, sd.Result)
	}
	return out
}
