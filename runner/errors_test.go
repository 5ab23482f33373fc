package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// TestExitCodeTwoSentinels covers errors that wrap more than one sentinel
// (`%w: %w` keeps the cause reachable): the most specific one decides.
func TestExitCodeTwoSentinels(t *testing.T) {
	deleteFailed := fmt.Errorf("%w: %w", ErrSandbox, errors.New("sandbox delete: exit 1"))
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"agent exit joined with a failed delete", errors.Join(&AgentExitError{Agent: "a", Code: 3}, deleteFailed), 3},
		{"sandbox step cut short by the timeout", fmt.Errorf("%w: download /sandbox/out: %w", ErrSandbox, ErrTimeout), ExitTimeout},
		{"preflight cut short by a signal", fmt.Errorf("%w: gateway status: %w", ErrPreflight, ErrInterrupted), ExitInterrupted},
		{"timeout joined with a failed delete", errors.Join(ErrTimeout, deleteFailed), ExitTimeout},
		{"policy digest mismatch", fmt.Errorf("%w: %w", ErrPolicy, bundle.ErrDigestMismatch), ExitPolicy},
		{"placeholder joined with a failed delete", errors.Join(fmt.Errorf("%w: agent a: OWNER", ErrPlaceholder), deleteFailed), ExitPolicy},
		{"sandbox failure caused by a policy failure", fmt.Errorf("%w: %w", ErrSandbox, fmt.Errorf("%w: x", ErrPolicy)), ExitPolicy},
		{"sandbox failure caused by a preflight failure", fmt.Errorf("%w: %w", ErrSandbox, fmt.Errorf("%w: x", ErrPreflight)), ExitPreflight},
		{"preflight with its exec cause", fmt.Errorf("%w: %w", ErrPreflight, exec.ErrNotFound), ExitPreflight},
		{"sandbox with a raw context deadline", fmt.Errorf("%w: %w", ErrSandbox, context.DeadlineExceeded), ExitSandbox},
		{"sandbox with an fs cause", fmt.Errorf("%w: staging: %w", ErrSandbox, fs.ErrPermission), ExitSandbox},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.err); got != tt.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

// TestProjectErrorsKeepTheirCause checks that the runner's policy errors
// wrap both ErrPolicy (the exit code) and the bundle's sentinel (the cause).
func TestProjectErrorsKeepTheirCause(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(fstest.MapFS)
		digest  string
		agent   string
		want    error
		wantMsg string
	}{
		{name: "digest mismatch", digest: strings.Repeat("ab", 32), want: bundle.ErrDigestMismatch,
			wantMsg: "the files in this image are not the ones that were verified"},
		{name: "digest malformed", digest: "sha256:nope", want: bundle.ErrInvalidDigest, wantMsg: "is not a sha256 hex digest"},
		{name: "manifest missing", edit: func(f fstest.MapFS) { delete(f, "policies/manifest.json") },
			want: fs.ErrNotExist, wantMsg: "reading policy manifest"},
		{name: "policy tampered", edit: func(f fstest.MapFS) { f["policies/triage.yaml"].Data = append(f["policies/triage.yaml"].Data, '\n') },
			agent: "triage", want: bundle.ErrDigestMismatch, wantMsg: "policy triage.yaml has sha256"},
		{name: "skill tampered", edit: func(f fstest.MapFS) { f["skills/issue-labels/SKILL.md"].Data = []byte("changed") },
			agent: "triage", want: bundle.ErrDigestMismatch, wantMsg: "source skills/issue-labels/SKILL.md has sha256"},
		{name: "unknown agent", agent: "nobody", want: bundle.ErrUnknownAgent, wantMsg: `agent "nobody" is not in the policy manifest`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			project := testProject(t, "v0.0.111")
			if tt.edit != nil {
				tt.edit(project)
			}
			p, err := LoadProject(project, tt.digest)
			if err == nil && tt.agent != "" {
				_, err = p.Agent(tt.agent)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrPolicy) || !errors.Is(err, tt.want) || ExitCode(err) != ExitPolicy {
				t.Errorf("error %q (exit %d) does not wrap both %v and %v", err, ExitCode(err), ErrPolicy, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not say %q", err, tt.wantMsg)
			}
		})
	}
}

// TestAgentInstallsOnlyVerifiedFiles checks what Agent hands to the
// sandbox: the verified agent and skill bytes under their runtime paths.
func TestAgentInstallsOnlyVerifiedFiles(t *testing.T) {
	p, err := LoadProject(testProject(t, "v0.0.111"), "")
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Agent("triage")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Files) != 2 || string(a.Files["agents/triage.md"]) != agentDoc || string(a.Files["skills/issue-labels/SKILL.md"]) != skillDoc {
		t.Errorf("files %v", a.Files)
	}
	// The manifest is pinned to the one LoadProject read.
	p.ManifestSHA256 = strings.Repeat("0", 64)
	if _, err := p.Agent("triage"); !errors.Is(err, bundle.ErrDigestMismatch) {
		t.Errorf("a different manifest was accepted: %v", err)
	}
}
