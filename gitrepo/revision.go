package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ErrRevision reports a revision git does not resolve to a commit.
var ErrRevision = errors.New("unknown revision")

// CheckRevision refuses what git could read as an option or that no
// revision holds.
func CheckRevision(rev string) error {
	if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, "\x00\n\r") {
		return fmt.Errorf("invalid revision %q", rev)
	}
	return nil
}

// ResolveCommit returns the full commit id a revision names in the
// repository at dir.
func ResolveCommit(ctx context.Context, dir, rev string) (string, error) {
	if err := CheckRevision(rev); err != nil {
		return "", err
	}
	out, err := output(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
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
	out, err := limited(ctx, dir, 64<<10, nil, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
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

// RepoPrefix returns the path of dir relative to the root of the git
// repository holding it, and that root.
func RepoPrefix(ctx context.Context, dir string) (root, prefix string, err error) {
	out, err := output(ctx, dir, "rev-parse", "--show-toplevel", "--show-prefix")
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
