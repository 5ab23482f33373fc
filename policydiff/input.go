package policydiff

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"testing/fstest"
	"time"
)

// Input kinds.
const (
	InputGit    = "git"
	InputDir    = "dir"
	InputBundle = "bundle"
)

// Input is one side as the user named it.
type Input struct {
	Kind  string
	Value string // the revision, directory or bundle directory
	Arg   string // as written
}

// ErrInput reports an argument that names no revision, directory or bundle.
var ErrInput = errors.New("not a git revision, a directory or a bundle")

// ParseInput reads a BASE or HEAD argument: "git:REV", "bundle:DIR", a
// revision of the repository at repoDir when git resolves it, else a
// project directory.
func ParseInput(ctx context.Context, repoDir, arg string) (Input, error) {
	switch {
	case strings.HasPrefix(arg, "git:"):
		rev := strings.TrimPrefix(arg, "git:")
		if err := checkRev(rev); err != nil {
			return Input{}, fmt.Errorf("%s: %w", arg, err)
		}
		return Input{Kind: InputGit, Value: rev, Arg: arg}, nil
	case strings.HasPrefix(arg, "bundle:"):
		return Input{Kind: InputBundle, Value: strings.TrimPrefix(arg, "bundle:"), Arg: arg}, nil
	case arg == "":
		return Input{}, fmt.Errorf("empty argument: %w", ErrInput)
	}
	if checkRev(arg) == nil {
		if _, err := ResolveCommit(ctx, repoDir, arg); err == nil {
			return Input{Kind: InputGit, Value: arg, Arg: "git:" + arg}, nil
		}
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return Input{Kind: InputDir, Value: arg, Arg: arg}, nil
	}
	return Input{}, fmt.Errorf("%q: %w (write git:REV, bundle:DIR or an existing directory)", arg, ErrInput)
}

// ErrRevision reports a revision git does not resolve to a commit.
var ErrRevision = errors.New("unknown revision")

// checkRev refuses what git could read as an option or that no revision
// holds.
func checkRev(rev string) error {
	if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, "\x00\n\r") {
		return fmt.Errorf("invalid revision %q", rev)
	}
	return nil
}

func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd, stderr := gitCommand(ctx, dir, args)
	out, err := cmd.Output()
	if err != nil {
		return nil, gitError(args, err, stderr)
	}
	return out, nil
}

// gitCommand is git in dir with no terminal prompt and no system
// configuration, its stderr captured.
func gitCommand(ctx context.Context, dir string, args []string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	return cmd, &stderr
}

// gitError wraps the error of a git run with the start of its stderr.
func gitError(args []string, err error, stderr *bytes.Buffer) error {
	msg := strings.TrimSpace(stderr.String())
	if len(msg) > 400 {
		msg = msg[:400] + "..."
	}
	return fmt.Errorf("git %s: %w: %s", args[0], err, lit(msg))
}

// gitLimited is git with its output capped at limit bytes: a larger
// output is an error, read no further than the cap.
func gitLimited(ctx context.Context, dir string, limit int64, stdin io.Reader, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd, stderr := gitCommand(ctx, dir, args)
	cmd.Stdin = stdin
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	out, rerr := io.ReadAll(io.LimitReader(stdout, limit+1))
	if int64(len(out)) > limit {
		cancel()
		_ = cmd.Wait()
		return nil, fmt.Errorf("git %s: output exceeds %d bytes", args[0], limit)
	}
	if err := cmd.Wait(); err != nil || rerr != nil {
		return nil, gitError(args, errors.Join(err, rerr), stderr)
	}
	return out, nil
}

// ResolveCommit returns the full commit id a revision names in the
// repository at dir.
func ResolveCommit(ctx context.Context, dir, rev string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	out, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		// --quiet leaves git's message empty: say what was looked for.
		return "", fmt.Errorf("%w %q (%s)", ErrRevision, rev, branchList(ctx, dir))
	case err != nil:
		return "", fmt.Errorf("revision %q: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// maxBranchesListed bounds the branches an unknown-revision error names.
const maxBranchesListed = 10

// branchList names the local branches of the repository at dir for an
// error, at most maxBranchesListed of them, or says why it cannot.
func branchList(ctx context.Context, dir string) string {
	out, err := gitLimited(ctx, dir, 64<<10, nil, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
	if err != nil {
		return "not a git repository, or its branches cannot be listed"
	}
	names := strings.Fields(string(out))
	switch {
	case len(names) == 0:
		return "the repository has no branches"
	case len(names) > maxBranchesListed:
		return fmt.Sprintf("branches: %s, and %d more", lit(strings.Join(names[:maxBranchesListed], ", ")), len(names)-maxBranchesListed)
	}
	return "branches: " + lit(strings.Join(names, ", "))
}

// maxTree bounds the bytes read from one revision's tree.
const maxTree = 1 << 30

// GitTree reads the project directory dir (relative to the repository
// root, "" or "." for the root) at a commit into memory from the
// repository at repoDir: `git ls-tree` lists the files and `git cat-file
// --batch` reads their blobs as committed. The project is never checked out
// or executed, and no attribute applies: `git archive` would honour a PR's
// .gitattributes (export-ignore hides a file from the diff, export-subst
// rewrites one). Symbolic links are kept as links (the compiler refuses them
// where it refuses them on disk); submodules are left out.
func GitTree(ctx context.Context, repoDir, commit, dir string) (fs.FS, error) {
	if err := checkRev(commit); err != nil {
		return nil, err
	}
	treeish := commit
	if d := strings.Trim(path.Clean("/"+dir), "/"); d != "" {
		treeish += ":" + d
	}
	list, err := gitLimited(ctx, repoDir, 256<<20, nil, "ls-tree", "-r", "-z", treeish)
	if err != nil {
		return nil, err
	}
	entries, err := parseTree(treeish, list)
	if err != nil {
		return nil, err
	}
	var oids strings.Builder
	for _, e := range entries {
		oids.WriteString(e.oid + "\n")
	}
	out, err := gitLimited(ctx, repoDir, maxTree, strings.NewReader(oids.String()), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	return readBlobs(entries, out)
}

// treeEntry is one file of a `git ls-tree` listing.
type treeEntry struct {
	name string
	mode fs.FileMode
	oid  string
}

// treeModes maps the git modes GitTree keeps to file modes; a submodule
// (160000) has no content here.
var treeModes = map[string]fs.FileMode{"100644": 0o644, "100755": 0o755, "120000": fs.ModeSymlink | 0o777}

// parseTree reads the NUL-separated records of `git ls-tree -r -z`: the
// files and links with safe paths, submodules left out.
func parseTree(treeish string, list []byte) ([]treeEntry, error) {
	var entries []treeEntry
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
			entries = append(entries, treeEntry{name, mode, f[2]})
		}
	}
	return entries, nil
}

// readBlobs reads the output of `git cat-file --batch`, one blob per
// entry in order, into an in-memory file system.
func readBlobs(entries []treeEntry, out []byte) (fs.FS, error) {
	m := fstest.MapFS{}
	for _, e := range entries {
		header, rest, ok := bytes.Cut(out, []byte("\n"))
		f := strings.Fields(string(header))
		if !ok || len(f) != 3 || f[1] != "blob" {
			return nil, fmt.Errorf("git cat-file: unexpected header %q for %s", lit(string(header)), lit(e.name))
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || n+1 > len(rest) {
			return nil, fmt.Errorf("git cat-file: bad size in %q for %s", lit(string(header)), lit(e.name))
		}
		m[e.name] = &fstest.MapFile{Data: rest[:n:n], Mode: e.mode}
		out = rest[n+1:]
	}
	return m, nil
}

// RepoPrefix returns the path of dir relative to the root of the git
// repository holding it, and that root.
func RepoPrefix(ctx context.Context, dir string) (root, prefix string, err error) {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		return "", "", fmt.Errorf("%s is not in a git repository: %w", dir, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	root = lines[0]
	if len(lines) > 1 {
		prefix = lines[1]
	}
	return root, strings.TrimSuffix(prefix, "/"), nil
}
