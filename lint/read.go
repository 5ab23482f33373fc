package lint

import (
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// ReadPolicies reads and strictly decodes policy files, spread over
// GOMAXPROCS goroutines, into inputs in the order of names (File is the
// name, Raw the bytes). On failure it returns the error of the first
// failing file in that order, as reading them one by one would.
func ReadPolicies(names []string) ([]Input, error) {
	inputs := make([]Input, len(names))
	errs := make([]error, len(names))
	forEach(len(names), func(i int) {
		raw, err := os.ReadFile(names[i])
		if err != nil {
			errs[i] = err // names the file already
			return
		}
		p, err := openshell.Unmarshal(raw)
		if err != nil {
			errs[i] = fmt.Errorf("%s: %w", names[i], openshell.DecodeError(err))
			return
		}
		inputs[i] = Input{File: names[i], Policy: p, Raw: raw}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return inputs, nil
}

// forEach calls fn(0) ... fn(n-1) on up to GOMAXPROCS goroutines and
// returns when all have returned.
func forEach(n int, fn func(int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
	)
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}
