//go:build unix

package lint

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU adds a cpu-ms/op metric to b: the process's user and system
// time over the loop, which stays meaningful on a loaded machine where
// ns/op does not. Call it when the loop has finished, with start from
// processCPU before the loop.
func reportCPU(b *testing.B, start time.Duration) {
	b.Helper()
	b.ReportMetric(float64(processCPU()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// processCPU returns the user and system time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
