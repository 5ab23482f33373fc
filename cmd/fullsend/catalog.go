package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// The organisation catalog a project compiles with is recorded in its
// bundle (bundle.Manifest.Catalog): `policy compile --catalog DIR` writes
// it, and every later command that compiles or checks the project uses it
// without the flag (--check, explain, suggest, image build, init), and
// names it in the compile command it advises.

// recordedCatalog is the catalog directory recorded in the manifest of the
// project in dir, as a path from dir; "" when none is recorded or there is
// no readable manifest. A recorded path that leads out of the project
// through a symbolic link is an error.
func recordedCatalog(dir string) (string, error) {
	m, _, err := bundle.ReadManifest(os.DirFS(filepath.Join(dir, "policies")))
	if err != nil || m.Catalog == "" {
		return "", nil
	}
	cat := m.CatalogIn(dir)
	if !insideProject(dir, cat) {
		return "", fmt.Errorf("%s: catalog %q leads out of the project %s through a symbolic link: give --catalog", filepath.Join(dir, "policies", bundle.ManifestFile), m.Catalog, dir)
	}
	return cat, nil
}

// insideProject reports whether path, with its links resolved, lies in
// the project directory dir (resolved too). A path that does not exist is
// inside when its recorded form is (the compile then names it missing).
func insideProject(dir, path string) bool {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	p, err := filepath.EvalSymlinks(path)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// catalogOption sets *catalog to the project's recorded catalog unless the
// command's --catalog flag was given (an explicit --catalog "" compiles
// without one, and records none).
func catalogOption(cmd *cobra.Command, dir string, catalog *string) error {
	if fl := cmd.Flags().Lookup("catalog"); fl != nil && fl.Changed {
		return nil
	}
	cat, err := recordedCatalog(dir)
	if err != nil {
		return err
	}
	*catalog = cat
	return nil
}

// compileCommand is the command that compiles the project in dir as it
// was compiled: with its recorded catalog.
func compileCommand(dir string) string {
	cmd := "fullsend policy compile "
	if cat, err := recordedCatalog(dir); err == nil && cat != "" {
		cmd += "--catalog " + shellQuote(cat) + " "
	}
	return cmd + shellQuote(dir)
}
