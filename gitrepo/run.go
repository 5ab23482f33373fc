package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fullsend-ai/agent-sandbox/ciout"
)

// output is git in dir under a two-minute limit, its error wrapped with
// the start of its stderr.
func output(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd, stderr := command(ctx, dir, args)
	out, err := cmd.Output()
	if err != nil {
		return nil, gitError(args, err, stderr)
	}
	return out, nil
}

// command is git in dir with no terminal prompt, no system configuration
// and every path literal (a name such as ":(top)x" is no pathspec magic),
// its stderr captured.
func command(ctx context.Context, dir string, args []string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_LITERAL_PATHSPECS=1")
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

// limited is git with its output capped at limit bytes: a larger output is
// an error, read no further than the cap.
func limited(ctx context.Context, dir string, limit int64, stdin io.Reader, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd, stderr := command(ctx, dir, args)
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

// lit renders an untrusted value on one terminal line: control, format and
// line-separator characters are escaped as Go escapes them, so a value can
// neither start a new line (a CI workflow command) nor hide text.
func lit(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return ciout.Hidden(r) || r == '\t' || r == utf8.RuneError }) < 0 {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}
