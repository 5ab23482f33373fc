package stage

import (
	"archive/tar"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ExtractOutput writes a tar stream of one output, whose entries must
// all be base or lie under it (what `tar cf - -C PARENT -- BASE` writes),
// into dir/base. The stream is hostile: an entry name that is not a clean
// relative path under base, a stream over maxBytes of file data or over
// maxEntries entries, or a malformed stream is an error. Only directories
// and regular files are written, through an os.Root on dir (no name can
// reach outside it, and nothing is written through a link), files mode
// 0600 plus the archive's read and execute bits (never write for group or
// others, never set-id);
// symbolic links, hard links and special files are not written and are
// returned as removals, relative to dir/base ("." for base itself), as is
// a second entry for a file already written. It returns what it left out.
func ExtractOutput(r io.Reader, dir, base string, maxBytes int64, maxEntries int) ([]Removal, error) {
	if !isFileName(base) {
		return nil, fmt.Errorf("output name %q is not a file name", base)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	x := &extractor{root: root, base: base, maxBytes: maxBytes, maxEntries: maxEntries}
	if err := x.all(tar.NewReader(r)); err != nil {
		return x.removed, err
	}
	if x.entries == 0 {
		return nil, errors.New("the output archive is empty")
	}
	return x.removed, nil
}

// all extracts every entry of the stream.
func (x *extractor) all(tr *tar.Reader) error {
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the output archive: %w", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue // PAX metadata for what follows, not a file
		}
		if err := x.entry(h, tr); err != nil {
			return err
		}
	}
}

// isFileName reports whether name is the name of a file in a directory:
// not empty, ".", ".." or a path.
func isFileName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.Contains(name, "/")
}

// extractor is one ExtractOutput: its limits, what it counted and what it
// left out.
type extractor struct {
	root       *os.Root
	base       string
	maxBytes   int64
	total      int64
	maxEntries int
	entries    int
	removed    []Removal
}

// entry checks one entry's name and writes it, or records why not.
func (x *extractor) entry(h *tar.Header, r io.Reader) error {
	x.entries++
	if x.entries > x.maxEntries {
		return fmt.Errorf("the output has more than %d entries", x.maxEntries)
	}
	name, rel, err := x.names(h.Name)
	if err != nil {
		return err
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if err := x.root.MkdirAll(name, 0o755); err != nil {
			return fmt.Errorf("output entry %q: %w", h.Name, err)
		}
	case tar.TypeReg:
		return x.file(h, name, rel, r)
	default:
		x.removed = append(x.removed, Removal{Path: rel, Why: leftOutWhy(h.Typeflag)})
	}
	return nil
}

// names checks an entry's name, which must be base or lie under it, and
// returns it clean (slash-separated, relative to dir) and relative to
// dir/base ("." for base itself).
func (x *extractor) names(entry string) (name, rel string, err error) {
	name = strings.TrimSuffix(entry, "/")
	if !fs.ValidPath(name) || (name != x.base && !strings.HasPrefix(name, x.base+"/")) {
		return "", "", fmt.Errorf("the output archive names %q, which is not under %q", entry, x.base)
	}
	rel = cmp.Or(strings.TrimPrefix(strings.TrimPrefix(name, x.base), "/"), ".")
	return name, filepath.FromSlash(rel), nil
}

// leftOutWhy says why an entry that is neither a directory nor a regular
// file is not written.
func leftOutWhy(typeflag byte) string {
	switch typeflag {
	case tar.TypeSymlink:
		return whySymlink
	case tar.TypeLink:
		return whyLinked
	}
	return whySpecial
}

// file writes a regular file's entry within the size limit; a second
// entry for a file already written is left out.
func (x *extractor) file(h *tar.Header, name, rel string, r io.Reader) error {
	if h.Size < 0 || h.Size > x.maxBytes-x.total {
		return fmt.Errorf("the output is larger than %d bytes", x.maxBytes)
	}
	x.total += h.Size
	if d := path.Dir(name); d != "." {
		if err := x.root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("output entry %q: %w", h.Name, err)
		}
	}
	mode := fs.FileMode(h.Mode).Perm()&0o555 | 0o600
	f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, fs.ErrExist) {
		x.removed = append(x.removed, Removal{Path: rel, Why: "listed twice in the output archive: the first copy is kept"})
		return nil
	}
	if err != nil {
		return fmt.Errorf("output entry %q: %w", h.Name, err)
	}
	if err := copyAndClose(f, r); err != nil {
		return fmt.Errorf("output entry %q: %w", h.Name, err)
	}
	return nil
}

// copyAndClose copies r into f and closes f, returning the first error.
func copyAndClose(f *os.File, r io.Reader) error {
	_, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
