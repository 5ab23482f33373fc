package image

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"

	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
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

// newLayer returns the compressed layer for a planned tar: from the cache
// when it holds one for this diffID, else by compressing (and caching). The
// tar is streamed twice at most: once to hash it, and on a cache miss once
// more to compress it, hashing again to prove the inputs did not change.
func (c layerCache) newLayer(plan *tarPlan) (*layer, error) {
	h := sha256.New()
	if err := plan.writeTo(h); err != nil {
		return nil, err
	}
	diffID := v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
	if l, ok := c.lookup(diffID); ok {
		return l, nil
	}
	var buf bytes.Buffer
	buf.Grow(plan.sizeHint()/2 + 512)
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("compressing layer: %w", err)
	}
	h.Reset()
	if err := plan.writeTo(io.MultiWriter(zw, h)); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing layer: %w", err)
	}
	if again := hex.EncodeToString(h.Sum(nil)); again != diffID.Hex {
		return nil, errors.New("layer inputs changed during the build; build again")
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
	// The blob is checked against its recorded size here and against its
	// digest whenever it is read: a corrupted entry fails the read (and a
	// truncated one is ignored now), it is never used silently. A warm
	// build whose blobs the registry already has never reads them.
	if info, err := os.Stat(blobPath); err != nil || info.Size() != e.Size {
		return nil, false
	}
	return &layer{
		diffID: diffID,
		digest: digest,
		size:   e.Size,
		open: func() (io.ReadCloser, error) {
			f, err := os.Open(blobPath)
			if err != nil {
				return nil, err
			}
			return &verifyingReader{r: f, c: f, h: sha256.New(), want: digest, path: blobPath}, nil
		},
	}, true
}

// verifyingReader hashes what it reads and fails at EOF when the content
// does not match the expected digest.
type verifyingReader struct {
	r    io.Reader
	c    io.Closer
	h    hash.Hash
	want v1.Hash
	path string
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	if errors.Is(err, io.EOF) {
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want.Hex {
			return n, fmt.Errorf("layer cache entry %s is corrupt (sha256 %s, want %s); delete it and build again", v.path, got, v.want.Hex)
		}
	}
	return n, err
}

func (v *verifyingReader) Close() error { return v.c.Close() }

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
	return errors.Join(atomicfile.Write(blobPath, data, 0o600), atomicfile.Write(metaPath, meta, 0o600))
}
