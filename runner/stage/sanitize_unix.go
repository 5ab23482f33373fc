//go:build unix

package stage

import (
	"io/fs"
	"syscall"
)

// fileID names a file independently of its names.
type fileID struct{ dev, ino uint64 }

// fileLinks returns a file's identity and link count from its lstat
// (the conversions: the field types differ by platform).
func fileLinks(info fs.FileInfo) (fileID, uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, 0, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, uint64(st.Nlink), true
}
