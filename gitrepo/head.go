package gitrepo

import (
	"context"
	"os/exec"
	"strings"
)

// Head returns the full commit hash of HEAD in dir, or "" outside a git
// work tree.
func Head(ctx context.Context, dir string) string {
	out, err := plain(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return ""
	}
	return out
}

// HeadTime returns the commit time of HEAD in dir as `git log --format=%ct`
// prints it (Unix seconds), or an error outside a git work tree.
func HeadTime(ctx context.Context, dir string) (string, error) {
	return plain(ctx, dir, "log", "-1", "--format=%ct")
}

// Describe returns `git describe --tags --always --dirty` of dir (v1.2.0,
// v1.2.0-3-gabcdef0, abcdef0-dirty), or "" outside a git work tree.
func Describe(ctx context.Context, dir string) string {
	out, err := plain(ctx, dir, "describe", "--tags", "--always", "--dirty")
	if err != nil {
		return ""
	}
	return out
}

// plain is git -C dir with the user's whole configuration (a build
// stamps the work tree as the user's git sees it), its output trimmed.
func plain(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}
