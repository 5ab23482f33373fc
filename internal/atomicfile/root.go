package atomicfile

import (
	"errors"
	"fmt"
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
