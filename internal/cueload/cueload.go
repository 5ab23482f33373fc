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
	"cuelang.org/go/cue/load"
)

// ErrNoFiles is returned for a directory without .cue files.
var ErrNoFiles = errors.New("no .cue files")

// Package loads the single CUE package formed by the .cue files directly in
// dir of fsys and builds it with ctx. Files are loaded in sorted order under
// a virtual root; positions in errors name them as /embedded/dir/<file>.
func Package(ctx *cue.Context, fsys fs.FS, dir string) (cue.Value, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return cue.Value{}, fmt.Errorf("reading CUE directory %s: %w", dir, err)
	}
	// A virtual absolute root keeps the loader off the real filesystem.
	root := path.Join("/embedded", dir)
	overlay := map[string]load.Source{}
	var files []string
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".cue" {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return cue.Value{}, fmt.Errorf("reading %s: %w", path.Join(dir, e.Name()), err)
		}
		name := path.Join(root, e.Name())
		overlay[name] = load.FromBytes(data)
		files = append(files, name)
	}
	if len(files) == 0 {
		return cue.Value{}, fmt.Errorf("loading %s: %w", dir, ErrNoFiles)
	}
	sort.Strings(files)
	insts := load.Instances(files, &load.Config{Dir: root, Overlay: overlay})
	if len(insts) != 1 {
		return cue.Value{}, fmt.Errorf("loading %s: expected one CUE package, got %d", dir, len(insts))
	}
	if err := insts[0].Err; err != nil {
		return cue.Value{}, fmt.Errorf("loading %s: %w", dir, err)
	}
	v := ctx.BuildInstance(insts[0])
	if err := v.Err(); err != nil {
		return cue.Value{}, fmt.Errorf("building %s: %w", dir, err)
	}
	return v, nil
}
