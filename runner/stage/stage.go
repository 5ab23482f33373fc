package stage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Project-level runtime configuration, at any depth of the workspace: by
// the runtimes' documented precedence it would override or extend the
// verified definition (Claude Code: .claude/ holds agents, settings with
// hooks, permissions and env, skills, commands; .mcp.json adds MCP
// servers; CLAUDE.md and CLAUDE.local.md are loaded as instructions.
// OpenCode: .opencode/ and opencode.json[c] hold agents, config and
// plugins; AGENTS.md is loaded as instructions; .agents/skills/ holds
// skills). It is left out of the staged workspace.
var (
	runtimeConfigDirs  = map[string]bool{".claude": true, ".opencode": true}
	runtimeConfigFiles = map[string]bool{"CLAUDE.md": true, "CLAUDE.local.md": true, ".mcp.json": true,
		"opencode.json": true, "opencode.jsonc": true, ".opencode.json": true, "AGENTS.md": true}
)

// Workspace is a private copy of the workspace made for upload: no
// project runtime configuration, git metadata without credentials or
// commands, and what the token scan found. .git stays in the copy because
// `openshell sandbox upload` picks the files to send with
// `git ls-files -co --exclude-standard` in the repository around the path
// (crates/openshell-cli/src/run.rs git_sync_files, v0.0.83:6060-6104,
// v0.0.111:5380-5424): without it every ignored file would go up.
type Workspace struct {
	// Dir is the staged copy, parent/<basename of the workspace>.
	Dir string
	// Stripped is the project runtime configuration left out.
	Stripped []string
	// GitDropped names, per rewritten git config file, the variables
	// dropped or cleaned.
	GitDropped map[string][]string
	// Skipped are entries not copied: git hooks, .git links that point
	// outside the workspace, sockets, pipes and devices.
	Skipped []string
	// Blocking are the files holding a credential; Committed are files
	// whose token-shaped strings are their committed content.
	Blocking, Committed map[string][]Finding
	// Files and Bytes count what was staged.
	Files int
	Bytes int64
}

// stager walks the job's checkout (read only) into the staging directory.
type stager struct {
	root, dst string
	scan      *Scanner
	gitDirs   map[string]bool // source dirs known to be (or not be) git dirs
	found     map[string][]Finding
	res       *Workspace
}

// Copy copies the workspace src into parent/<basename of src> and returns
// the copy with its report. It never writes to src. A path of the checkout
// in its error is quoted, never raw.
func Copy(src, parent string, scan *Scanner) (*Workspace, error) {
	w, err := copyWorkspace(src, parent, scan)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("staging the workspace: %s %s: %w", pe.Op, quoteShort(pe.Path), pe.Err)
		}
		return nil, err
	}
	return w, nil
}

func copyWorkspace(src, parent string, scan *Scanner) (*Workspace, error) {
	root, err := filepath.EvalSymlinks(src)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory", src)
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("staging the workspace: %w", err)
	}
	s := &stager{root: root, dst: filepath.Join(parent, filepath.Base(src)), scan: scan,
		gitDirs: map[string]bool{}, found: map[string][]Finding{},
		res: &Workspace{GitDropped: map[string][]string{}, Blocking: map[string][]Finding{}, Committed: map[string][]Finding{}}}
	s.res.Dir = s.dst
	if err := filepath.WalkDir(root, s.visit); err != nil {
		return nil, fmt.Errorf("staging the workspace: %w", err)
	}
	s.judge()
	return s.res, nil
}

func (s *stager) visit(p string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(s.root, p)
	if err != nil {
		return err
	}
	out := filepath.Join(s.dst, rel)
	if rel == "." {
		return os.Mkdir(out, 0o755)
	}
	slash := filepath.ToSlash(rel)
	if done, err := s.leaveOut(p, slash, out, d); done || err != nil {
		return err
	}
	return s.copyEntry(p, slash, out, d)
}

// leaveOut handles what is not copied as it is: project runtime config,
// git hooks and .git links. done reports that the entry was handled; err
// may be fs.SkipDir.
func (s *stager) leaveOut(p, slash, out string, d fs.DirEntry) (done bool, err error) {
	inGit := s.insideGitDir(slash)
	switch {
	case !inGit && s.runtimeConfig(slash, d):
		s.res.Stripped = append(s.res.Stripped, slash+dirSuffix(d))
		return true, skipIfDir(d)
	case inGit && s.isHooksDir(p, d):
		s.res.Skipped = append(s.res.Skipped, slash+"/")
		return true, fs.SkipDir
	case !inGit && isGitFile(d):
		return true, s.gitLink(p, slash, out, d)
	}
	return false, nil
}

// isHooksDir reports whether a directory is the hooks directory of a git
// directory.
func (s *stager) isHooksDir(p string, d fs.DirEntry) bool {
	return d.IsDir() && d.Name() == "hooks" && s.isGitDir(filepath.Dir(p))
}

// isGitFile reports whether a work-tree entry is a .git that is not a
// directory (a "gitdir:" link, or a symlink).
func isGitFile(d fs.DirEntry) bool { return d.Name() == ".git" && !d.IsDir() }

// copyEntry copies a directory, a symlink (as a link) or a regular file;
// a git config file is rewritten, anything else is skipped.
func (s *stager) copyEntry(p, slash, out string, d fs.DirEntry) error {
	switch t := d.Type(); {
	case d.IsDir():
		return os.Mkdir(out, 0o755)
	case t&fs.ModeSymlink != 0:
		return copySymlink(p, out)
	case !t.IsRegular():
		s.res.Skipped = append(s.res.Skipped, slash)
		return nil
	}
	if s.isGitConfig(p, slash, d) {
		return s.gitConfig(p, slash, out)
	}
	return s.copyFile(p, slash, out, !s.inGitObjects(p, slash))
}

// copySymlink copies a symlink as a link. It is uploaded as a link, never
// followed: its target stays on the runner.
func copySymlink(p, out string) error {
	target, err := os.Readlink(p)
	if err != nil {
		return err
	}
	return os.Symlink(target, out)
}

// isGitConfig reports whether a file is the config (or config.worktree)
// of a git directory.
func (s *stager) isGitConfig(p, slash string, d fs.DirEntry) bool {
	return (d.Name() == "config" || d.Name() == "config.worktree") && s.insideGitDir(slash) && s.isGitDir(filepath.Dir(p))
}

func dirSuffix(d fs.DirEntry) string {
	if d.IsDir() {
		return "/"
	}
	return ""
}

func skipIfDir(d fs.DirEntry) error {
	if d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

// runtimeConfig reports whether a work-tree entry is project runtime
// configuration.
func (s *stager) runtimeConfig(slash string, d fs.DirEntry) bool {
	name := d.Name()
	if d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
		if runtimeConfigDirs[name] || name == "skills" && path.Base(path.Dir(slash)) == ".agents" {
			return true
		}
	}
	return !d.IsDir() && runtimeConfigFiles[name]
}

// insideGitDir reports whether a path lies inside a .git directory.
func (s *stager) insideGitDir(slash string) bool {
	parts := strings.Split(slash, "/")
	for _, c := range parts[:len(parts)-1] {
		if c == ".git" {
			return true
		}
	}
	return false
}

// isGitDir reports whether a source directory is a git directory (holds
// HEAD): .git itself, .git/modules/NAME, .git/worktrees/NAME.
func (s *stager) isGitDir(dir string) bool {
	v, ok := s.gitDirs[dir]
	if !ok {
		st, err := os.Lstat(filepath.Join(dir, "HEAD"))
		v = err == nil && st.Mode().IsRegular()
		s.gitDirs[dir] = v
	}
	return v
}

// inGitObjects reports whether a file is in a git object store, whose
// compressed content a byte scan cannot read.
func (s *stager) inGitObjects(p, slash string) bool {
	if !s.insideGitDir(slash) {
		return false
	}
	for dir := filepath.Dir(p); len(dir) > len(s.root); dir = filepath.Dir(dir) {
		if filepath.Base(dir) == "objects" && s.isGitDir(filepath.Dir(dir)) {
			return true
		}
	}
	return false
}

// gitLink copies a .git file ("gitdir: PATH", a submodule or worktree)
// only when PATH is relative and stays inside the workspace; a link to a
// repository elsewhere on the runner (or a symlink named .git) is dropped.
func (s *stager) gitLink(p, slash, out string, d fs.DirEntry) error {
	target, ok, err := readGitLink(p, d)
	if err != nil {
		return err
	}
	if ok && gitLinkInside(slash, target) {
		return s.copyFile(p, slash, out, true)
	}
	s.res.Skipped = append(s.res.Skipped, slash)
	return nil
}

// readGitLink returns the PATH of a .git file that is a regular file of
// at most 4 KiB holding "gitdir: PATH" (ok false for any other).
func readGitLink(p string, d fs.DirEntry) (target string, ok bool, err error) {
	if !d.Type().IsRegular() {
		return "", false, nil
	}
	if info, err := d.Info(); err != nil || info.Size() > 4096 {
		return "", false, nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", false, err
	}
	target, ok = strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	return target, ok, nil
}

// gitLinkInside reports whether the gitdir target of the .git file at
// slash is a relative path that stays inside the workspace.
func gitLinkInside(slash, target string) bool {
	if filepath.IsAbs(target) || strings.ContainsAny(target, "\n\r") {
		return false
	}
	joined := path.Join(path.Dir(slash), filepath.ToSlash(target))
	return joined != ".." && !strings.HasPrefix(joined, "../")
}

// gitConfig writes the allowlisted rewrite of a repository's config.
func (s *stager) gitConfig(p, slash, out string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	clean, dropped := sanitizeGitConfig(data)
	if len(dropped) > 0 {
		s.res.GitDropped[slash] = dropped
	}
	if err := os.WriteFile(out, clean, 0o644); err != nil {
		return err
	}
	return s.record(slash, bytes.NewReader(clean), int64(len(clean)))
}

// copyFile copies a regular file, scanning its bytes on the way.
func (s *stager) copyFile(p, slash, out string, scan bool) error {
	in, err := os.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	o, err := os.OpenFile(out, os.O_CREATE|os.O_EXCL|os.O_WRONLY, st.Mode().Perm()&0o755|0o600)
	if err != nil {
		return err
	}
	if scan {
		err = s.record(slash, io.TeeReader(in, o), st.Size())
	} else {
		_, err = io.Copy(o, in)
		s.res.Files++
		s.res.Bytes += st.Size()
	}
	if err != nil {
		o.Close()
		return err
	}
	return o.Close()
}

// record scans a staged file's bytes (reading r to its end).
func (s *stager) record(slash string, r io.Reader, size int64) error {
	f, err := s.scan.scan(r)
	if err != nil {
		return err
	}
	if len(f) > 0 {
		s.found[slash] = f
	}
	s.res.Files++
	s.res.Bytes += size
	return nil
}

// judge sorts the findings: one of the job's own values always blocks; a
// token shape blocks unless the file is exactly its committed content
// (the repository's own text, which anyone who can read the repository
// has, like the test fixtures of a secret scanner).
func (s *stager) judge() {
	var idx *gitIndex
	loaded := false
	for rel, fl := range s.found {
		if !slices.ContainsFunc(fl, func(f Finding) bool { return f.Exact }) {
			if !loaded {
				idx, loaded = s.loadIndex(), true
			}
			if idx != nil && idx.committed(rel, filepath.Join(s.dst, filepath.FromSlash(rel))) {
				s.res.Committed[rel] = fl
				continue
			}
		}
		s.res.Blocking[rel] = fl
	}
}

// loadIndex reads the workspace repository's index, if any.
func (s *stager) loadIndex() *gitIndex {
	data, err := os.ReadFile(filepath.Join(s.root, ".git", "index"))
	if err != nil {
		return nil
	}
	idx, err := readGitIndex(data, s.objectHashLen())
	if err != nil {
		return nil
	}
	return idx
}

// objectHashLen is the length of the workspace repository's object ids:
// 32 if its config sets extensions.objectFormat to sha256, else 20.
func (s *stager) objectHashLen() int {
	cfg, err := os.ReadFile(filepath.Join(s.root, ".git", "config"))
	if err != nil {
		return 20
	}
	entries, _ := parseGitConfig(cfg)
	hashLen := 20
	for _, e := range entries {
		if e.section == "extensions" && e.key == "objectformat" && strings.EqualFold(e.value, "sha256") {
			hashLen = 32
		}
	}
	return hashLen
}

// Refusal is why the copy must not be uploaded when a credential was
// found, "" otherwise: it names the files and what kind of credential
// each holds, never a value.
func (w *Workspace) Refusal() string {
	if len(w.Blocking) == 0 {
		return ""
	}
	return fmt.Sprintf("refusing to upload it: %s; remove them from the workspace before the run (the checkout itself was not changed)",
		describeFindings(w.Blocking))
}

// describeFindings lists files with what was found, at most 10.
func describeFindings(m map[string][]Finding) string {
	var parts []string
	for _, f := range slices.Sorted(maps.Keys(m)) {
		var what []string
		for _, x := range m[f] {
			what = append(what, x.What)
		}
		parts = append(parts, quoteShort(f)+" ("+strings.Join(what, "; ")+")")
	}
	return listShort(parts, 10)
}

// quoteShort quotes an untrusted name for a log line: escaped (no control
// characters reach the log) and cut to 96 bytes.
func quoteShort(s string) string {
	const limit = 96
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}

// listShort joins at most n items and says how many more there were.
func listShort(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// Report writes what staging changed through logf, names only, quoted.
func (w *Workspace) Report(logf func(format string, args ...any)) {
	logf("staged the workspace for upload: %d file(s), %d bytes", w.Files, w.Bytes)
	if len(w.Stripped) > 0 {
		logf("left out project runtime config (the verified definition runs instead): %s", listShort(quoteAll(w.Stripped), 10))
	}
	for _, f := range slices.Sorted(maps.Keys(w.GitDropped)) {
		logf("rewrote %s from an allowlist; dropped: %s", quoteShort(f), listShort(w.GitDropped[f], 10))
	}
	if len(w.Skipped) > 0 {
		logf("not uploaded (git hooks, .git links out of the workspace, special files): %s", listShort(quoteAll(w.Skipped), 10))
	}
	if len(w.Committed) > 0 {
		logf("token-shaped strings in committed files, uploaded as the repository's own content: %s", describeFindings(w.Committed))
	}
}

// quoteAll quotes each of names with quoteShort.
func quoteAll(names []string) []string {
	q := make([]string, len(names))
	for i, s := range names {
		q[i] = quoteShort(s)
	}
	return q
}
