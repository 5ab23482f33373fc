//go:build !unix

package runner

import (
	"os"
	"os/exec"
)

func setProcessGroup(*exec.Cmd) {}

func newProcessGroup(*exec.Cmd) {}

func runChild(cmd *exec.Cmd) error { return cmd.Run() }

func signalNumber(*exec.ExitError) int { return 0 }

func terminate(p *os.Process) error { return p.Kill() }

// processAlive cannot tell here: every owner counts as alive, so nothing is
// reaped.
func processAlive(int) bool { return true }

func processStart(int) string { return "" }

func pidNamespace() string { return "" }
