package publish

import (
	"context"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/image"
	"github.com/fullsend-ai/agent-sandbox/internal/version"
	"github.com/fullsend-ai/agent-sandbox/sign"
)

// validate checks the choice of signer.
func (s *SignOptions) validate() error {
	switch {
	case s.Key == "" && !s.Keyless:
		return invalid(ErrNoSigner, "", nil)
	case s.Key != "" && s.Keyless:
		return invalid(ErrKeyAndKeyless, "", nil)
	case s.Keyless && s.TlogUpload:
		return invalid(ErrTlogUploadKeyless, "", nil)
	case !s.Keyless && s.InsecureSkipTlogUpload:
		return invalid(ErrSkipTlogKeyed, "", nil)
	}
	return nil
}

// Signer checks the options and makes the signer: it loads the key (file
// or KMS) or obtains the keyless certificate, discovering the OIDC token
// through getenv unless IDToken gives one.
func (s *SignOptions) Signer(ctx context.Context, getenv func(string) string) (*sign.Signer, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	if s.Keyless {
		return s.keyless(ctx, getenv)
	}
	return s.keyed(ctx)
}

func (s *SignOptions) keyless(ctx context.Context, getenv func(string) string) (*sign.Signer, error) {
	o := sign.KeylessOptions{FulcioURL: s.FulcioURL, RekorURL: s.RekorURL, NoTlogUpload: s.InsecureSkipTlogUpload, Env: getenv}
	if s.IDToken != nil {
		tok, err := s.IDToken()
		if err != nil {
			return nil, err
		}
		o.IDToken = tok
	}
	return sign.NewKeyless(ctx, o)
}

func (s *SignOptions) keyed(ctx context.Context) (*sign.Signer, error) {
	var pass []byte
	if s.Password != nil {
		var err error
		if pass, err = s.Password(); err != nil {
			return nil, err
		}
	}
	sv, err := sign.LoadPrivateKey(ctx, s.Key, pass)
	if err != nil {
		return nil, err
	}
	signer, err := sign.NewKeyed(sv)
	if err != nil {
		return nil, err
	}
	if s.TlogUpload {
		url := s.RekorURL
		if url == "" {
			url = sign.DefaultRekorURL
		}
		tl, err := sign.NewRekor(url)
		if err != nil {
			return nil, err
		}
		signer.WithTransparencyLog(tl)
	}
	return signer, nil
}

// Resolve decides what a signature claims and which attestations it
// carries, from the options, the subject's manifest annotations and what
// the CI environment says (ci, read by cienv):
//   - the revision claim: GitRevision, else the image's revision
//     annotation, else the CI's commit;
//   - the provenance builder: BuilderID, else the CI workflow (GitHub
//     Actions) or runner (GitLab CI), else, outside CI,
//     sign.LocalBuilderID (cienv.Env.BuilderID); in CI without one, Resolve fails with an
//     *OptionError of Kind sign.ErrNoBuilderID (a CI build never claims to
//     be local);
//   - the provenance source: the CI's repository, else the image's source
//     annotation.
//
// params are the build's external parameters and baseImage the base image
// by digest ("" when unknown), both recorded in the provenance.
func (s *SignOptions) Resolve(annotations map[string]string, ci cienv.Env, params map[string]any, baseImage string) (sign.Options, error) {
	extra := map[string]string{}
	for _, a := range s.Annotations {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return sign.Options{}, invalid(ErrAnnotation, a, nil)
		}
		extra[k] = v
	}
	rev := firstNonEmpty(s.GitRevision, annotations[image.AnnotationRevision], ci.Revision())
	o := sign.Options{Claims: sign.Claims{
		PoliciesDigest:  annotations[image.AnnotationPoliciesDigest],
		GitRevision:     rev,
		FullsendVersion: version.String(),
		RunURL:          ci.RunURL(),
		Extra:           extra,
	}}
	if s.SBOM {
		o.SBOM = &sign.SBOMOptions{Paths: s.SBOMPaths, Tool: "fullsend-" + version.String(), AllLayers: s.SBOMAllLayers}
	}
	if s.Provenance {
		builder := firstNonEmpty(s.BuilderID, ci.BuilderID())
		if builder == "" {
			return o, invalid(sign.ErrNoBuilderID, "", nil)
		}
		src := ci.SourceRepo()
		if src == "" && annotations[image.AnnotationSource] != "" {
			src = "git+" + annotations[image.AnnotationSource]
		}
		o.Provenance = &sign.Provenance{
			BuilderID: builder, SourceRepo: src, SourceRevision: rev, SourceRef: ci.Ref(),
			Parameters: params, BaseImage: baseImage, InvocationID: ci.RunURL(), FullsendVersion: version.String(),
		}
	}
	return o, nil
}

// resolveFromEnv is Resolve with the CI facts read through getenv: the one
// place publish reads the CI environment for signing.
func (s *SignOptions) resolveFromEnv(getenv func(string) string, annotations map[string]string, params map[string]any, baseImage string) (sign.Options, error) {
	return s.Resolve(annotations, cienv.Detect(getenv), params, baseImage)
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
