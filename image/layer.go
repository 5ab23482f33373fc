package image

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"
)

// compression identifies the compressor and its settings. It is part of the
// cache key: a cached blob is reused only when it was produced exactly the
// way this build would produce it, so a cache hit never changes a digest.
const compression = "gzip-klauspost-v1.20-level1"

// layer is a gzip-compressed OCI layer whose digests are known up front.
// It implements v1.Layer without re-reading or re-hashing its content.
type layer struct {
	diffID, digest v1.Hash
	size           int64
	open           func() (io.ReadCloser, error)
}

var _ v1.Layer = (*layer)(nil)

func (l *layer) Digest() (v1.Hash, error)             { return l.digest, nil }
func (l *layer) DiffID() (v1.Hash, error)             { return l.diffID, nil }
func (l *layer) Size() (int64, error)                 { return l.size, nil }
func (l *layer) MediaType() (types.MediaType, error)  { return types.OCILayer, nil }
func (l *layer) Compressed() (io.ReadCloser, error)   { return l.open() }
func (l *layer) Uncompressed() (io.ReadCloser, error) { return gunzip(l.open) }

func gunzip(open func() (io.ReadCloser, error)) (io.ReadCloser, error) {
	rc, err := open()
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(rc)
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("reading layer: %w", err)
	}
	return readCloser{zr, func() error { zr.Close(); return rc.Close() }}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// layerCache keeps compressed layers on disk by diffID, so an unchanged
// layer is never compressed twice. Like Go's build cache it trusts its own
// directory (created 0700): a cached blob is checked against the digest
// recorded with it, not re-derived from the uncompressed bytes.
type layerCache struct {
	dir string // "" disables the cache
}

type cacheEntry struct {
	Compression string `json:"compression"`
	DiffID      string `json:"diff_id"`
	Digest      string `json:"digest"`
	Size        int64  `json:"size"`
}

func hashOf(data []byte) v1.Hash {
	sum := sha256.Sum256(data)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
}

// newLayer returns the compressed layer for an uncompressed tar, from the
// cache when it holds one for this diffID, else by compressing (and caching).
func (c layerCache) newLayer(uncompressed []byte) (*layer, error) {
	diffID := hashOf(uncompressed)
	if l, ok := c.lookup(diffID); ok {
		return l, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(uncompressed)/2 + 512)
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("compressing layer: %w", err)
	}
	if _, err := zw.Write(uncompressed); err != nil {
		return nil, fmt.Errorf("compressing layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing layer: %w", err)
	}
	data := buf.Bytes()
	l := &layer{
		diffID: diffID,
		digest: hashOf(data),
		size:   int64(len(data)),
		open:   func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
	}
	// A cache that cannot be written only costs time on the next build.
	_ = c.store(l, data)
	return l, nil
}

func (c layerCache) paths(diffID v1.Hash) (blob, meta string) {
	base := filepath.Join(c.dir, compression, diffID.Hex)
	return base + ".gz", base + ".json"
}

func (c layerCache) lookup(diffID v1.Hash) (*layer, bool) {
	if c.dir == "" {
		return nil, false
	}
	blobPath, metaPath := c.paths(diffID)
	raw, err := os.ReadFile(metaPath)
	if err != nil {
		return nil, false
	}
	var e cacheEntry
	if json.Unmarshal(raw, &e) != nil || e.Compression != compression || e.DiffID != diffID.String() {
		return nil, false
	}
	digest, err := v1.NewHash(e.Digest)
	if err != nil {
		return nil, false
	}
	// Check the blob against its recorded digest: a truncated or corrupted
	// cache entry is ignored (and later overwritten), never used.
	data, err := os.ReadFile(blobPath)
	if err != nil || int64(len(data)) != e.Size || hashOf(data) != digest {
		return nil, false
	}
	return &layer{
		diffID: diffID,
		digest: digest,
		size:   e.Size,
		open:   func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
	}, true
}

func (c layerCache) store(l *layer, data []byte) error {
	if c.dir == "" {
		return nil
	}
	dir := filepath.Join(c.dir, compression)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	blobPath, metaPath := c.paths(l.diffID)
	meta, err := json.Marshal(cacheEntry{Compression: compression, DiffID: l.diffID.String(), Digest: l.digest.String(), Size: l.size})
	if err != nil {
		return err
	}
	// Blob first, then the metadata that makes it visible.
	return errors.Join(writeFileAtomic(blobPath, data, 0o600), writeFileAtomic(metaPath, meta, 0o600))
}

// writeFileAtomic writes data to a temporary file in the target's directory
// and renames it into place, so readers never see a partial file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
