package verify

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/fullsend-ai/agent-sandbox/sign"
)

// TestBuilderIDRequirement: an image signed outside CI carries a provenance
// with the local builder id. A policy that requires provenance refuses it
// unless it names the local builder; requiring a CI builder id (exact or by
// regexp) refuses it with both ids in the message.
func TestBuilderIDRequirement(t *testing.T) {
	ctx := context.Background()
	host := startRegistry(t, nil)
	repo, _ := name.NewRepository(host + "/acme/agents")
	key := newKeys(t)
	const ciBuilder = "https://github.com/acme/agents/.github/workflows/release.yml@refs/heads/main"

	sign1 := func(seed int64, tag, builder string) name.Digest {
		img := newImage(t, seed)
		ref := push(t, repo.Tag(tag), img)
		p := provenance()
		p.BuilderID = builder
		signPush(t, key.signer(t), repo, img, sign.Options{Claims: claims(), Provenance: p})
		return ref
	}
	local := sign1(1, "local", sign.LocalBuilderID)
	ci := sign1(2, "ci", ciBuilder)

	tests := []struct {
		name    string
		ref     name.Digest
		policy  func(*Options)
		want    string // "" passes; else a substring of the error
		wantErr error
	}{
		{"local, provenance required: refused", local, func(o *Options) { o.RequireProvenance = true },
			`provenance builder id "urn:fullsend:builder:local:v1" is a local build (signed outside CI)`, sign.ErrNoValidAttestation},
		{"local, CI builder required: refused naming both", local, func(o *Options) { o.ProvenanceBuilderID = ciBuilder },
			`provenance builder id "urn:fullsend:builder:local:v1", required "` + ciBuilder + `"`, sign.ErrNoValidAttestation},
		{"local, CI builder regexp: refused", local, func(o *Options) {
			o.ProvenanceBuilderIDRegexp = `^https://github\.com/acme/agents/\.github/workflows/release\.yml@refs/(heads|tags)/.*$`
		}, `required to match`, sign.ErrNoValidAttestation},
		{"local, match-all regexp: accepted explicitly", local, func(o *Options) { o.ProvenanceBuilderIDRegexp = `^.*$` }, "", nil},
		{"local, local builder required: passes", local, func(o *Options) { o.ProvenanceBuilderID = sign.LocalBuilderID }, "", nil},
		{"local, provenance not required: passes", local, func(o *Options) {}, "", nil},
		{"ci, provenance required: passes", ci, func(o *Options) { o.RequireProvenance = true }, "", nil},
		{"ci, CI builder required: passes", ci, func(o *Options) { o.ProvenanceBuilderID = ciBuilder }, "", nil},
		{"ci, CI builder regexp: passes", ci, func(o *Options) {
			o.ProvenanceBuilderIDRegexp = `^https://github\.com/acme/agents/\.github/workflows/release\.yml@refs/(heads|tags)/.*$`
		}, "", nil},
		{"ci, local builder required: refused", ci, func(o *Options) { o.ProvenanceBuilderID = sign.LocalBuilderID },
			`required "urn:fullsend:builder:local:v1"`, sign.ErrNoValidAttestation},
		{"ci, alternation escapes no anchor", ci, func(o *Options) { o.ProvenanceBuilderIDRegexp = `^urn:x$|^https://github\.com/evil/.*$` },
			"required to match", sign.ErrNoValidAttestation},
		{"unanchored regexp", ci, func(o *Options) { o.ProvenanceBuilderIDRegexp = `github\.com` }, "must be anchored", ErrPolicy},
		{"bad regexp", ci, func(o *Options) { o.ProvenanceBuilderIDRegexp = `^(x$` }, "provenance builder id regexp", ErrPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Image: tt.ref.String(), Keys: []string{key.pub}}
			tt.policy(&o)
			res, err := Verify(ctx, o)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				wantAtt := o.RequireProvenance || o.ProvenanceBuilderID != "" || o.ProvenanceBuilderIDRegexp != ""
				if wantAtt && (len(res.Attestations) != 1 || res.Attestations[0].Provenance == nil) {
					t.Errorf("attestations %+v", res.Attestations)
				}
				return
			}
			if err == nil {
				t.Fatalf("verified %s; want %q", res.Ref, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.wantErr) {
				t.Errorf("error %q\nwant %q (%v)", err, tt.want, tt.wantErr)
			}
		})
	}
}
