//go:build unix

package childproc

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// SetProcessGroup starts the child in its own process group, with the
// parent-death signal where the system has one (setDeathSignal), and makes
// cancellation send SIGTERM to the whole group (the openshell CLI and
// anything it started). After cmd.WaitDelay the child is SIGKILLed, and
// Run then SIGKILLs what is left of its group. Start cmd with Run
// only: the parent-death signal needs the thread it holds.
func SetProcessGroup(cmd *exec.Cmd) {
	NewProcessGroup(cmd)
	setDeathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}

// SignalNumber is the signal that ended the process of ee, or 0.
func SignalNumber(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 0
}

// Terminate asks a process group to stop.
func Terminate(p *os.Process) error {
	return syscall.Kill(-p.Pid, syscall.SIGTERM)
}

// NewProcessGroup starts the child in its own process group, so that a
// terminal's SIGINT reaches the runner first and the runner decides.
func NewProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// Alive reports whether a process with this pid exists (signal 0;
// EPERM means it exists under another user).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// StartTime returns a process's start time in clock ticks since boot
// (field 22 of /proc/PID/stat), which tells a reused pid apart; "" where
// /proc does not say.
func StartTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return ""
	}
	return fields[19] // field 22: fields[0] is field 3
}

// PIDNamespace names this process's pid namespace ("pid:[4026531836]" on
// Linux), "" where unknown: pids mean something only within one.
func PIDNamespace() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return ns
}
