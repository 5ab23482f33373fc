// Package cueload builds one CUE package from the .cue files of a directory
// of an fs.FS, through an in-memory overlay, so the result never depends on
// the working directory or a cue.mod. It is shared by policycue (the
// embedded schemas and catalog) and the schema generator, which must not
// import policycue: policycue imports openshell, whose generated table the
// generator writes, so the generator has to build when that table is
// missing or stale.
//
// It imports only the standard library and cuelang.org/go.
package cueload

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/load"
)

// ErrNoFiles is returned for a directory without .cue files.
var ErrNoFiles = errors.New("no .cue files")

// Package loads the single CUE package formed by the .cue files directly in
// dir of fsys and builds it with ctx. Files are loaded in sorted order under
// a virtual root; positions in errors name them as /embedded/dir/<file>.
func Package(ctx *cue.Context, fsys fs.FS, dir string) (cue.Value, error) {
	// A virtual absolute root keeps the loader off the real filesystem.
	root := path.Join("/embedded", dir)
	overlay, files, err := readOverlay(fsys, dir, root)
	if err != nil {
		return cue.Value{}, err
	}
	inst, err := loadInstance(dir, &load.Config{Dir: root, Overlay: overlay}, files)
	if err != nil {
		return cue.Value{}, err
	}
	v := ctx.BuildInstance(inst)
	if err := v.Err(); err != nil {
		return cue.Value{}, fmt.Errorf("building %s: %w", dir, err)
	}
	return v, nil
}

// readOverlay reads the .cue files directly in dir of fsys into an overlay
// that places them under root, and returns their names there, sorted.
func readOverlay(fsys fs.FS, dir, root string) (map[string]load.Source, []string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading CUE directory %s: %w", dir, err)
	}
	overlay := map[string]load.Source{}
	var files []string
	for _, e := range entries {
		if !isCUEFile(e) {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", path.Join(dir, e.Name()), err)
		}
		name := path.Join(root, e.Name())
		overlay[name] = load.FromBytes(data)
		files = append(files, name)
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("loading %s: %w", dir, ErrNoFiles)
	}
	sort.Strings(files)
	return overlay, files, nil
}

// isCUEFile reports whether a directory entry is a .cue file.
func isCUEFile(e fs.DirEntry) bool {
	return !e.IsDir() && path.Ext(e.Name()) == ".cue"
}

// loadInstance loads files with cfg as the one CUE package of dir.
func loadInstance(dir string, cfg *load.Config, files []string) (*build.Instance, error) {
	insts := load.Instances(files, cfg)
	if len(insts) != 1 {
		return nil, fmt.Errorf("loading %s: expected one CUE package, got %d", dir, len(insts))
	}
	if err := insts[0].Err; err != nil {
		return nil, fmt.Errorf("loading %s: %w", dir, err)
	}
	return insts[0], nil
}
