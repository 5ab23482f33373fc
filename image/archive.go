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
	blobs := blobSet{}
	top, topType, err := blobs.addResult(r)
	if err != nil {
		return err
	}
	files, err := archiveFiles(r, ref, top, topType)
	if err != nil {
		return err
	}
	aw := &archiveWriter{tw: tar.NewWriter(w), epoch: time.Unix(0, 0).UTC()}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := aw.header(dir, 0, true); err != nil {
			return err
		}
	}
	for _, d := range blobs.sorted() {
		if err := aw.blob(blobs[d]); err != nil {
			return err
		}
	}
	for _, n := range []string{"index.json", "manifest.json", "oci-layout"} {
		if data, ok := files[n]; ok {
			if err := aw.file(n, data); err != nil {
				return err
			}
		}
	}
	return aw.tw.Close()
}

// blobSet is the archive's blobs by digest.
type blobSet map[v1.Hash]blob

func (bs blobSet) add(b blob) { bs[b.digest] = b }

// addResult adds the blobs of the result (an index and its images, or one
// image) and returns the top-level manifest and its media type.
func (bs blobSet) addResult(r *Result) ([]byte, types.MediaType, error) {
	if r.Index == nil {
		top, err := r.Image.RawManifest()
		if err != nil {
			return nil, "", err
		}
		if err := bs.addImage(r.Image); err != nil {
			return nil, "", err
		}
		return top, types.OCIManifestSchema1, nil
	}
	top, err := r.Index.RawManifest()
	if err != nil {
		return nil, "", err
	}
	im, err := r.Index.IndexManifest()
	if err != nil {
		return nil, "", err
	}
	for _, d := range im.Manifests {
		img, err := r.Index.Image(d.Digest)
		if err != nil {
			return nil, "", err
		}
		if err := bs.addImage(img); err != nil {
			return nil, "", err
		}
	}
	bs.add(rawBlob(top))
	return top, types.OCIImageIndex, nil
}

// addImage adds an image's manifest, config and layers.
func (bs blobSet) addImage(img v1.Image) error {
	raw, err := img.RawManifest()
	if err != nil {
		return err
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	bs.add(rawBlob(raw))
	bs.add(rawBlob(cfg))
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
		bs.add(blob{digest: d, size: size, open: l.Compressed})
	}
	return nil
}

// sorted returns the digests in order.
func (bs blobSet) sorted() []v1.Hash {
	digests := make([]v1.Hash, 0, len(bs))
	for d := range bs {
		digests = append(digests, d)
	}
	sort.Slice(digests, func(i, j int) bool { return digests[i].String() < digests[j].String() })
	return digests
}

// archiveFiles returns the archive's metadata files: the OCI index.json
// naming the top manifest under ref, oci-layout, and for a single image the
// docker manifest.json.
func archiveFiles(r *Result, ref name.Reference, top []byte, topType types.MediaType) (map[string][]byte, error) {
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
		return nil, err
	}
	files := map[string][]byte{
		"index.json": indexJSON,
		"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`),
	}
	if r.Image == nil {
		return files, nil
	}
	if files["manifest.json"], err = dockerManifest(r.Image, ref); err != nil {
		return nil, err
	}
	return files, nil
}

// dockerManifest renders the `docker load` manifest.json of one image.
func dockerManifest(img v1.Image, ref name.Reference) ([]byte, error) {
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	desc := tarball.Descriptor{Config: "blobs/sha256/" + m.Config.Digest.Hex, RepoTags: []string{ref.Name()}}
	for _, l := range m.Layers {
		desc.Layers = append(desc.Layers, "blobs/sha256/"+l.Digest.Hex)
	}
	return json.Marshal(tarball.Manifest{desc})
}

// archiveWriter writes deterministic tar entries: epoch times, fixed modes.
type archiveWriter struct {
	tw    *tar.Writer
	epoch time.Time
}

func (aw *archiveWriter) header(name string, size int64, dir bool) error {
	h := &tar.Header{Name: name, Size: size, Mode: modeFile, ModTime: aw.epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if dir {
		h.Mode, h.Typeflag = modeDir, tar.TypeDir
	}
	return aw.tw.WriteHeader(h)
}

// blob writes one blob under blobs/sha256/, checking its size.
func (aw *archiveWriter) blob(b blob) error {
	d := b.digest
	if d.Algorithm != "sha256" {
		return fmt.Errorf("blob %s: only sha256 digests are supported", d)
	}
	if err := aw.header("blobs/sha256/"+d.Hex, b.size, false); err != nil {
		return err
	}
	rc, err := b.open()
	if err != nil {
		return err
	}
	n, err := io.Copy(aw.tw, rc)
	rc.Close()
	if err != nil {
		return fmt.Errorf("blob %s: %w", d, err)
	}
	if n != b.size {
		return fmt.Errorf("blob %s: %d bytes, descriptor says %d", d, n, b.size)
	}
	return nil
}

// file writes one metadata file.
func (aw *archiveWriter) file(name string, data []byte) error {
	if err := aw.header(name, int64(len(data)), false); err != nil {
		return err
	}
	_, err := aw.tw.Write(data)
	return err
}
