package policycue

import (
	"embed"
	"fmt"
	"io/fs"

	"cuelang.org/go/cue"
	"github.com/fullsend-ai/agent-sandbox/internal/cueload"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

//go:embed schema/openshell/*.cue
var openshellSchemaFS embed.FS

// OpenShellSchemaDir is the directory of the embedded OpenShell #Policy
// schema (one CUE package); OpenShellSchemaCUE prints it.
const OpenShellSchemaDir = "schema/openshell"

// ErrNoCUEFiles is returned by LoadEmbedded for a directory without .cue files.
var ErrNoCUEFiles = cueload.ErrNoFiles

// LoadEmbedded loads the single CUE package formed by the .cue files directly
// in dir of fsys (typically an embed.FS) and builds it with ctx. Files are
// loaded through an in-memory overlay, never from disk, in sorted order, so
// the result does not depend on the working directory.
func LoadEmbedded(ctx *cue.Context, fsys fs.FS, dir string) (cue.Value, error) {
	return cueload.Package(ctx, fsys, dir)
}

// featureSwitches maps each #Features switch of the OpenShell schema to the
// openshell.Feature its @feature(name) attribute names.
func featureSwitches(pkg cue.Value) (map[string]openshell.Feature, error) {
	it, err := pkg.LookupPath(cue.ParsePath("#Features")).Fields()
	if err != nil {
		return nil, fmt.Errorf("reading #Features: %w", err)
	}
	out := map[string]openshell.Feature{}
	for it.Next() {
		attr := it.Value().Attribute("feature")
		name, err := attr.String(0)
		if err != nil || name == "" {
			return nil, fmt.Errorf("#Features.%s: no @feature(name) attribute", it.Selector().Unquoted())
		}
		out[it.Selector().Unquoted()] = openshell.Feature(name)
	}
	return out, nil
}

// PolicySchema returns the closed CUE definition of an OpenShell policy at
// version (#PolicyAt with that release's feature set), ready for
// Value.Unify and Validate. It is what `cue vet -d '#Policy'` checks, for any
// supported release rather than only the newest.
func PolicySchema(ctx *cue.Context, version string) (cue.Value, error) {
	v, err := openshell.NormalizeVersion(version)
	if err != nil {
		return cue.Value{}, err
	}
	pkg, err := LoadEmbedded(ctx, openshellSchemaFS, OpenShellSchemaDir)
	if err != nil {
		return cue.Value{}, err
	}
	switches, err := featureSwitches(pkg)
	if err != nil {
		return cue.Value{}, err
	}
	feats := map[string]bool{}
	for name, f := range switches {
		feats[name] = openshell.Supports(f, v)
	}
	def := pkg.LookupPath(cue.ParsePath("#PolicyAt"))
	def = def.FillPath(cue.MakePath(cue.Def("#f")), feats)
	if err := def.Err(); err != nil {
		return cue.Value{}, fmt.Errorf("instantiating #PolicyAt for %s: %w", v, err)
	}
	return def, nil
}
