package runner

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/runner/stage"
)

// outputs are the paths to download: the agent's declared outputs from the
// manifest, then the request's, without duplicates.
func (x *run) outputs() []string {
	var out []string
	seen := map[string]bool{}
	for _, o := range append(append([]string(nil), x.agent.Entry.Outputs...), x.req.Outputs...) {
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}

// download fetches the declared outputs. Outputs are untrusted data: each
// lands in a private staging directory, is sanitized there (stage.Sanitize) and
// only then renamed into OutputDir/<basename>; a failed download leaves
// nothing of that output behind.
func (x *run) download(ctx context.Context) error {
	outputs := x.outputs()
	if len(outputs) == 0 {
		return nil
	}
	outDir := cmp.Or(x.req.OutputDir, "fullsend-out")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("%w: %w", ErrSandbox, err)
	}
	// Every output is checked before the first is downloaded: a refused
	// one leaves no artifact behind.
	fetches, err := x.planFetches(outputs, outDir)
	if err != nil {
		return err
	}
	for _, f := range fetches {
		if err := x.fetch(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// outputFetch is one output to download: its sandbox path and where it
// lands.
type outputFetch struct{ remote, dest string }

// planFetches checks every output and returns where each lands in outDir:
// no two outputs may land in the same place.
func (x *run) planFetches(outputs []string, outDir string) ([]outputFetch, error) {
	var fetches []outputFetch
	dests := map[string]string{}
	for _, o := range outputs {
		remote, err := x.outputPath(o)
		if err != nil {
			return nil, err
		}
		dest := filepath.Join(outDir, path.Base(remote))
		if prev, ok := dests[dest]; ok {
			return nil, fmt.Errorf("%w: outputs %s and %s would both land in %s", ErrPolicy, prev, remote, dest)
		}
		dests[dest] = remote
		fetches = append(fetches, outputFetch{remote, dest})
	}
	return fetches, nil
}

// outputPath returns the clean sandbox path of output o (relative to the
// workdir unless absolute). It refuses "/", "..", and any path that covers
// the runner's own files or lies among them.
func (x *run) outputPath(o string) (string, error) {
	remote := o
	if !path.IsAbs(remote) {
		remote = path.Join(x.workdir(), remote)
	}
	remote = path.Clean(remote)
	if remote == "/" || strings.Contains(o, "..") {
		return "", fmt.Errorf("%w: output %q: give a path under the sandbox, without ..", ErrPolicy, o)
	}
	// The runner's own files (env/run.env holds the job's secret
	// values) never become an artifact, whichever output covers them.
	if rd := x.runnerDir(); remote == rd || strings.HasPrefix(rd, remote+"/") || strings.HasPrefix(remote, rd+"/") {
		return "", fmt.Errorf("%w: output %q covers %s, the runner's own files (they hold the job's secret values): give a directory the agent writes its results to", ErrPolicy, o, rd)
	}
	return remote, nil
}

// fetch downloads one output, reports what was removed from it and
// records it if it is there.
func (x *run) fetch(ctx context.Context, f outputFetch) error {
	remote, dest := f.remote, f.dest
	if err := x.refuseReplacing(dest); err != nil {
		return err
	}
	removed, err := x.fetchOutput(ctx, remote, dest)
	if err != nil && x.missing(ctx, remote) {
		x.logf("warning: %s", x.missingWarning(remote))
		x.res.Missing = append(x.res.Missing, remote)
		return nil
	}
	for _, r := range removed {
		x.logf("removed %q from downloaded %s: %s", r.Path, remote, r.Why)
		x.res.Removed = append(x.res.Removed, filepath.Join(dest, r.Path))
	}
	if err != nil {
		return err
	}
	if _, err := os.Lstat(dest); err == nil {
		x.res.Outputs = append(x.res.Outputs, dest)
	}
	return nil
}

// fetchOutput downloads remote into a staging directory (0700) created in
// dest's directory, so that the final rename stays on one file system,
// sanitizes it and renames it to dest, replacing what was there. On any
// error it removes the staging directory: no partial or unsanitized tree is
// ever at dest, and none is left next to it.
func (x *run) fetchOutput(ctx context.Context, remote, dest string) (removed []stage.Removal, err error) {
	tmp, err := os.MkdirTemp(filepath.Dir(dest), ".fullsend-download-")
	if err != nil {
		return nil, fmt.Errorf("%w: download %s: %w", ErrSandbox, remote, err)
	}
	defer func() {
		if rerr := stage.RemoveTree(tmp); rerr != nil && err == nil {
			err = fmt.Errorf("%w: download %s: removing the staging directory: %w", ErrSandbox, remote, rerr)
		}
	}()
	staged := filepath.Join(tmp, filepath.Base(dest))
	removed, present, err := x.stageOutput(ctx, remote, tmp, staged)
	if err != nil || !present {
		return removed, err
	}
	more, err := stage.SanitizeReport(staged)
	removed = append(removed, more...)
	if err != nil {
		return removed, fmt.Errorf("%w: %w", ErrSandbox, err)
	}
	if _, err := os.Lstat(staged); os.IsNotExist(err) {
		return removed, nil // the whole output was removed
	}
	return removed, replaceOutput(remote, staged, dest, tmp)
}

// stageOutput downloads remote to staged, in the staging directory tmp;
// present is false when the output itself was left out.
func (x *run) stageOutput(ctx context.Context, remote, tmp, staged string) (removed []stage.Removal, present bool, err error) {
	if inWorkspace(remote) {
		if err := x.d.Download(ctx, x.res.Sandbox, remote, staged); err != nil {
			return nil, false, fmt.Errorf("%w: download %s: %w", ErrSandbox, remote, errOr(ctxErr(ctx), err))
		}
		return nil, true, nil
	}
	// Outside /sandbox, which download refuses (outputtar.go): the
	// runner reads the tar stream itself; what it leaves out is
	// reported like what sanitize removes.
	x.logf("reading output %s through sandbox exec tar (sandbox download reads only /sandbox)", remote)
	if removed, err = x.readOutput(ctx, remote, tmp); err != nil {
		return removed, false, err
	}
	if _, err := os.Lstat(staged); os.IsNotExist(err) {
		return removed, false, nil // the output itself was left out (a link)
	}
	return removed, true, nil
}

// replaceOutput renames the sanitized staged output to dest. A previous
// output of the same name is replaced, not merged into: it moves into the
// staging directory tmp and goes with it.
func replaceOutput(remote, staged, dest, tmp string) error {
	if _, err := os.Lstat(dest); err == nil {
		if err := os.Rename(dest, filepath.Join(tmp, "previous")); err != nil {
			return fmt.Errorf("%w: download %s: replacing %s: %w", ErrSandbox, remote, dest, err)
		}
	}
	if err := os.Rename(staged, dest); err != nil {
		return fmt.Errorf("%w: download %s: %w", ErrSandbox, remote, err)
	}
	return nil
}

// refuseReplacing stops an output that would replace the workspace or a
// directory holding the current directory: outputs replace what was at
// their destination, and that is never the job's own checkout.
func (x *run) refuseReplacing(dest string) error {
	abs, err := filepath.Abs(dest)
	if err != nil {
		return fmt.Errorf("%w: output %s: %w", ErrSandbox, dest, err)
	}
	for _, k := range x.keptDirs() {
		if k == abs || strings.HasPrefix(k, abs+string(filepath.Separator)) {
			return fmt.Errorf("%w: output %s would replace %s: choose another artifacts directory", ErrPolicy, dest, k)
		}
	}
	return nil
}

// keptDirs are the directories no output may replace: the current
// directory and the workspace.
func (x *run) keptDirs() []string {
	var keep []string
	if wd, err := os.Getwd(); err == nil {
		keep = append(keep, wd)
	}
	if x.req.Workspace != "" {
		if ws, err := filepath.Abs(x.req.Workspace); err == nil {
			keep = append(keep, ws)
		}
	}
	return keep
}

// missing reports, after a failed download of remote, whether the agent
// never wrote it: `test -e` in the sandbox says it is not there. OpenShell's
// download fails on a missing path ("sandbox source path '...' does not
// exist", probe_sandbox_source_kind, ssh.rs:1163-1182 @ v0.0.111,
// ssh.rs:1100-1119 @ v0.0.83), and tar says "Cannot stat"; neither message
// is matched, the sandbox is asked.
func (x *run) missing(ctx context.Context, remote string) bool {
	if ctx.Err() != nil {
		return false
	}
	code, _, err := x.d.Exec(ctx, execSpec{name: x.res.Sandbox, command: []string{"test", "-e", remote}})
	return err == nil && code == 1
}

// missingWarning says which declared output the agent did not write, and
// where it is declared: the manifest's outputs come from the agent's
// sandbox.outputs; a --download path from the command line.
func (x *run) missingWarning(remote string) string {
	src := x.agent.Entry.Source
	for _, o := range x.agent.Entry.Outputs {
		if p, err := x.outputPath(o); err == nil && p == remote {
			if n := outputsLine(x.agentSource()); n > 0 {
				src = fmt.Sprintf("%s:%d", src, n)
			}
			return fmt.Sprintf("agent %s wrote no %s (sandbox.outputs, %s): nothing to download; the run's exit status is the agent's", x.agent.Name, remote, src)
		}
	}
	return fmt.Sprintf("agent %s wrote no %s (--download): nothing to download; the run's exit status is the agent's", x.agent.Name, remote)
}

// agentSource is the verified bytes of the agent's definition, nil when
// they are not among the files installed.
func (x *run) agentSource() []byte {
	for k, data := range x.agent.Files {
		if path.Base(k) == path.Base(x.agent.Entry.Source) && strings.HasPrefix(k, "agent") {
			return data
		}
	}
	return nil
}

// outputsLine is the line of the "outputs:" key in the frontmatter of an
// agent definition (src), 0 when there is none.
func outputsLine(src []byte) int {
	lines := strings.Split(string(src), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return 0
	}
	for i, l := range lines[1:] {
		t := strings.TrimSpace(l)
		if t == "---" {
			return 0
		}
		if strings.HasPrefix(t, "outputs:") {
			return i + 2
		}
	}
	return 0
}
