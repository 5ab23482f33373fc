package sign

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// BuildTypeImage is the SLSA buildType of `fullsend image build`.
const BuildTypeImage = "https://fullsend.dev/attestations/image-build/v1"

// ErrNoBuilderID reports a provenance without a builder id (in GitHub
// Actions or GitLab CI when the variable naming the workflow or runner is
// missing, and no builder is named explicitly).
var ErrNoBuilderID = errors.New("a builder id is required")

// LocalBuilderID is the builder id of a provenance made outside CI
// (cienv.LocalBuilderID): a constant URN that names no user or host and
// never equals a CI builder id, which is an https URL.
const LocalBuilderID = cienv.LocalBuilderID

// IsLocalBuilderID reports whether id is the builder id of a local build.
func IsLocalBuilderID(id string) bool { return id == LocalBuilderID }

// Provenance holds the facts of a SLSA provenance v1 predicate
// (https://slsa.dev/spec/v1.0/provenance).
type Provenance struct {
	// BuilderID identifies the build platform (required), for example the
	// CI workflow: https://github.com/OWNER/REPO/.github/workflows/release.yml@refs/heads/main.
	BuilderID string
	// BuildType defaults to BuildTypeImage.
	BuildType string
	// SourceRepo is the source repository URI (git+https://...).
	SourceRepo string
	// SourceRevision is the git commit built.
	SourceRevision string
	// SourceRef is the git ref built (refs/heads/main), optional.
	SourceRef string
	// Parameters are the external build parameters (the build flags).
	Parameters map[string]any
	// BaseImage is the base image by digest, recorded as a resolved dependency.
	BaseImage string
	// InvocationID is the CI run URL.
	InvocationID string
	// FullsendVersion is recorded as the builder version.
	FullsendVersion string
	// StartedOn and FinishedOn are optional build timestamps.
	StartedOn, FinishedOn time.Time
}

// slsaPredicate mirrors the SLSA provenance v1 predicate.
type slsaPredicate struct {
	BuildDefinition slsaBuildDefinition `json:"buildDefinition"`
	RunDetails      slsaRunDetails      `json:"runDetails"`
}

type slsaBuildDefinition struct {
	BuildType            string                   `json:"buildType"`
	ExternalParameters   map[string]any           `json:"externalParameters"`
	InternalParameters   map[string]any           `json:"internalParameters,omitempty"`
	ResolvedDependencies []slsaResourceDescriptor `json:"resolvedDependencies,omitempty"`
}

type slsaResourceDescriptor struct {
	URI    string            `json:"uri,omitempty"`
	Digest map[string]string `json:"digest,omitempty"`
	Name   string            `json:"name,omitempty"`
}

type slsaRunDetails struct {
	Builder  slsaBuilder   `json:"builder"`
	Metadata *slsaMetadata `json:"metadata,omitempty"`
}

type slsaBuilder struct {
	ID      string            `json:"id"`
	Version map[string]string `json:"version,omitempty"`
}

type slsaMetadata struct {
	InvocationID string `json:"invocationId,omitempty"`
	StartedOn    string `json:"startedOn,omitempty"`
	FinishedOn   string `json:"finishedOn,omitempty"`
}

// ProvenanceSummary is what verify reads back from a SLSA v1 predicate.
type ProvenanceSummary struct {
	BuilderID      string `json:"builder_id"`
	BuildType      string `json:"build_type"`
	SourceRepo     string `json:"source_repo,omitempty"`
	SourceRevision string `json:"source_revision,omitempty"`
}

// ParseProvenance reads the fields verify checks from a SLSA provenance v1
// predicate. The source is the resolved dependency carrying a gitCommit
// digest (the form fullsend and the SLSA GitHub generator write).
func ParseProvenance(predicate []byte) (*ProvenanceSummary, error) {
	var p slsaPredicate
	if err := json.Unmarshal(predicate, &p); err != nil {
		return nil, fmt.Errorf("decoding SLSA provenance v1 predicate: %w", err)
	}
	if p.RunDetails.Builder.ID == "" {
		return nil, errors.New("SLSA provenance predicate has no runDetails.builder.id")
	}
	out := &ProvenanceSummary{BuilderID: p.RunDetails.Builder.ID, BuildType: p.BuildDefinition.BuildType}
	for _, d := range p.BuildDefinition.ResolvedDependencies {
		if c, ok := d.Digest["gitCommit"]; ok {
			out.SourceRepo, out.SourceRevision = d.URI, c
			break
		}
	}
	return out, nil
}

func provenanceStatement(ref name.Digest, p Provenance) (*statement, error) {
	if p.BuilderID == "" {
		return nil, fmt.Errorf("provenance: %w", ErrNoBuilderID)
	}
	bt := p.BuildType
	if bt == "" {
		bt = BuildTypeImage
	}
	deps, err := p.resolvedDependencies()
	if err != nil {
		return nil, err
	}
	pred := slsaPredicate{
		BuildDefinition: slsaBuildDefinition{BuildType: bt, ExternalParameters: p.externalParameters(), ResolvedDependencies: deps},
		RunDetails:      slsaRunDetails{Builder: slsaBuilder{ID: p.BuilderID}, Metadata: p.metadata()},
	}
	if p.FullsendVersion != "" {
		pred.RunDetails.Builder.Version = map[string]string{"fullsend": p.FullsendVersion}
	}
	return newStatement(ref, PredicateSLSAProvenance1, pred), nil
}

// externalParameters is the predicate's externalParameters: the
// Parameters and, with a SourceRepo, "source" (uri, digest.gitCommit,
// ref as given).
func (p Provenance) externalParameters() map[string]any {
	ext := map[string]any{}
	for k, v := range p.Parameters {
		ext[k] = v
	}
	if p.SourceRepo != "" {
		src := map[string]any{"uri": p.SourceRepo}
		if p.SourceRevision != "" {
			src["digest"] = map[string]string{"gitCommit": p.SourceRevision}
		}
		if p.SourceRef != "" {
			src["ref"] = p.SourceRef
		}
		ext["source"] = src
	}
	return ext
}

// resolvedDependencies is the source at its commit (when both are known)
// and the base image, which must be pinned by digest.
func (p Provenance) resolvedDependencies() ([]slsaResourceDescriptor, error) {
	var deps []slsaResourceDescriptor
	if p.SourceRepo != "" && p.SourceRevision != "" {
		deps = append(deps, slsaResourceDescriptor{URI: p.SourceRepo, Digest: map[string]string{"gitCommit": p.SourceRevision}})
	}
	if p.BaseImage != "" {
		d, err := name.NewDigest(p.BaseImage)
		if err != nil {
			return nil, fmt.Errorf("provenance: base image %q is not pinned by digest: %w", p.BaseImage, err)
		}
		h, err := v1.NewHash(d.DigestStr())
		if err != nil {
			return nil, err
		}
		deps = append(deps, slsaResourceDescriptor{URI: "pkg:docker/" + d.Repository.Name() + "@" + h.String(), Name: "base-image", Digest: map[string]string{h.Algorithm: h.Hex}})
	}
	return deps, nil
}

// metadata is the run's metadata (invocation ID, RFC 3339 start and
// finish in UTC); nil when none is known.
func (p Provenance) metadata() *slsaMetadata {
	md := slsaMetadata{InvocationID: p.InvocationID}
	if !p.StartedOn.IsZero() {
		md.StartedOn = p.StartedOn.UTC().Format(time.RFC3339)
	}
	if !p.FinishedOn.IsZero() {
		md.FinishedOn = p.FinishedOn.UTC().Format(time.RFC3339)
	}
	if md == (slsaMetadata{}) {
		return nil
	}
	return &md
}
