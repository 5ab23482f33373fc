package stage

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
)

// gitIndex maps the paths of a git index (.git/index, versions 2 to 4) to
// their stage-0 blob ids. The runner reads it only to tell a file that is
// exactly its committed content from one the job wrote.
type gitIndex struct {
	blobs   map[string][]byte
	hashLen int
}

var errGitIndex = errors.New("unsupported git index")

// readGitIndex parses an index file; hashLen is 20 (sha1) or 32 (sha256).
func readGitIndex(data []byte, hashLen int) (*gitIndex, error) {
	version, count, err := gitIndexHeader(data)
	if err != nil {
		return nil, err
	}
	// Every entry takes at least 62 bytes: no larger map than the data allows.
	idx := &gitIndex{blobs: make(map[string][]byte, min(int(count), len(data)/62)), hashLen: hashLen}
	r := &indexReader{data: data, version: version, hashLen: hashLen, p: 12}
	for range count {
		name, id, stage, err := r.entry()
		if err != nil {
			return nil, err
		}
		if stage == 0 {
			idx.blobs[string(name)] = id
		}
	}
	return idx, nil
}

// gitIndexHeader returns the version and the entry count of an index.
func gitIndexHeader(data []byte) (version, count uint32, err error) {
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return 0, 0, errGitIndex
	}
	version = binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return 0, 0, fmt.Errorf("%w: version %d", errGitIndex, version)
	}
	return version, binary.BigEndian.Uint32(data[8:12]), nil
}

// indexReader reads the entries of an index one after the other.
type indexReader struct {
	data    []byte
	version uint32
	hashLen int
	p       int    // where the next entry starts
	prev    []byte // the previous entry's path (v4 compresses against it)
}

// entry reads the next entry: its path, its blob id and its merge stage.
func (r *indexReader) entry() (name, id []byte, stage uint16, err error) {
	data, start, p := r.data, r.p, r.p
	if p+40+r.hashLen+2 > len(data) {
		return nil, nil, 0, errGitIndex
	}
	p += 40 // ctime, mtime, dev, ino, mode, uid, gid, size
	id = data[p : p+r.hashLen]
	p += r.hashLen
	flags := binary.BigEndian.Uint16(data[p:])
	p += 2
	if flags&0x4000 != 0 { // extended flags (v3+)
		if r.version < 3 || p+2 > len(data) {
			return nil, nil, 0, errGitIndex
		}
		p += 2
	}
	name, next, err := indexEntryName(data, start, p, r.version, r.prev)
	if err != nil {
		return nil, nil, 0, err
	}
	r.p, r.prev = next, name
	return name, id, flags >> 12 & 3, nil
}

// indexEntryName reads the path of the entry that starts at start and
// whose name starts at p: v4 prefix-compressed against the previous path,
// v2 and v3 NUL-terminated and padded to a multiple of 8 bytes. It returns
// the path and where the next entry starts.
func indexEntryName(data []byte, start, p int, version uint32, prev []byte) ([]byte, int, error) {
	if version == 4 {
		strip, n := gitVarint(data[p:])
		if n == 0 || int(strip) > len(prev) {
			return nil, 0, errGitIndex
		}
		p += n
		end := bytes.IndexByte(data[p:], 0)
		if end < 0 {
			return nil, 0, errGitIndex
		}
		name := append(append([]byte(nil), prev[:len(prev)-int(strip)]...), data[p:p+end]...)
		return name, p + end + 1, nil
	}
	end := bytes.IndexByte(data[p:], 0)
	if end < 0 {
		return nil, 0, errGitIndex
	}
	return data[p : p+end], start + (p-start+end+8)&^7, nil
}

// gitVarint decodes git's offset varint (read-cache.c decode_varint).
func gitVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v, n := uint64(c&127), 1
	for c&128 != 0 {
		if n >= len(b) || n > 9 {
			return 0, 0
		}
		c = b[n]
		n++
		v = (v+1)<<7 | uint64(c&127)
	}
	return v, n
}

// committed reports whether the file at path (slash-separated, relative to
// the work tree) holds exactly the blob the index records for it.
func (x *gitIndex) committed(rel, file string) bool {
	want, ok := x.blobs[rel]
	if !ok {
		return false
	}
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	h := x.objectHash()
	fmt.Fprintf(h, "blob %d\x00", st.Size())
	if n, err := io.Copy(h, f); err != nil || n != st.Size() {
		return false
	}
	return bytes.Equal(h.Sum(nil), want)
}

// objectHash is the hash of the repository's object ids: sha256 when its
// ids are that long, else sha1.
func (x *gitIndex) objectHash() hash.Hash {
	if x.hashLen == sha256.Size {
		return sha256.New()
	}
	return sha1.New()
}
