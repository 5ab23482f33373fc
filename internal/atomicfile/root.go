package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
)

// WriteIn replaces name, a slash path inside root, with data, with mode
// perm. Like Write, but every step (the temporary file, its rename, its
// removal on failure) goes through root, so no symbolic link can make it
// write outside root. A link at name itself is replaced, never followed.
func WriteIn(root *os.Root, name string, data []byte, perm os.FileMode) error {
	tmp, f, err := createTempIn(root, name)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	defer root.Remove(tmp) // a no-op after the rename
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// createTempIn creates a new file beside name in root, named like
// os.CreateTemp's ".NAME.tmp-RANDOM", and returns its name in root.
func createTempIn(root *os.Root, name string) (string, *os.File, error) {
	dir, base := path.Split(name)
	for range 10000 {
		tmp := dir + "." + base + ".tmp-" + strconv.FormatUint(rand.Uint64(), 36)
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return tmp, f, err
	}
	return "", nil, fmt.Errorf("no unused temporary name beside %s", name)
}

// UpdateIn is WriteIn that leaves name alone when it already is a regular
// file with mode perm and exactly data as its contents, and reports whether
// it wrote. An unchanged output keeps its inode and modification time, and
// a recompile that changes nothing costs reads instead of file creations
// (on ext4 a create is an order of magnitude dearer than an open). A
// symbolic link or any other kind of file at name is always replaced,
// never read through.
func UpdateIn(root *os.Root, name string, data []byte, perm os.FileMode) (bool, error) {
	if sameContents(root, name, data, perm) {
		return false, nil
	}
	return true, WriteIn(root, name, data, perm)
}

// sameContents reports whether name in root is a regular file with mode
// perm holding exactly data; any error (a missing file, a read failure)
// counts as different. os.Root follows a final symbolic link within the
// root, so the file is Lstat-ed first and the opened descriptor must be
// that same file.
func sameContents(root *os.Root, name string, data []byte, perm os.FileMode) bool {
	li, err := root.Lstat(name)
	if err != nil || !regularFile(li, perm, len(data)) {
		return false
	}
	f, err := root.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !os.SameFile(li, fi) {
		return false
	}
	return holds(f, data)
}

// regularFile reports whether fi is a regular file with mode perm and
// size bytes.
func regularFile(fi fs.FileInfo, perm os.FileMode, size int) bool {
	return fi.Mode().IsRegular() && fi.Mode().Perm() == perm && fi.Size() == int64(size)
}

// holds reports whether reading r to its end gives exactly data. It reads
// one byte more than data holds, which proves a file that grew since it
// was Lstat-ed.
func holds(r io.Reader, data []byte) bool {
	buf := make([]byte, len(data)+1)
	n, err := io.ReadFull(r, buf)
	if n != len(data) || (!errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF)) {
		return false
	}
	return bytes.Equal(buf[:n], data)
}
