package main

import (
	"fmt"
	"io"
	"io/fs"
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

// transferArgs parses the command line of `sandbox upload|download NAME
// PATH [DEST]` (flags in spec; usage is the error without PATH) and loads
// the sandbox; a transfer runs over ssh, which must be on PATH.
func (f *fake) transferArgs(args []string, spec map[string]bool, usage string) (flags, *sandbox, int) {
	fl, code := parseFlags(args, spec, 3)
	if code != 0 {
		return fl, nil, code
	}
	if len(fl.pos) < 2 {
		return fl, nil, fail(2, "%s", usage)
	}
	s, code := f.load(fl.pos[0])
	if code != 0 {
		return fl, nil, code
	}
	if code := needSSH(); code != 0 {
		return fl, nil, code
	}
	return fl, s, 0
}

func (f *fake) upload(args []string) int {
	fl, s, code := f.transferArgs(args, map[string]bool{"--no-git-ignore": false}, "usage: openshell sandbox upload <NAME> <LOCAL_PATH> [DEST]")
	if code != 0 {
		return code
	}
	local, dest := fl.pos[1], "/sandbox"
	if len(fl.pos) == 3 {
		dest = fl.pos[2]
	}
	st, err := os.Lstat(local)
	if err != nil {
		return fail(1, "local path does not exist: %s", local)
	}
	target, err := f.mapPath(fl.pos[0], dest)
	if err != nil {
		return fail(1, "%v", err)
	}
	// A file to a destination without a trailing slash names the file;
	// anything else lands as DEST/basename (OpenShell's sandbox_sync_up).
	if st.IsDir() || strings.HasSuffix(dest, "/") {
		target = filepath.Join(target, filepath.Base(local))
	}
	// `mkdir -p DEST && tar xf - -C DEST` runs over ssh as the sandbox
	// user, under the policy's Landlock rules: only read_write paths take
	// writes (ssh.rs v0.0.83:770, v0.0.111:785).
	written := dest
	if st.IsDir() || strings.HasSuffix(dest, "/") {
		written = strings.TrimSuffix(dest, "/") + "/" + filepath.Base(local)
	}
	if code := f.landlock(s, written, true); code != 0 {
		return code
	}
	if err := copyTree(local, target); err != nil {
		return fail(1, "upload failed: %v", err)
	}
	fmt.Fprintf(os.Stderr, "Uploading %s -> sandbox:%s\n", local, dest)
	return 0
}

func (f *fake) download(args []string) int {
	fl, s, code := f.transferArgs(args, nil, "usage: openshell sandbox download <NAME> <SANDBOX_PATH> [DEST]")
	if code != 0 {
		return code
	}
	// `tar cf - -C PATH .` over ssh, as the sandbox user: the path must be
	// readable under the policy (ssh.rs v0.0.83:1317, v0.0.111:1380).
	if code := f.downloadAllowed(s.Name, fl.pos[1]); code != 0 {
		return code
	}
	if code := f.landlock(s, fl.pos[1], false); code != 0 {
		return code
	}
	src, err := f.mapPath(fl.pos[0], fl.pos[1])
	if err != nil {
		return fail(1, "%v", err)
	}
	dest := "."
	if len(fl.pos) == 3 {
		dest = fl.pos[2]
	}
	st, err := os.Lstat(src)
	if err != nil {
		return fail(1, "sandbox path does not exist: %s", fl.pos[1])
	}
	if !st.IsDir() {
		dest = fileDest(src, dest)
	}
	// A directory's contents are extracted into DEST (tar -C dir .).
	if err := copyTree(src, dest); err != nil {
		return fail(1, "download failed: %v", err)
	}
	// download-partial[=PATH]: the tar stream breaks after the files landed.
	if p, ok := f.fails["download-partial"]; ok && (p == "" || p == fl.pos[1]) {
		return fail(1, "download failed: connection reset by peer (injected)")
	}
	return 0
}

// fileDest is where a downloaded file lands: inside dest when dest is an
// existing directory, else at dest.
func fileDest(src, dest string) string {
	if d, err := os.Stat(dest); err == nil && d.IsDir() {
		return filepath.Join(dest, filepath.Base(src))
	}
	return dest
}

// copyTree copies a file or directory, keeping symlinks as symlinks.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			os.MkdirAll(filepath.Dir(out), 0o755)
			return os.Symlink(t, out)
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		}
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		info, _ := in.Stat()
		o, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(o, in); err != nil {
			o.Close()
			return err
		}
		return o.Close()
	})
}
