//go:build !unix

package stage

import "io/fs"

// fileID names a file independently of its names.
type fileID struct{ dev, ino uint64 }

// fileLinks cannot tell the link count here (os.FileInfo.Sys does not
// carry it on Windows): no file counts as hard-linked.
func fileLinks(fs.FileInfo) (fileID, uint64, bool) { return fileID{}, 0, false }
