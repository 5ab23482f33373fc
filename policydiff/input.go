package policydiff

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
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
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 400 {
			msg = msg[:400] + "..."
		}
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, lit(msg))
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
	if err != nil {
		return "", fmt.Errorf("revision %q: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// maxTree bounds the bytes read from one revision's tree.
const maxTree = 1 << 30

// GitTree reads the project directory dir (relative to the repository
// root, "" or "." for the root) at a commit into memory, with `git archive`
// from the repository at repoDir: the project is read, never checked out
// or executed. Symbolic links are kept as links (the compiler refuses
// them where it refuses them on disk); submodules are left out, as git
// archive does.
func GitTree(ctx context.Context, repoDir, commit, dir string) (fs.FS, error) {
	treeish := commit
	if d := strings.Trim(path.Clean("/"+dir), "/"); d != "" {
		treeish += ":" + d
	}
	out, err := git(ctx, repoDir, "archive", "--format=tar", treeish)
	if err != nil {
		return nil, err
	}
	if len(out) > maxTree {
		return nil, fmt.Errorf("git archive %s: the tree exceeds %d bytes", treeish, maxTree)
	}
	m := fstest.MapFS{}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading git archive of %s: %w", treeish, err)
		}
		name := strings.TrimSuffix(h.Name, "/")
		if name == "" || name == "." || h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if !fs.ValidPath(name) {
			return nil, fmt.Errorf("git archive of %s: unsafe path %q", treeish, lit(name))
		}
		switch h.Typeflag {
		case tar.TypeDir:
			m[name] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("reading %s from git archive: %w", lit(name), err)
			}
			m[name] = &fstest.MapFile{Data: data, Mode: fs.FileMode(h.Mode) & 0o777}
		case tar.TypeSymlink:
			m[name] = &fstest.MapFile{Data: []byte(h.Linkname), Mode: fs.ModeSymlink | 0o777}
		}
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
