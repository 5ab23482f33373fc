package runner

import (
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/runner/childproc"
	"github.com/fullsend-ai/agent-sandbox/runner/stage"
)

// How an output leaves the sandbox.
//
// `openshell sandbox download` reads only the sandbox workspace: at both
// supported tags the CLI refuses a source path outside /sandbox, lexically
// and again after `realpath -e` in the sandbox
// (crates/openshell-cli/src/ssh.rs:865-912 @ v0.0.83; at v0.0.111 the root
// is the ssh session's `pwd -P`, /sandbox for the sandbox user, and
// relative paths are taken from it, ssh.rs:876-938 @ v0.0.111). A
// read-only tier keeps /sandbox read-only, so the runner stages the
// workspace under /tmp (chooseStageRoot) and the agent's outputs there are
// out of download's reach.
//
// The runner does not widen the policy for that (no writable /sandbox, no
// extra read_write path: a read-only tier stays read-only). It reads such an
// output the way download itself does, `tar cf - -C <parent> -- <basename>`
// as the sandbox user (ssh.rs:1205-1217 @ v0.0.83, :1268-1280 @ v0.0.111),
// through `sandbox exec` (argv, no shell of ours: the gateway shell-escapes
// each argument, build_remote_exec_command,
// crates/openshell-server/src/grpc/sandbox.rs:1515-1529 @ v0.0.83,
// :1906-1920 @ v0.0.111), and parses the tar stream itself
// (stage.ExtractOutput), as the evidence step reads /var/log (evidence.ReadLogs). The
// command runs under the sandbox's Landlock rules, so it reads nothing the
// agent could not have copied into its output itself; the boundary that
// matters is on the runner, where only directories and regular files are
// written, through an os.Root, within size and count limits, and the
// result is then sanitized like a downloaded output.

// Limits on an output read through sandbox exec: the agent chooses its
// size and shape.
const (
	outputMaxBytes   = 1 << 30
	outputMaxEntries = 100_000
	outputStderrMax  = 64 << 10
)

// inWorkspace reports whether `sandbox download` accepts remote (a clean
// absolute path): /sandbox or below it (is_under_sandbox_workspace,
// ssh.rs:880-882 @ v0.0.83; path_is_or_under, ssh.rs:887 @ v0.0.111).
func inWorkspace(remote string) bool {
	return remote == sandboxHome || strings.HasPrefix(remote, sandboxHome+"/")
}

// readOutput reads remote, outside /sandbox, into dir/<basename> through
// `sandbox exec -- tar cf - -C PARENT -- BASENAME`. Any failure, including
// a non-zero exit of tar after some files came through, is an error: the
// caller removes the staging directory, so nothing partial is kept.
func (x *run) readOutput(ctx context.Context, remote, dir string) ([]stage.Removal, error) {
	parent, base := path.Split(remote)
	parent = path.Clean(parent)
	pr, pw := io.Pipe()
	type parsed struct {
		removed []stage.Removal
		err     error
	}
	done := make(chan parsed, 1)
	go func() {
		removed, err := stage.ExtractOutput(pr, dir, base, outputMaxBytes, outputMaxEntries)
		// Drain what is left so the remote tar is not blocked, then close.
		_, _ = io.Copy(io.Discard, pr)
		pr.CloseWithError(err)
		done <- parsed{removed, err}
	}()
	stderr := &childproc.CapWriter{Max: outputStderrMax}
	code, _, err := x.d.Exec(ctx, execSpec{name: x.res.Sandbox,
		command: []string{"tar", "cf", "-", "-C", parent, "--", base}, stdout: pw, stderr: stderr})
	pw.Close()
	p := <-done
	switch {
	case err != nil:
		return p.removed, fmt.Errorf("%w: read %s through sandbox exec: %w", ErrSandbox, remote, errOr(ctxErr(ctx), err))
	case code != 0:
		// tar's own words first (a missing output: "Cannot stat"), then
		// what the reader made of the stream, if anything.
		msg := fmt.Sprintf("tar exit %d: %s", code, lastLine(x.mask.String(stderr.String())))
		if p.err != nil {
			msg += "; " + p.err.Error()
		}
		return p.removed, fmt.Errorf("%w: read %s through sandbox exec: %s", ErrSandbox, remote, msg)
	case p.err != nil:
		return p.removed, fmt.Errorf("%w: read %s through sandbox exec: %w", ErrSandbox, remote, p.err)
	}
	return p.removed, nil
}
