// Package projectroot finds the root of a fullsend project from a
// directory inside it, as git finds a repository's and go a module's:
// commands run from a subdirectory work on the whole project.
//
// A project root is the nearest directory, from the start upwards, that
// holds one of Markers(): what `fullsend init` writes (.fullsend-version,
// agents/, skills/) or what `fullsend policy compile` writes
// (policies/manifest.json). The runtime layouts .claude/ and .opencode/
// mark a root only at the start itself: a home directory has them too.
// The walk ends at the root of the git repository holding the start (a
// directory with .git), so it never leaves the repository.
package projectroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Marker is one file or directory whose presence makes a directory a
// project root.
type Marker struct {
	// Path is slash-separated, relative to the candidate root.
	Path string
	// Dir says the path must be a directory (else a regular file).
	Dir bool
	// StartOnly says the marker counts in the start directory only.
	StartOnly bool
}

// Markers are what makes a directory a project root, in the order they
// are named in messages.
func Markers() []Marker {
	return []Marker{
		{Path: ".fullsend-version"},
		{Path: "policies/manifest.json"},
		{Path: "agents", Dir: true},
		{Path: "skills", Dir: true},
		{Path: ".claude/agents", Dir: true, StartOnly: true},
		{Path: ".opencode/agent", Dir: true, StartOnly: true},
		{Path: ".opencode/agents", Dir: true, StartOnly: true},
	}
}

// ErrNotFound reports that no directory from the start up to the
// repository (or file system) root holds a marker.
var ErrNotFound = errors.New("no fullsend project")

// maxDepth bounds the walk, whatever the file system reports.
const maxDepth = 256

// Find returns the project root for start: start itself when it is one,
// else the nearest parent that is, as a path relative to start when start
// is relative (".", "..", "../.."), else absolute. An error wraps
// ErrNotFound and names the directories looked in.
func Find(start string) (string, error) {
	abs, err := filepath.Abs(start)
	if err != nil {
		return "", fmt.Errorf("project root: %w", err)
	}
	dir := abs
	for depth := 0; depth < maxDepth; depth++ {
		if isRoot(dir, depth == 0) {
			return relTo(start, abs, dir), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir || exists(filepath.Join(dir, ".git")) {
			return "", notFound(abs, dir)
		}
		dir = parent
	}
	return "", notFound(abs, dir)
}

// notFound is ErrNotFound with where the walk looked.
func notFound(start, last string) error {
	var names []string
	for _, m := range Markers() {
		n := m.Path
		if m.Dir {
			n += "/"
		}
		names = append(names, n)
	}
	where := start
	if last != start {
		where = fmt.Sprintf("%s or its parents up to %s", start, last)
	}
	return fmt.Errorf("%w in %s (a project root holds %s): give the project directory as DIR, or run fullsend init",
		ErrNotFound, where, strings.Join(names, ", "))
}

// isRoot reports whether dir holds a marker; start says it is the start
// directory.
func isRoot(dir string, start bool) bool {
	for _, m := range Markers() {
		if m.StartOnly && !start {
			continue
		}
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(m.Path)))
		if err == nil && st.IsDir() == m.Dir && (m.Dir || st.Mode().IsRegular()) {
			return true
		}
	}
	return false
}

// exists reports whether anything is at p.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

// relTo writes root as start was written: relative to start when start
// is relative, else absolute.
func relTo(start, absStart, root string) string {
	if filepath.IsAbs(start) {
		return root
	}
	rel, err := filepath.Rel(absStart, root)
	if err != nil {
		return root
	}
	return filepath.Join(start, rel)
}
