package sign

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestAttestationGolden pins the exact statements (SPDX SBOM, SLSA
// provenance v1) for a fixed image: their shape is an interface that
// cosign, policy engines and SBOM tools consume. Run with -update to
// accept a deliberate change.
func TestAttestationGolden(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct{ name, data string }{
		{"opt/fullsend/policies/manifest.json", `{"schema":"https://fullsend.dev/schemas/policy-manifest/v1"}`},
		{"opt/fullsend/policies/triage.yaml", "version: 1\n"},
		{"usr/share/doc/readme", "outside the SBOM paths\n"},
	} {
		_ = tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)})
		_, _ = tw.Write([]byte(f.data))
	}
	_ = tw.Close()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := name.NewRepository("ghcr.io/acme/agents")
	ref := mustRef(t, repo, img)
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sbom, err := sbomStatement(context.Background(), Subject{Repository: repo, Image: img}, ref, SBOMOptions{Created: created, Tool: "fullsend-v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	prov, err := provenanceStatement(ref, Provenance{
		BuilderID:  "https://github.com/acme/agents/.github/workflows/release.yml@refs/heads/main",
		SourceRepo: "git+https://github.com/acme/agents", SourceRevision: "0123456789abcdef0123456789abcdef01234567", SourceRef: "refs/heads/main",
		Parameters:   map[string]any{"platforms": []string{"linux/amd64"}, "base": "scratch"},
		BaseImage:    "ghcr.io/fullsend-ai/agent-sandbox-base@sha256:ab0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd",
		InvocationID: "https://github.com/acme/agents/actions/runs/1", FullsendVersion: "v1.2.3",
		StartedOn: created, FinishedOn: created.Add(time.Minute),
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, st := range map[string]*statement{"sbom.golden.json": sbom, "provenance.golden.json": prov} {
		got, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join("testdata", file)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./sign -run Golden -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the golden file (run with -update if intended):\n%s", file, got)
		}
	}
	// The provenance parser reads back what we write.
	raw, _ := json.Marshal(prov.Predicate)
	p, err := ParseProvenance(raw)
	if err != nil || p.SourceRevision != "0123456789abcdef0123456789abcdef01234567" || p.SourceRepo != "git+https://github.com/acme/agents" {
		t.Errorf("ParseProvenance: %+v %v", p, err)
	}
}

// TestSBOMOwnLayers: on an image built by fullsend (history marks its
// layers), only those layers are read; AllLayers reads the base too.
func TestSBOMOwnLayers(t *testing.T) {
	layerOf := func(path string) v1.Layer {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		_ = tw.WriteHeader(&tar.Header{Name: path, Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
		_, _ = tw.Write([]byte("x"))
		_ = tw.Close()
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	img, err := mutate.Append(empty.Image,
		mutate.Addendum{Layer: layerOf("opt/fullsend/from-base"), History: v1.History{CreatedBy: "RUN base"}},
		mutate.Addendum{Layer: layerOf("opt/fullsend/policies/p.yaml"), History: v1.History{CreatedBy: LayerHistoryPrefix + " /opt/fullsend/policies"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := name.NewRepository("ghcr.io/acme/agents")
	for _, tc := range []struct {
		all  bool
		want string
	}{{false, "./opt/fullsend/policies/p.yaml"}, {true, "./opt/fullsend/from-base ./opt/fullsend/policies/p.yaml"}} {
		doc, err := buildSBOM(context.Background(), Subject{Repository: repo, Image: img}, mustRef(t, repo, img), SBOMOptions{AllLayers: tc.all})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range doc.Files {
			got = append(got, f.FileName)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("AllLayers=%v: files %v, want %s", tc.all, got, tc.want)
		}
	}
}
