package templates

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
)

//go:embed github gitlab
var files embed.FS

// Kinds returns the CI systems with templates, named as cienv names them.
func Kinds() []string { return []string{string(cienv.GitHubActions), string(cienv.GitLabCI)} }

// ErrUnknownKind reports a CI system without templates.
var ErrUnknownKind = errors.New("unknown template kind")

// FS returns the embedded templates of one kind, rooted at that kind.
func FS(kind string) (fs.FS, error) {
	for _, k := range Kinds() {
		if k == kind {
			return fs.Sub(files, kind)
		}
	}
	return nil, fmt.Errorf("%w %q (want one of %v)", ErrUnknownKind, kind, Kinds())
}

// List returns the paths of one kind's templates, sorted.
func List(kind string) ([]string, error) {
	fsys, err := FS(kind)
	if err != nil {
		return nil, err
	}
	var out []string
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	sort.Strings(out)
	return out, err
}

// Write writes one kind's templates under dir, each file atomically (temp
// file in the same directory, then rename). It returns the paths written.
func Write(kind, dir string) ([]string, error) {
	fsys, err := FS(kind)
	if err != nil {
		return nil, err
	}
	names, err := List(kind)
	if err != nil {
		return nil, err
	}
	var written []string
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return written, err
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := writeAtomic(dst, data); err != nil {
			return written, err
		}
		written = append(written, dst)
	}
	return written, nil
}

func writeAtomic(dst string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return atomicfile.Write(dst, data, 0o644)
}
