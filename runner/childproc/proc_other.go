//go:build !unix

package childproc

import (
	"os"
	"os/exec"
)

func SetProcessGroup(*exec.Cmd) {}

func NewProcessGroup(*exec.Cmd) {}

func Run(cmd *exec.Cmd) error { return cmd.Run() }

func SignalNumber(*exec.ExitError) int { return 0 }

func Terminate(p *os.Process) error { return p.Kill() }

// Alive cannot tell here: every owner counts as alive, so nothing is
// reaped.
func Alive(int) bool { return true }

func StartTime(int) string { return "" }

func PIDNamespace() string { return "" }
