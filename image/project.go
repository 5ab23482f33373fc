package image

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// InstallRoot is where the project content lives inside the image.
const InstallRoot = "/opt/fullsend"

// BinaryPath is where the fullsend binary lives inside the image.
const BinaryPath = "/usr/local/bin/fullsend"

// contentDirs are the project directories copied into the image, in layer
// order: rarely-changing content first, the policies (which change with
// every compile) last, so the earlier layers stay cached.
var contentDirs = []string{"agents", "skills", "templates"}

const policiesDir = "policies"

// ErrStalePolicies reports compiled policies that no longer match their
// sources (or their own manifest): the project must be compiled again.
var ErrStalePolicies = errors.New("compiled policies are stale or were modified")

// project is the checked content of a project directory.
type project struct {
	manifest       *bundle.Manifest
	policiesDigest string
	content        []file // agents, skills, templates
	policies       []file
}

// loadProject reads the project, refusing policies that do not match
// policies/manifest.json or whose sources changed since they were compiled.
func loadProject(fsys fs.FS, name string) (*project, error) {
	b, err := bundle.Open(fsys, policiesDir, bundle.WithSources(nil))
	switch {
	case errors.Is(err, bundle.ErrManifest):
		return nil, fmt.Errorf("project %s: %w (hint: run `fullsend policy compile %s` first)", name, err, name)
	case err != nil:
		return nil, fmt.Errorf("project %s: %w: %w (hint: run `fullsend policy compile %s`)", name, ErrStalePolicies, err, name)
	case len(b.Manifest.Agents) == 0:
		return nil, fmt.Errorf("project %s: %s/%s lists no agents", name, policiesDir, bundle.ManifestFile)
	}
	p := &project{manifest: b.Manifest, policiesDigest: b.ManifestSHA256}
	for _, dir := range contentDirs {
		files, err := readTree(fsys, dir)
		if err != nil {
			return nil, fmt.Errorf("project %s: %w", name, err)
		}
		p.content = append(p.content, files...)
	}
	if p.policies, err = readTree(fsys, policiesDir); err != nil {
		return nil, fmt.Errorf("project %s: %w", name, err)
	}
	return p, nil
}

// readTree reads every regular file under dir (a missing dir is empty).
// Symbolic links and special files are refused: they could point outside the
// project or mean different things on the build and the run machine.
func readTree(fsys fs.FS, dir string) ([]file, error) {
	if _, err := fs.Stat(fsys, dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var files []file
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link; copy the file into the project instead", p)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file (mode %s)", p, d.Type())
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, file{
			path: path.Join(InstallRoot, p),
			data: data,
			exec: info.Mode().Perm()&0o111 != 0,
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return files, nil
}
