package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// needSSH: `sandbox upload` and `download` are tar streams over the `ssh`
// client the CLI spawns from PATH (crates/openshell-cli/src/ssh.rs
// Command::new("ssh") v0.0.83:148, v0.0.111:153); without it the spawn
// fails.
func needSSH() int {
	if _, err := exec.LookPath("ssh"); err != nil {
		return fail(1, "failed to spawn ssh: No such file or directory (os error 2); install an OpenSSH client")
	}
	return 0
}

// landlock checks a transfer against the sandbox's filesystem policy, as
// the sandbox user's tar would meet it: writes need a read_write path,
// reads a read_only or read_write one; anything else is denied.
func (f *fake) landlock(s *sandbox, p string, write bool) int {
	pol := defaultPolicy
	if len(s.Policy) > 0 {
		if parsed, err := openshell.Unmarshal(s.Policy); err == nil {
			pol = parsed
		}
	}
	if !strings.HasPrefix(p, "/") {
		p = "/sandbox/" + p
	}
	p = filepath.Clean(p)
	fs := pol.FilesystemPolicy
	if fs == nil {
		fs = &openshell.FilesystemPolicy{}
	}
	rw := fs.ReadWrite
	if fs.IncludeWorkdir {
		// the workdir (/sandbox) is granted read_write too
		// (crates/openshell-supervisor-process/src/sandbox/linux/
		// landlock.rs:135-143 @ v0.0.111)
		rw = append(append([]string(nil), rw...), "/sandbox")
	}
	if under(p, rw) {
		return 0
	}
	if !write && under(p, fs.ReadOnly) {
		return 0
	}
	if write {
		return fail(1, "ssh exited with status 2: mkdir: cannot create directory '%s': Permission denied (Landlock, openshell-fake)", p)
	}
	return fail(1, "ssh exited with status 2: tar: %s: Cannot open: Permission denied (Landlock, openshell-fake)", p)
}

func under(p string, roots []string) bool {
	for _, r := range roots {
		r = filepath.Clean(r)
		if p == r || r == "/" || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// sshStub is the fake as `ssh`: present on PATH so the upload check finds
// a client; the fake never runs it.
func sshStub() int {
	_ = os.Stderr
	return fail(255, "openshell-fake ssh stub: not a real client")
}
