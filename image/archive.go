package image

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
)

// WriteTarball writes the result as an image archive in the format
// `docker save` produces since Docker 25: an OCI image layout (oci-layout,
// index.json, blobs/sha256/...) that keeps the exact manifest, digest and
// annotations, plus a docker manifest.json so `docker load` of older
// engines works too (single platform only; a multi-platform archive is a
// plain OCI archive for podman, skopeo, crane and containerd). The archive is
// deterministic and written via a temporary file renamed into place.
func WriteTarball(r *Result, file string, ref name.Reference) error {
	err := atomicfile.WriteFunc(file, 0o644, func(w io.Writer) error { return writeArchive(w, r, ref) })
	if err != nil {
		return fmt.Errorf("writing tarball: %w", err)
	}
	return nil
}

// blob is one content-addressed file of the archive.
type blob struct {
	digest v1.Hash
	size   int64
	open   func() (io.ReadCloser, error)
}

func rawBlob(data []byte) blob {
	return blob{digest: hashOf(data), size: int64(len(data)), open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
}

func writeArchive(w io.Writer, r *Result, ref name.Reference) error {
	blobs := map[v1.Hash]blob{}
	addImage := func(img v1.Image) error {
		raw, err := img.RawManifest()
		if err != nil {
			return err
		}
		cfg, err := img.RawConfigFile()
		if err != nil {
			return err
		}
		for _, b := range []blob{rawBlob(raw), rawBlob(cfg)} {
			blobs[b.digest] = b
		}
		layers, err := img.Layers()
		if err != nil {
			return err
		}
		for _, l := range layers {
			d, err := l.Digest()
			if err != nil {
				return err
			}
			size, err := l.Size()
			if err != nil {
				return err
			}
			blobs[d] = blob{digest: d, size: size, open: l.Compressed}
		}
		return nil
	}
	var top []byte
	var topType types.MediaType
	var err error
	if r.Index != nil {
		topType = types.OCIImageIndex
		if top, err = r.Index.RawManifest(); err != nil {
			return err
		}
		im, err := r.Index.IndexManifest()
		if err != nil {
			return err
		}
		for _, d := range im.Manifests {
			img, err := r.Index.Image(d.Digest)
			if err != nil {
				return err
			}
			if err := addImage(img); err != nil {
				return err
			}
		}
		b := rawBlob(top)
		blobs[b.digest] = b
	} else {
		topType = types.OCIManifestSchema1
		if top, err = r.Image.RawManifest(); err != nil {
			return err
		}
		if err := addImage(r.Image); err != nil {
			return err
		}
	}

	refName := ""
	if t, ok := ref.(name.Tag); ok {
		refName = t.TagStr()
	}
	index := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: topType,
			Digest:    r.Digest,
			Size:      int64(len(top)),
			Annotations: map[string]string{
				"org.opencontainers.image.ref.name": refName,
				"io.containerd.image.name":          ref.Name(),
			},
		}},
	}
	indexJSON, err := json.Marshal(index)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"index.json": indexJSON,
		"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`),
	}
	if r.Image != nil {
		m, err := r.Image.Manifest()
		if err != nil {
			return err
		}
		desc := tarball.Descriptor{Config: "blobs/sha256/" + m.Config.Digest.Hex, RepoTags: []string{ref.Name()}}
		for _, l := range m.Layers {
			desc.Layers = append(desc.Layers, "blobs/sha256/"+l.Digest.Hex)
		}
		if files["manifest.json"], err = json.Marshal(tarball.Manifest{desc}); err != nil {
			return err
		}
	}

	digests := make([]v1.Hash, 0, len(blobs))
	for d := range blobs {
		digests = append(digests, d)
	}
	sort.Slice(digests, func(i, j int) bool { return digests[i].String() < digests[j].String() })

	tw := tar.NewWriter(w)
	epoch := time.Unix(0, 0).UTC()
	header := func(name string, size int64, dir bool) error {
		h := &tar.Header{Name: name, Size: size, Mode: modeFile, ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if dir {
			h.Mode, h.Typeflag = modeDir, tar.TypeDir
		}
		return tw.WriteHeader(h)
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := header(dir, 0, true); err != nil {
			return err
		}
	}
	for _, d := range digests {
		b := blobs[d]
		if d.Algorithm != "sha256" {
			return fmt.Errorf("blob %s: only sha256 digests are supported", d)
		}
		if err := header("blobs/sha256/"+d.Hex, b.size, false); err != nil {
			return err
		}
		rc, err := b.open()
		if err != nil {
			return err
		}
		n, err := io.Copy(tw, rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("blob %s: %w", d, err)
		}
		if n != b.size {
			return fmt.Errorf("blob %s: %d bytes, descriptor says %d", d, n, b.size)
		}
	}
	for _, n := range []string{"index.json", "manifest.json", "oci-layout"} {
		data, ok := files[n]
		if !ok {
			continue
		}
		if err := header(n, int64(len(data)), false); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	return tw.Close()
}
