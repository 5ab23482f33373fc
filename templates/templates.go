package templates

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
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

// DefaultDir is where a kind's templates go when no directory is given:
// the layout `fullsend init` writes (.github for GitHub Actions, ci for
// GitLab CI, where the project's .gitlab-ci.yml includes it from).
func DefaultDir(kind string) string {
	if kind == string(cienv.GitHubActions) {
		return ".github"
	}
	return "ci"
}

// WriteResult says what Write did: the paths written and the paths kept
// because a file was already there, each as dir joined with the template's
// path.
type WriteResult struct {
	Written []string `json:"written"`
	Skipped []string `json:"skipped"`
}

// Write writes one kind's templates under dir (created when missing), each
// file atomically through an os.Root of dir, so that no symbolic link leads
// a write out of it. A file that exists already (or anything else at its
// path) is kept and listed as skipped unless force is set, as `fullsend
// init` does: an edited workflow is never replaced by accident.
func Write(kind, dir string, force bool) (*WriteResult, error) {
	fsys, err := FS(kind)
	if err != nil {
		return nil, err
	}
	names, err := List(kind)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	defer root.Close()
	res := &WriteResult{Written: []string{}, Skipped: []string{}}
	for _, name := range names {
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if _, err := root.Lstat(name); err == nil && !force {
			res.Skipped = append(res.Skipped, dst)
			continue
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("%s: %w", dst, err)
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return res, err
		}
		if d := path.Dir(name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return res, fmt.Errorf("creating %s: %w", filepath.Join(dir, d), err)
			}
		}
		if err := atomicfile.WriteIn(root, name, data, 0o644); err != nil {
			return res, fmt.Errorf("writing %s: %w", dst, err)
		}
		res.Written = append(res.Written, dst)
	}
	return res, nil
}
