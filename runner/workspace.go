package runner

import (
	"fmt"
	"path/filepath"

	"github.com/fullsend-ai/agent-sandbox/runner/stage"
)

// ErrWorkspaceCredential reports that the workspace would carry a
// credential into the sandbox; it matches ErrPolicy (exit 78).
var ErrWorkspaceCredential = fmt.Errorf("%w: credentials in the workspace", ErrPolicy)

// stageWorkspace stages the request's workspace (package stage) and
// refuses to go on when the staged copy holds a credential.
func (x *run) stageWorkspace() error {
	abs, err := filepath.Abs(x.req.Workspace)
	if err != nil {
		return fmt.Errorf("%w: workspace: %w", ErrSandbox, err)
	}
	switch filepath.Base(abs) {
	case ".claude", ".config", ".fullsend", "/":
		return fmt.Errorf("%w: workspace %s would land on the runner's own /sandbox/%s", ErrPolicy, abs, filepath.Base(abs))
	}
	names := stage.JobCredentialEnv()
	for _, p := range x.r.opts.Providers {
		names = append(names, p.CredentialEnv...)
	}
	w, err := stage.Copy(abs, filepath.Join(x.tmp, "workspace"), stage.NewScanner(x.r.opts.Env.Getenv, names))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSandbox, err)
	}
	x.staged = w
	w.Report(x.logf)
	if why := w.Refusal(); why != "" {
		return fmt.Errorf("%w: %s", ErrWorkspaceCredential, why)
	}
	return nil
}
