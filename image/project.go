package image

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

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
// The directories that go into the image are read first, refusing every
// symbolic link (see readTree), so nothing is read through one; the
// manifest then checks the very bytes that were read.
func loadProject(fsys fs.FS, name string) (*project, error) {
	p := &project{}
	for _, dir := range contentDirs {
		files, err := readTree(fsys, dir)
		if err != nil {
			return nil, fmt.Errorf("project %s: %w", name, err)
		}
		p.content = append(p.content, files...)
	}
	policies, err := readTree(fsys, policiesDir)
	if err != nil {
		return nil, fmt.Errorf("project %s: %w", name, err)
	}
	p.policies = policies
	b, err := bundle.Open(fsys, policiesDir, bundle.WithSources(nil))
	switch {
	case errors.Is(err, bundle.ErrManifest):
		return nil, fmt.Errorf("project %s: %w (hint: run `fullsend policy compile %s` first)", name, err, name)
	case err != nil:
		return nil, fmt.Errorf("project %s: %w: %w (hint: run `fullsend policy compile %s`)", name, ErrStalePolicies, err, name)
	case len(b.Manifest.Agents) == 0:
		return nil, fmt.Errorf("project %s: %s/%s lists no agents", name, policiesDir, bundle.ManifestFile)
	}
	if err := samePolicies(p.policies, b); err != nil {
		return nil, fmt.Errorf("project %s: %w: %w", name, ErrStalePolicies, err)
	}
	p.manifest, p.policiesDigest = b.Manifest, b.ManifestSHA256
	return p, nil
}

// samePolicies checks that the policies layer holds the bytes the bundle
// verified: the manifest and every agent's policy.
func samePolicies(files []file, b *bundle.Bundle) error {
	want := map[string]string{bundle.ManifestFile: b.ManifestSHA256}
	for agent, data := range b.Policies {
		want[b.Manifest.Agents[agent].Policy] = bundle.SHA256Hex(data)
	}
	for _, f := range files {
		rel := strings.TrimPrefix(f.path, InstallRoot+"/"+policiesDir+"/")
		if sum, ok := want[rel]; ok {
			if bundle.SHA256Hex(f.data) != sum {
				return fmt.Errorf("%s/%s changed while the project was read; build again", policiesDir, rel)
			}
			delete(want, rel)
		}
	}
	if len(want) > 0 {
		missing := slices.Sorted(maps.Keys(want))
		return fmt.Errorf("%s/%s changed while the project was read; build again", policiesDir, missing[0])
	}
	return nil
}

// readTree reads every regular file under dir (a missing dir is empty).
// Symbolic links are refused wherever they are, dir itself included, even
// when they point inside the project: the signed image holds the project's
// own files, and a link could pull in a file of the build machine or mean
// something else on the run machine. Special files are refused too. fsys
// must report links (fs.ReadLinkFS, as os.DirFS and os.Root.FS do).
func readTree(fsys fs.FS, dir string) ([]file, error) {
	fi, err := fs.Lstat(fsys, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s is a symbolic link; copy the files into the project instead", dir)
	case !fi.IsDir():
		return nil, fmt.Errorf("%s is not a directory (mode %s)", dir, fi.Mode().Type())
	}
	var files []file
	err = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
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
