//go:build linux

package childproc

import (
	"errors"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// setDeathSignal makes the kernel SIGKILL the child when its parent dies,
// so that a SIGKILLed runner (a CI step's hard timeout, the OOM killer)
// leaves no openshell process behind (prctl(2) PR_SET_PDEATHSIG). The
// signal follows the death of the parent *thread*, not process (Go's
// syscall.SysProcAttr.Pdeathsig doc; golang/go#27505): Run keeps the
// thread that forks the child locked to its goroutine until the child is
// reaped.
func setDeathSignal(a *syscall.SysProcAttr) {
	a.Pdeathsig = syscall.SIGKILL
}

// Run runs cmd as cmd.Run does, with the guarantees the openshell
// calls need:
//
//   - The goroutine holds its OS thread from Start to the end of Wait.
//     Go ends a thread only when a goroutine exits while locked to it; with
//     the thread locked here, no other goroutine runs on it meanwhile, so
//     none can end it and fire the child's Pdeathsig early. The thread is
//     unlocked afterwards (this goroutine goes on).
//   - Once the child has exited, and before it is reaped (waitid with
//     WNOWAIT: the zombie keeps its pid, which is its process group's id,
//     from being reused), whatever is left in its process group is
//     SIGKILLed: a descendant the CLI left behind, or one that ignored the
//     SIGTERM of a cancellation, whose child exec SIGKILLed after
//     cmd.WaitDelay. The CLI's own children are the ssh client of a
//     transfer and its ProxyCommand (`openshell ssh-proxy`)
//     (crates/openshell-cli/src/ssh.rs:147-173, 779-791, 1222-1237@v0.0.111;
//     `forward start --background` even leaves its ssh running on purpose,
//     kill_on_drop(false), ssh.rs:360); `sandbox exec` is a gRPC stream
//     with no local child (main.rs:2843@v0.0.83, 3243@v0.0.111
//     run::sandbox_exec_grpc). A descendant that left the group (setsid,
//     setpgid) is out of reach, and so, when the runner itself is
//     SIGKILLed, are the CLI's children: their pipes to the dead CLI close
//     and they end on their own.
func Run(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	if waitExited(pid) == nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	return cmd.Wait()
}

// waitExited waits until the child pid has exited, without reaping it.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
