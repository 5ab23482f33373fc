package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"testing/fstest"
)

// maxTree bounds the bytes read from one revision's tree.
const maxTree = 1 << 30

// Tree reads the project directory dir (relative to the repository
// root, "" or "." for the root) at a commit into memory from the
// repository at repoDir: `git ls-tree` lists the files and `git cat-file
// --batch` reads their blobs as committed. The project is never checked out
// or executed, and no attribute applies: `git archive` would honour a PR's
// .gitattributes (export-ignore hides a file from the diff, export-subst
// rewrites one). Symbolic links are kept as links (the compiler refuses them
// where it refuses them on disk); submodules are left out.
func Tree(ctx context.Context, repoDir, commit, dir string) (fs.FS, error) {
	if err := CheckRevision(commit); err != nil {
		return nil, err
	}
	treeish := commit
	if d := strings.Trim(path.Clean("/"+dir), "/"); d != "" {
		treeish += ":" + d
	}
	list, err := limited(ctx, repoDir, 256<<20, nil, "ls-tree", "-r", "-z", treeish)
	if err != nil {
		return nil, err
	}
	entries, err := parseTree(treeish, list)
	if err != nil {
		return nil, err
	}
	var oids strings.Builder
	for _, e := range entries {
		oids.WriteString(e.OID + "\n")
	}
	out, err := limited(ctx, repoDir, maxTree, strings.NewReader(oids.String()), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	return readBlobs(entries, out)
}

// Entry is one file or link of a `git ls-tree` listing.
type Entry struct {
	Name string      // the path below the listed tree
	Mode fs.FileMode // 0o644, 0o755 or a symbolic link
	OID  string      // the blob's object id
}

// treeModes maps the git modes Tree keeps to file modes; a submodule
// (160000) has no content here.
var treeModes = map[string]fs.FileMode{"100644": 0o644, "100755": 0o755, "120000": fs.ModeSymlink | 0o777}

// parseTree reads the NUL-separated records of `git ls-tree -r -z`: the
// files and links with safe paths, submodules left out.
func parseTree(treeish string, list []byte) ([]Entry, error) {
	var entries []Entry
	for _, rec := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		meta, name, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("git ls-tree %s: unexpected record %q", treeish, lit(rec))
		}
		if !fs.ValidPath(name) {
			return nil, fmt.Errorf("git tree %s: unsafe path %q", treeish, lit(name))
		}
		if mode, ok := treeModes[f[0]]; ok {
			entries = append(entries, Entry{Name: name, Mode: mode, OID: f[2]})
		}
	}
	return entries, nil
}

// readBlobs reads the output of `git cat-file --batch`, one blob per
// entry in order, into an in-memory file system.
func readBlobs(entries []Entry, out []byte) (fs.FS, error) {
	m := fstest.MapFS{}
	for _, e := range entries {
		header, rest, ok := bytes.Cut(out, []byte("\n"))
		f := strings.Fields(string(header))
		if !ok || len(f) != 3 || f[1] != "blob" {
			return nil, fmt.Errorf("git cat-file: unexpected header %q for %s", lit(string(header)), lit(e.Name))
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || n+1 > len(rest) {
			return nil, fmt.Errorf("git cat-file: bad size in %q for %s", lit(string(header)), lit(e.Name))
		}
		m[e.Name] = &fstest.MapFile{Data: rest[:n:n], Mode: e.Mode}
		out = rest[n+1:]
	}
	return m, nil
}

// Lookup lists what `git ls-tree -z` shows at name in commit: listed is
// false when commit has nothing there; entries holds the files and links
// (a directory or a submodule listed there yields none). name is a
// literal path, never pathspec magic.
func Lookup(ctx context.Context, repoDir, commit, name string) (entries []Entry, listed bool, err error) {
	if err := CheckRevision(commit); err != nil {
		return nil, false, err
	}
	list, err := output(ctx, repoDir, "ls-tree", "-z", "--end-of-options", commit, "--", name)
	if err != nil || len(list) == 0 {
		return nil, false, err
	}
	entries, err = parseTree(commit, list)
	return entries, true, err
}

// Listed reports whether commit has anything (file, link, directory or
// submodule) at name, a literal path.
func Listed(ctx context.Context, repoDir, commit, name string) (bool, error) {
	if err := CheckRevision(commit); err != nil {
		return false, err
	}
	list, err := output(ctx, repoDir, "ls-tree", "-z", "--end-of-options", commit, "--", name)
	return len(list) > 0, err
}

// Blob reads the blob oid, refusing one larger than limit bytes.
func Blob(ctx context.Context, repoDir, oid string, limit int64) ([]byte, error) {
	return limited(ctx, repoDir, limit, nil, "cat-file", "blob", oid)
}
