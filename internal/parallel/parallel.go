// Package parallel runs independent, indexed work on a bounded number of
// goroutines so that the result does not depend on scheduling: each call
// writes only its own slot and callers read the slots in index order. The
// loader (agentdef), the compiler and its checks share it.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers is the number of goroutines ForEach uses for n items when
// asked for want: want if positive, else GOMAXPROCS, never more than n.
func Workers(want, n int) int {
	if want <= 0 {
		want = runtime.GOMAXPROCS(0)
	}
	return max(min(want, n), 1)
}

// ForEach calls fn(i) for every i in [0, n) on up to workers goroutines
// (Workers) and returns when all calls have returned. Each fn(i) must
// write only its own result slot (index i); callers then read the slots in
// index order, which keeps output independent of scheduling.
func ForEach(n, workers int, fn func(i int)) {
	workers = Workers(workers, n)
	if workers == 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}
