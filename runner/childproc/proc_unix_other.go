//go:build unix && !linux

package childproc

import (
	"os/exec"
	"syscall"
)

// setDeathSignal: only Linux has a parent-death signal that Go sets
// (SysProcAttr.Pdeathsig); here a SIGKILLed runner leaves its openshell
// child running.
func setDeathSignal(*syscall.SysProcAttr) {}

// Run is cmd.Run: without waitid's WNOWAIT, the group of a reaped
// child cannot be signalled without risking a reused pid.
func Run(cmd *exec.Cmd) error { return cmd.Run() }
