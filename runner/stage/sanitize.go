package stage

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
)

// Why Sanitize removes an entry.
const (
	whySymlink = "symbolic link: it can point anywhere on the runner"
	whySpecial = "special file: devices, pipes and sockets are not outputs"
	whyLinked  = "hard link: the file has another name, which may lie outside the output, and a write or chmod through one name changes both"
	whyGit     = ".git directory or file: outputs are data; hand commits back as a bundle or patch files"
	whyBare    = "repository layout (HEAD with objects/ and refs/, or commondir): git would use it as a repository"
)

// Removal is one entry Sanitize removed (or an extractor left out),
// relative to its root, and why.
type Removal struct {
	Path string
	Why  string
}

// Sanitize makes files downloaded from a sandbox safe to hand to later CI
// steps: they are untrusted data, and nothing in them may make a tool on
// the runner run the agent's code or reach outside the output. It removes
// every symbolic link (a link can point anywhere on the runner, and the
// agent chose it), every name of a regular file with more than one (a hard
// link shares the file with a name that may lie outside the output: a
// later write or chmod through one changes both), every special file, every .git directory or file (its
// config, hooks and gitdir indirection run code on the next git command:
// core.fsmonitor, core.hooksPath, filters, includes...), spelled in any way
// git or a case-insensitive or NTFS checkout reads as .git, and every
// directory git would take for a repository (HEAD with objects/ and refs/,
// or with commondir); it clears setuid, setgid, sticky and world-write
// bits and gives directories the owner's rwx (so that they can be walked
// and removed). It works through an os.Root: nothing outside root is
// touched.
// It returns what it removed, relative to root ("." when root itself went).
func Sanitize(root string) ([]string, error) {
	rs, err := SanitizeReport(root)
	paths := make([]string, 0, len(rs))
	for _, r := range rs {
		paths = append(paths, r.Path)
	}
	return paths, err
}

// SanitizeReport is Sanitize returning each removal with its reason.
func SanitizeReport(root string) ([]Removal, error) {
	info, err := os.Lstat(root)
	if err != nil {
		return nil, fmt.Errorf("sanitizing %s: %w", root, err)
	}
	s := &sanitizer{linked: map[fileID]bool{}}
	why := s.verdict(filepath.Base(root), info)
	switch {
	case why == "" && info.IsDir():
		if why, err = s.rootDir(root, info.Mode()); err != nil || why == "" {
			return s.removed, err
		}
	case why == "":
		return nil, chmodSafe(root, info.Mode())
	}
	if err := RemoveTree(root); err != nil {
		return nil, fmt.Errorf("sanitizing %s: %w", root, err)
	}
	return []Removal{{".", why}}, nil
}

// rootDir sanitizes the directory root through an os.Root on it, or
// returns why it must go as a whole.
func (s *sanitizer) rootDir(root string, mode fs.FileMode) (string, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", fmt.Errorf("sanitizing %s: %w", root, err)
	}
	defer r.Close()
	s.root = r
	why, err := s.dir(".", mode)
	if err != nil {
		return "", fmt.Errorf("sanitizing %s: %w", root, err)
	}
	return why, nil
}

// chmodSafe clears the unsafe bits of the mode of the file p (safeMode).
func chmodSafe(p string, mode fs.FileMode) error {
	if m, change := safeMode(mode); change {
		if err := os.Chmod(p, m); err != nil {
			return fmt.Errorf("sanitizing %s: %w", p, err)
		}
	}
	return nil
}

// sanitizer walks one output through its os.Root.
type sanitizer struct {
	root    *os.Root
	removed []Removal
	// linked holds the files removed as hard links, so that the last name
	// of one goes too, once the others are gone and it has one link left.
	linked map[fileID]bool
}

// dir sanitizes the directory name, or returns why it must go as a whole.
func (s *sanitizer) dir(name string, mode fs.FileMode) (string, error) {
	if err := s.chmod(name, mode); err != nil {
		return "", err
	}
	ents, err := fs.ReadDir(s.root.FS(), name)
	if err != nil {
		return "", err
	}
	if isRepository(ents) {
		return whyBare, nil
	}
	for _, e := range ents {
		if err := s.entry(path.Join(name, e.Name()), e); err != nil {
			return "", err
		}
	}
	return "", nil
}

// entry sanitizes one entry of a directory: it removes it, recurses into
// it or clears its mode.
func (s *sanitizer) entry(name string, e fs.DirEntry) error {
	info, err := e.Info()
	if err != nil {
		return err
	}
	why := s.verdict(e.Name(), info)
	switch {
	case why == "" && info.IsDir():
		if why, err = s.dir(name, info.Mode()); err != nil || why == "" {
			return err
		}
	case why == "":
		return s.chmod(name, info.Mode())
	}
	if err := removeAll(s.root, name); err != nil {
		return err
	}
	s.removed = append(s.removed, Removal{filepath.FromSlash(name), why})
	return nil
}

func (s *sanitizer) chmod(name string, mode fs.FileMode) error {
	if m, change := safeMode(mode); change {
		return s.root.Chmod(name, m)
	}
	return nil
}

// verdict says why an entry must go, or "" when it may stay (a directory
// is judged again on its contents). It is decided before anything is done
// to the entry: a hard link is never chmod-ed, which would change the file
// under its other name too.
func (s *sanitizer) verdict(name string, info fs.FileInfo) string {
	mode := info.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		return whySymlink
	case !mode.IsDir() && !mode.IsRegular():
		return whySpecial
	case IsDotGit(name):
		return whyGit
	case mode.IsRegular() && s.hardLinked(info):
		return whyLinked
	}
	return ""
}

// hardLinked reports whether a regular file has more than one name, or is
// a file already removed for that reason under another name.
func (s *sanitizer) hardLinked(info fs.FileInfo) bool {
	id, links, ok := fileLinks(info)
	if !ok {
		return false
	}
	if links > 1 || s.linked[id] {
		s.linked[id] = true
		return true
	}
	return false
}

// safeMode is mode without setuid, setgid, sticky and world write, and
// for a directory with the owner's rwx (so that it can be walked and
// emptied); change is false when mode is already that.
func safeMode(mode fs.FileMode) (safe fs.FileMode, change bool) {
	safe = mode.Perm() &^ 0o002
	if mode.IsDir() {
		safe |= 0o700
	}
	return safe, safe != mode.Perm() || mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0
}

// RemoveTree removes the file or tree at p without following links, like
// os.RemoveAll, and also when the agent left directories without the
// owner's write or search permission in it.
func RemoveTree(p string) error {
	err := os.RemoveAll(p)
	if err == nil {
		return nil
	}
	r, rerr := os.OpenRoot(filepath.Dir(p))
	if rerr != nil {
		return err
	}
	defer r.Close()
	return removeAll(r, filepath.Base(p))
}

// removeAll is r.RemoveAll(name), retried once after giving every
// directory under name the owner's rwx.
func removeAll(r *os.Root, name string) error {
	err := r.RemoveAll(name)
	if err == nil {
		return nil
	}
	_ = fs.WalkDir(r.FS(), name, func(p string, d fs.DirEntry, werr error) error {
		if werr == nil && d.IsDir() {
			_ = r.Chmod(p, 0o700)
		}
		return nil
	})
	return r.RemoveAll(name)
}

// IsDotGit reports whether git, or a checkout of these files on a
// case-insensitive (HFS+, APFS) or NTFS file system, would read name as
// .git: any case, with Unicode format characters (zero-width joiners...)
// that HFS+ ignores, trailing dots and spaces or an alternate data stream
// that NTFS drops, or the 8.3 short name GIT~1. Git itself refuses these
// spellings in trees for the same reason (is_hfs_dotgit, is_ntfs_dotgit).
func IsDotGit(name string) bool {
	name = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, name)
	name, _, _ = strings.Cut(name, ":")
	name = strings.TrimRight(name, ". ")
	return strings.EqualFold(name, ".git") || strings.EqualFold(name, "git~1")
}

// isRepository reports whether git could take a directory with these
// entries for a repository (setup.c is_git_directory: HEAD, and objects/
// and refs/ or a commondir file naming where they are), in any case, so
// that a checkout on a case-insensitive file system is covered too. It errs
// on the side of removal: HEAD with any one of the others is enough.
func isRepository(ents []fs.DirEntry) bool {
	var head, other bool
	for _, e := range ents {
		switch n := e.Name(); {
		case strings.EqualFold(n, "HEAD"):
			head = true
		case strings.EqualFold(n, "objects"), strings.EqualFold(n, "refs"), strings.EqualFold(n, "commondir"):
			other = true
		}
	}
	return head && other
}
