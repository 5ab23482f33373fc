package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// File modes written into layers: every entry gets one of these, whatever
// the mode on the build machine, so umask and checkout settings cannot change
// the digest.
const (
	modeDir  = 0o755
	modeFile = 0o644
	modeExec = 0o755
)

// file is one regular file of a layer, addressed by its absolute path inside
// the image.
type file struct {
	path string // absolute, cleaned, e.g. /opt/fullsend/policies/triage.yaml
	data []byte
	exec bool
	dir  bool // an explicit (possibly empty) directory; data is ignored
}

// deterministicTar renders files as an uncompressed PAX tar with a fixed
// shape: entries sorted by name, every parent directory written explicitly
// before its children, uid/gid 0, empty user and group names, fixed modes and
// one modification time. The same files always give the same bytes.
func deterministicTar(files []file, mtime time.Time) ([]byte, error) {
	mtime = mtime.UTC().Truncate(time.Second)
	entries := map[string]*file{} // name without leading slash; dirs end in "/"
	for i := range files {
		f := &files[i]
		p := path.Clean(f.path)
		if !path.IsAbs(f.path) || p != f.path || p == "/" {
			return nil, fmt.Errorf("layer path %q must be absolute and clean", f.path)
		}
		name := strings.TrimPrefix(p, "/")
		if f.dir {
			if _, clash := entries[name]; clash {
				return nil, fmt.Errorf("layer path %s is both a file and a directory", p)
			}
			name += "/"
			f = nil
		}
		if _, dup := entries[name]; dup && f != nil {
			return nil, fmt.Errorf("layer path %s appears twice", p)
		}
		if _, isDir := entries[name+"/"]; isDir && f != nil {
			return nil, fmt.Errorf("layer path %s is both a file and a directory", p)
		}
		entries[name] = f
		for dir := path.Dir(strings.TrimSuffix(name, "/")); dir != "."; dir = path.Dir(dir) {
			if _, clash := entries[dir]; clash {
				return nil, fmt.Errorf("layer path /%s is both a file and a directory", dir)
			}
			entries[dir+"/"] = nil
		}
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	// Sorting the names puts "a/" before "a/b": parents precede children.
	sort.Strings(names)

	var buf bytes.Buffer
	size := 1024 // end-of-archive blocks
	for _, f := range entries {
		size += 1536 // header block, PAX headroom
		if f != nil {
			size += len(f.data) + 512
		}
	}
	buf.Grow(size)
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		hdr := &tar.Header{
			Name:    n,
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		f := entries[n]
		if f == nil {
			hdr.Typeflag, hdr.Mode = tar.TypeDir, modeDir
		} else {
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, modeFile, int64(len(f.data))
			if f.exec {
				hdr.Mode = modeExec
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("writing tar header %s: %w", n, err)
		}
		if f != nil {
			if _, err := tw.Write(f.data); err != nil {
				return nil, fmt.Errorf("writing tar entry %s: %w", n, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing tar: %w", err)
	}
	return buf.Bytes(), nil
}
