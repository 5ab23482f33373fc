package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestWorkers(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, tc := range []struct{ want, n, got int }{
		{want: 4, n: 10, got: 4},
		{want: 4, n: 2, got: 2},
		{want: 0, n: 1000, got: min(procs, 1000)},
		{want: -1, n: 1, got: 1},
		{want: 3, n: 0, got: 1},
	} {
		if got := Workers(tc.want, tc.n); got != tc.got {
			t.Errorf("Workers(%d, %d) = %d, want %d", tc.want, tc.n, got, tc.got)
		}
	}
}

// TestForEachCallsEveryIndexOnce: every index in [0, n) is called exactly
// once, serially and on several goroutines.
func TestForEachCallsEveryIndexOnce(t *testing.T) {
	for _, workers := range []int{1, 3, 0} {
		for _, n := range []int{0, 1, 7, 100} {
			calls := make([]atomic.Int32, n)
			ForEach(n, workers, func(i int) { calls[i].Add(1) })
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Errorf("workers %d, n %d: index %d called %d times", workers, n, i, c)
				}
			}
		}
	}
}
