// Package projectfile reads the files of a project: agent and skill
// definitions and the policy fragments they name, all of them input the
// project's author controls and a review may miss. A file is read only when
// it is a regular file no larger than MaxSize, a path named in project text
// is read only when neither it nor a directory on its way is a symbolic
// link, and a name that is not printable text is refused (CheckName) or
// quoted for a message (Quote): it would otherwise reach a policy's header
// comment or a CI log raw.
package projectfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"unicode/utf8"
)

// MaxSize is the largest project file read, in bytes.
const MaxSize = 1 << 20

// Read reads a project file, refusing one that is not a regular file and
// one above MaxSize without reading it whole.
func Read(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("reading %s: %w", name, ErrNotRegular)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, name, MaxSize)
	}
	return data, nil
}

// ReadNoLinks reads a project file named by a path from the project's
// text (a policy fragment), refusing it when the file or any directory on
// its way is a symbolic link: links are not followed, even inside the
// project, so the error names the link and never shows the bytes of what it
// points to.
func ReadNoLinks(fsys fs.FS, name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, fmt.Errorf("reading %s: %w", Quote(name), fs.ErrInvalid)
	}
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("reading %s: %w", Quote(name), err)
	}
	for i := range len(name) + 1 {
		if i < len(name) && name[i] != '/' {
			continue
		}
		fi, err := fs.Lstat(fsys, name[:i])
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s is a %w", name[:i], ErrSymlink)
		}
	}
	return Read(fsys, name)
}

// The errors Read and ReadNoLinks wrap.
var (
	// ErrNotRegular: a directory, device, pipe or other special file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: a file above MaxSize.
	ErrTooLarge = errors.New("file too large")
	// ErrSymlink: a symbolic link on a path ReadNoLinks was given.
	ErrSymlink = errors.New("symbolic link, which is not followed")
)

// ErrNameText reports a name or path that is not printable text.
var ErrNameText = errors.New("name holds a character that is not printable text")

// CheckName refuses a file or directory name (or a path) that is not
// valid UTF-8 or holds a rune that is not graphic (strconv.IsGraphic):
// control characters, YAML's line breaks (\r, \n, U+0085, U+2028, U+2029),
// format characters such as U+200B or U+202E. Such a name would be written
// raw into the generated policy's header comment, where a line break ends the
// comment and lets the rest of the name become policy, and into CI logs,
// where a line break starts a workflow command.
func CheckName(name string) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w (invalid UTF-8)", ErrNameText)
	}
	for _, r := range name {
		if !strconv.IsGraphic(r) {
			return fmt.Errorf("%w (%U)", ErrNameText, r)
		}
	}
	return nil
}

// Quote renders a path for a message: as it is when it is printable
// text, else Go-quoted with every such character escaped.
func Quote(p string) string {
	if CheckName(p) == nil {
		return p
	}
	return strconv.QuoteToGraphic(p)
}
