package policydiff

import (
	"github.com/fullsend-ai/agent-sandbox/gitrepo"

	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// sideCatalog is the organisation's catalog (the .cue files at the top of
// the --catalog directory, as policycue.LoadCatalog reads them) as one
// side has it.
type sideCatalog struct {
	// files maps each .cue file, named relative to the project directory
	// (as the other sources are), to its bytes; nil when the side has no
	// such directory.
	files map[string][]byte
	fsys  fs.FS
	// missing is set for a git side whose revision lacks the directory.
	missing bool
}

// key identifies the catalog's contents, so that a compiler loads each
// distinct catalog once ("" for none).
func (c sideCatalog) key() string {
	if c.fsys == nil {
		return ""
	}
	h := sha256.New()
	for _, n := range sortedKeys(c.files) {
		fmt.Fprintf(h, "%d:%s%d:", len(n), n, len(c.files[n]))
		h.Write(c.files[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// readCatalog reads the top-level .cue files of fsys, naming each under
// prefix.
func readCatalog(fsys fs.FS, prefix string) (sideCatalog, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return sideCatalog{}, err
	}
	c := sideCatalog{files: map[string][]byte{}, fsys: fsys}
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".cue" {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return sideCatalog{}, err
		}
		c.files[path.Join(prefix, e.Name())] = data
	}
	return c, nil
}

// dirCatalog is the --catalog directory from the file system, for a
// project directory side (or a git side whose catalog is outside the
// repository), named relative to the project directory projectDir.
func (req Request) dirCatalog(projectDir string) (sideCatalog, error) {
	if req.Catalog == "" {
		return sideCatalog{}, nil
	}
	root, err := os.OpenRoot(req.Catalog)
	if err != nil {
		return sideCatalog{}, fmt.Errorf("--catalog %s: %w", req.Catalog, err)
	}
	defer root.Close()
	prefix := filepath.ToSlash(req.Catalog)
	if rel, err := filepath.Rel(projectDir, req.Catalog); err == nil {
		prefix = filepath.ToSlash(rel)
	}
	c, err := readCatalog(root.FS(), prefix)
	if err != nil {
		return sideCatalog{}, fmt.Errorf("--catalog %s: %w", req.Catalog, err)
	}
	// The bytes are read: the compile takes them, not the directory.
	c.fsys = catalogFS(c.files, prefix)
	return c, nil
}

// catalogFS is the catalog files named under prefix as a file system of
// their base names.
func catalogFS(files map[string][]byte, prefix string) fs.FS {
	m := fstest.MapFS{}
	for n, data := range files {
		m[strings.TrimPrefix(n, prefix+"/")] = &fstest.MapFile{Data: data, Mode: 0o644}
	}
	return m
}

// gitCatalog reads the --catalog directory at commit from the repository
// at top (prefix is RepoDir's path in it, project the project's): the
// catalog of that revision, as the pull request changes it. A directory
// outside the repository is read from the file system; one the revision
// lacks gives a side without org catalog.
func (req Request) gitCatalog(ctx context.Context, top, prefix, commit, project string) (sideCatalog, error) {
	if req.Catalog == "" {
		return sideCatalog{}, nil
	}
	dir := path.Join(prefix, filepath.ToSlash(req.Catalog))
	if filepath.IsAbs(req.Catalog) {
		rel, err := filepath.Rel(top, req.Catalog)
		dir = filepath.ToSlash(rel)
		if err != nil {
			dir = ".."
		}
	}
	if dir == ".." || strings.HasPrefix(dir, "../") {
		return req.dirCatalog(filepath.Join(req.RepoDir, req.Dir))
	}
	listed, err := gitrepo.Listed(ctx, top, commit, dir)
	if err != nil {
		return sideCatalog{}, fmt.Errorf("--catalog %s: %w", req.Catalog, err)
	}
	if !listed {
		return sideCatalog{missing: true}, nil
	}
	tree, err := gitrepo.Tree(ctx, top, commit, dir)
	if err != nil {
		return sideCatalog{}, fmt.Errorf("--catalog %s: %w", req.Catalog, err)
	}
	rel, err := filepath.Rel(project, dir)
	if err != nil {
		rel = dir
	}
	return readCatalog(tree, filepath.ToSlash(rel))
}

// catalogLine is a line of an org catalog file the head has and the base
// has not.
type catalogLine struct {
	file string
	line int
	text string
}

// addedCatalogLines are the lines of the head's catalog files that the
// base's file of the same name does not have (as many times), in file and
// line order.
func addedCatalogLines(base, head map[string][]byte) []catalogLine {
	var out []catalogLine
	for _, name := range sortedKeys(head) {
		if string(base[name]) == string(head[name]) {
			continue
		}
		had := map[string]int{}
		for _, l := range strings.Split(string(base[name]), "\n") {
			had[strings.TrimSpace(l)]++
		}
		for i, l := range strings.Split(string(head[name]), "\n") {
			t := strings.TrimSpace(l)
			if had[t] > 0 {
				had[t]--
				continue
			}
			if t != "" {
				out = append(out, catalogLine{name, i + 1, t})
			}
		}
	}
	return out
}

// blameCatalog puts first, in a change that grants and whose sources the
// base has everywhere (no line of the project changed for it), the line
// of the org catalog the head added that names what the change grants
// (its host, path or binary): a catalog entry the agent already used
// changed. Without such a line the sources stay as they are.
func (c *Change) blameCatalog(added []catalogLine, base map[string]bool) {
	if len(added) == 0 || (c.Action != ActionAdd && c.Action != ActionWiden && c.Action != ActionChange) {
		return
	}
	if slices.ContainsFunc(c.From, func(s bundle.Source) bool { return !base[s.File+"\x00"+s.Reason] }) {
		return
	}
	for _, tok := range c.catalogTokens() {
		for _, l := range added {
			if strings.Contains(l.text, tok) {
				c.From = append([]bundle.Source{{File: l.file, Line: l.line, Reason: "org catalog (a line the head added)"}}, c.From...)
				return
			}
		}
	}
}

// catalogTokens are the values a catalog line would spell for what the
// change grants, most specific first: the host of an endpoint, then the
// words of the granted value (a path, a binary), longest first.
func (c *Change) catalogTokens() []string {
	var out []string
	if c.Kind == "endpoint" && c.Host != "" {
		out = append(out, c.Host)
	}
	words := strings.Fields(c.After)
	slices.SortStableFunc(words, func(a, b string) int { return len(b) - len(a) })
	for _, w := range words {
		if len(w) >= 3 && w != "allow" && w != "deny" && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
