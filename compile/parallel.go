package compile

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// workerCount is the number of goroutines forEach uses for n items when
// asked for want: want if positive, else GOMAXPROCS, never more than n.
func workerCount(want, n int) int {
	if want <= 0 {
		want = runtime.GOMAXPROCS(0)
	}
	return max(min(want, n), 1)
}

// forEach calls fn(i) for every i in [0, n) on up to workers goroutines
// (workerCount) and returns when all calls have returned. Each fn(i) must
// write only its own result slot (index i); callers then read the slots in
// index order, which keeps output independent of scheduling.
func forEach(n, workers int, fn func(i int)) {
	workers = workerCount(workers, n)
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
