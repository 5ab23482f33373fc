package agentdef

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// forEach calls fn(i) for every i in [0, n) on up to GOMAXPROCS goroutines
// and returns when all calls have returned. Each fn(i) writes only its own
// result slot, so the caller's output does not depend on scheduling. It is
// the loader's copy of compile's forEach (compile adds a worker count).
func forEach(n int, fn func(i int)) {
	workers := max(min(runtime.GOMAXPROCS(0), n), 1)
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
