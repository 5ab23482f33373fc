package policydiff

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/gitrepo"
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
		if err := gitrepo.CheckRevision(rev); err != nil {
			return Input{}, fmt.Errorf("%s: %w", arg, err)
		}
		return Input{Kind: InputGit, Value: rev, Arg: arg}, nil
	case strings.HasPrefix(arg, "bundle:"):
		return Input{Kind: InputBundle, Value: strings.TrimPrefix(arg, "bundle:"), Arg: arg}, nil
	case arg == "":
		return Input{}, fmt.Errorf("empty argument: %w", ErrInput)
	}
	if gitrepo.CheckRevision(arg) == nil {
		if _, err := gitrepo.ResolveCommit(ctx, repoDir, arg); err == nil {
			return Input{Kind: InputGit, Value: arg, Arg: "git:" + arg}, nil
		}
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return Input{Kind: InputDir, Value: arg, Arg: arg}, nil
	}
	return Input{}, fmt.Errorf("%q: %w (write git:REV, bundle:DIR or an existing directory)", arg, ErrInput)
}
