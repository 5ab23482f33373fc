package runner

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
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
// (extractOutputTar), as the evidence step reads /var/log (readLogTar). The
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

// readOutput reads remote, outside /sandbox, into stage/<basename> through
// `sandbox exec -- tar cf - -C PARENT -- BASENAME`. Any failure, including
// a non-zero exit of tar after some files came through, is an error: the
// caller removes the staging directory, so nothing partial is kept.
func (x *run) readOutput(ctx context.Context, remote, stage string) ([]removal, error) {
	parent, base := path.Split(remote)
	parent = path.Clean(parent)
	pr, pw := io.Pipe()
	type parsed struct {
		removed []removal
		err     error
	}
	done := make(chan parsed, 1)
	go func() {
		removed, err := extractOutputTar(pr, stage, base, outputMaxBytes, outputMaxEntries)
		// Drain what is left so the remote tar is not blocked, then close.
		_, _ = io.Copy(io.Discard, pr)
		pr.CloseWithError(err)
		done <- parsed{removed, err}
	}()
	stderr := &capWriter{max: outputStderrMax}
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
		msg := fmt.Sprintf("tar exit %d: %s", code, lastLine(x.mask.String(stderr.buf.String())))
		if p.err != nil {
			msg += "; " + p.err.Error()
		}
		return p.removed, fmt.Errorf("%w: read %s through sandbox exec: %s", ErrSandbox, remote, msg)
	case p.err != nil:
		return p.removed, fmt.Errorf("%w: read %s through sandbox exec: %w", ErrSandbox, remote, p.err)
	}
	return p.removed, nil
}

// extractOutputTar writes a tar stream of one output, whose entries must
// all be base or lie under it (what `tar cf - -C PARENT -- BASE` writes),
// into dir/base. The stream is hostile: an entry name that is not a clean
// relative path under base, a stream over maxBytes of file data or over
// maxEntries entries, or a malformed stream is an error. Only directories
// and regular files are written, through an os.Root on dir (no name can
// reach outside it, and nothing is written through a link), files mode
// 0600 plus the archive's read and execute bits (never write for group or
// others, never set-id);
// symbolic links, hard links and special files are not written and are
// returned as removals, relative to dir/base ("." for base itself), as is
// a second entry for a file already written. It returns what it left out.
func extractOutputTar(r io.Reader, dir, base string, maxBytes int64, maxEntries int) ([]removal, error) {
	if base == "" || base == "." || base == ".." || strings.Contains(base, "/") {
		return nil, fmt.Errorf("output name %q is not a file name", base)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var removed []removal
	var total int64
	entries := 0
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return removed, fmt.Errorf("reading the output archive: %w", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue // PAX metadata for what follows, not a file
		}
		entries++
		if entries > maxEntries {
			return removed, fmt.Errorf("the output has more than %d entries", maxEntries)
		}
		name := strings.TrimSuffix(h.Name, "/")
		if !fs.ValidPath(name) || (name != base && !strings.HasPrefix(name, base+"/")) {
			return removed, fmt.Errorf("the output archive names %q, which is not under %q", h.Name, base)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(name, base), "/")
		if rel == "" {
			rel = "."
		}
		rel = filepath.FromSlash(rel)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return removed, fmt.Errorf("output entry %q: %w", h.Name, err)
			}
		case tar.TypeReg:
			if h.Size < 0 || h.Size > maxBytes-total {
				return removed, fmt.Errorf("the output is larger than %d bytes", maxBytes)
			}
			total += h.Size
			if d := path.Dir(name); d != "." {
				if err := root.MkdirAll(d, 0o755); err != nil {
					return removed, fmt.Errorf("output entry %q: %w", h.Name, err)
				}
			}
			mode := fs.FileMode(h.Mode).Perm()&0o555 | 0o600
			f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if errors.Is(err, fs.ErrExist) {
				removed = append(removed, removal{path: rel, why: "listed twice in the output archive: the first copy is kept"})
				continue
			}
			if err != nil {
				return removed, fmt.Errorf("output entry %q: %w", h.Name, err)
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return removed, fmt.Errorf("output entry %q: %w", h.Name, err)
			}
		case tar.TypeSymlink:
			removed = append(removed, removal{path: rel, why: whySymlink})
		case tar.TypeLink:
			removed = append(removed, removal{path: rel, why: whyLinked})
		default:
			removed = append(removed, removal{path: rel, why: whySpecial})
		}
	}
	if entries == 0 {
		return nil, errors.New("the output archive is empty")
	}
	return removed, nil
}
