//go:build unix

package validate

import "syscall"

// processCPU returns the CPU time (user+system, ns) this process has used,
// so benchmarks can report CPU cost that does not depend on machine load.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
