package publish

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/image"
	"github.com/fullsend-ai/agent-sandbox/internal/version"
	"github.com/fullsend-ai/agent-sandbox/sign"
)

func TestSignOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		o    SignOptions
		want error
	}{
		{"key", SignOptions{Key: "cosign.key"}, nil},
		{"key with tlog upload", SignOptions{Key: "cosign.key", TlogUpload: true}, nil},
		{"keyless", SignOptions{Keyless: true}, nil},
		{"keyless without tlog", SignOptions{Keyless: true, InsecureSkipTlogUpload: true}, nil},
		{"no signer", SignOptions{}, ErrNoSigner},
		{"key and keyless", SignOptions{Key: "cosign.key", Keyless: true}, ErrKeyAndKeyless},
		{"keyless with tlog upload", SignOptions{Keyless: true, TlogUpload: true}, ErrTlogUploadKeyless},
		{"key without tlog", SignOptions{Key: "cosign.key", InsecureSkipTlogUpload: true}, ErrSkipTlogKeyed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.validate()
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("validate() = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestSignerPassword(t *testing.T) {
	o := keyed(t)
	if _, err := o.Signer(context.Background(), env(nil)); err != nil {
		t.Fatal(err)
	}
	o.Password = nil
	if _, err := o.Signer(context.Background(), env(nil)); !errors.Is(err, sign.ErrNoPassword) {
		t.Errorf("no password: %v, want ErrNoPassword", err)
	}
	readErr := errors.New("unreadable")
	o.Password = func() ([]byte, error) { return nil, readErr }
	if _, err := o.Signer(context.Background(), env(nil)); !errors.Is(err, readErr) {
		t.Errorf("password source error: %v", err)
	}
}

// TestResolve is the table of what a signature claims: revision, builder
// and source come from the options, the image, or the CI, in that order.
func TestResolve(t *testing.T) {
	const (
		imgRev = "1111111111111111111111111111111111111111"
		ciRev  = "2222222222222222222222222222222222222222"
		flgRev = "3333333333333333333333333333333333333333"
	)
	ann := map[string]string{
		image.AnnotationRevision:       imgRev,
		image.AnnotationPoliciesDigest: "sha256:abc",
		image.AnnotationSource:         "https://github.com/acme/agents",
	}
	githubVars := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/agents",
		"GITHUB_SHA": ciRev, "GITHUB_REF": "refs/heads/main", "GITHUB_RUN_ID": "7",
	}
	githubNoWorkflow := cienv.Detect(env(maps.Clone(githubVars)))
	githubVars["GITHUB_WORKFLOW_REF"] = "acme/agents/.github/workflows/release.yml@refs/heads/main"
	github := cienv.Detect(env(githubVars))
	gitlab := cienv.Detect(env(map[string]string{
		"GITLAB_CI": "true", "CI_COMMIT_SHA": ciRev, "CI_COMMIT_REF_NAME": "main", "CI_JOB_URL": "https://gitlab.example/acme/agents/-/jobs/9",
		"CI_PROJECT_URL": "https://gitlab.example/acme/agents", "CI_SERVER_URL": "https://gitlab.example",
		"CI_PROJECT_PATH": "acme/agents", "CI_RUNNER_ID": "42",
	}))
	tests := []struct {
		name                     string
		o                        SignOptions
		ann                      map[string]string
		ci                       cienv.Env
		wantRev, wantRun         string
		wantBuilder, wantSource  string
		wantRef                  string
		wantErr                  error
		wantSBOM, wantProvenance bool
	}{
		{name: "local, builder given: revision and source from the image",
			o: SignOptions{Provenance: true, SBOM: true, BuilderID: "https://ci.example/b"}, ann: ann,
			wantRev: imgRev, wantBuilder: "https://ci.example/b", wantSource: "git+https://github.com/acme/agents", wantSBOM: true, wantProvenance: true},
		{name: "local, no builder: the local builder id",
			o: SignOptions{Provenance: true}, ann: ann,
			wantRev: imgRev, wantBuilder: sign.LocalBuilderID, wantSource: "git+https://github.com/acme/agents", wantProvenance: true},
		{name: "github without a workflow ref, no builder: refused, never local",
			o: SignOptions{Provenance: true}, ann: ann, ci: githubNoWorkflow, wantErr: sign.ErrNoBuilderID},
		{name: "github without a workflow ref, builder given",
			o: SignOptions{Provenance: true, BuilderID: "https://ci.example/b"}, ann: ann, ci: githubNoWorkflow,
			wantRev: imgRev, wantRun: "https://github.com/acme/agents/actions/runs/7", wantRef: "refs/heads/main",
			wantBuilder: "https://ci.example/b", wantSource: "git+https://github.com/acme/agents", wantProvenance: true},
		{name: "local, no provenance: no builder needed",
			o: SignOptions{SBOM: true}, ann: ann, wantRev: imgRev, wantSBOM: true},
		{name: "github: builder is the workflow, source the repository",
			o: SignOptions{Provenance: true}, ann: ann, ci: github,
			wantRev: imgRev, wantRun: "https://github.com/acme/agents/actions/runs/7", wantRef: "refs/heads/main",
			wantBuilder: "https://github.com/acme/agents/.github/workflows/release.yml@refs/heads/main",
			wantSource:  "git+https://github.com/acme/agents", wantProvenance: true},
		{name: "gitlab: builder is the runner",
			o: SignOptions{Provenance: true}, ann: map[string]string{}, ci: gitlab,
			wantRev: ciRev, wantRun: "https://gitlab.example/acme/agents/-/jobs/9", wantRef: "refs/heads/main",
			wantBuilder: "https://gitlab.example/acme/agents/-/runners/42",
			wantSource:  "git+https://gitlab.example/acme/agents", wantProvenance: true},
		{name: "explicit revision and builder win over image and CI",
			o: SignOptions{Provenance: true, GitRevision: flgRev, BuilderID: "https://ci.example/b"}, ann: ann, ci: github,
			wantRev: flgRev, wantRun: "https://github.com/acme/agents/actions/runs/7", wantRef: "refs/heads/main",
			wantBuilder: "https://ci.example/b", wantSource: "git+https://github.com/acme/agents", wantProvenance: true},
		{name: "image without revision: the CI's commit",
			o: SignOptions{}, ann: map[string]string{}, ci: github, wantRev: ciRev, wantRun: "https://github.com/acme/agents/actions/runs/7"},
		{name: "bad annotation",
			o: SignOptions{Annotations: []string{"novalue"}}, ann: ann, wantErr: ErrAnnotation},
		{name: "annotation with an empty key",
			o: SignOptions{Annotations: []string{"=v"}}, ann: ann, wantErr: ErrAnnotation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := map[string]any{"base": "scratch"}
			got, err := tt.o.Resolve(tt.ann, tt.ci, params, "ghcr.io/acme/base@sha256:00")
			if tt.wantErr != nil {
				var oe *OptionError
				if !errors.As(err, &oe) || !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want an OptionError of %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := got.Claims
			if c.GitRevision != tt.wantRev || c.RunURL != tt.wantRun || c.FullsendVersion != version.String() || c.PoliciesDigest != tt.ann[image.AnnotationPoliciesDigest] {
				t.Errorf("claims %+v", c)
			}
			if (got.SBOM != nil) != tt.wantSBOM || (got.Provenance != nil) != tt.wantProvenance {
				t.Fatalf("sbom %v provenance %v", got.SBOM, got.Provenance)
			}
			if p := got.Provenance; p != nil {
				want := sign.Provenance{BuilderID: tt.wantBuilder, SourceRepo: tt.wantSource, SourceRevision: tt.wantRev, SourceRef: tt.wantRef,
					Parameters: params, BaseImage: "ghcr.io/acme/base@sha256:00", InvocationID: tt.wantRun, FullsendVersion: version.String()}
				if !reflect.DeepEqual(*p, want) {
					t.Errorf("provenance\n got %+v\nwant %+v", *p, want)
				}
			}
		})
	}
}

func TestResolveAnnotations(t *testing.T) {
	o := SignOptions{Annotations: []string{"team=agents", "empty=", "k=v=w"}}
	got, err := o.Resolve(map[string]string{}, cienv.Env{}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"team": "agents", "empty": "", "k": "v=w"}
	if !reflect.DeepEqual(got.Claims.Extra, want) {
		t.Errorf("extra %v, want %v", got.Claims.Extra, want)
	}
}
