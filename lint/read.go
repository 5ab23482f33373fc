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
	forEach(len(names), func(i int) { inputs[i], errs[i] = readPolicyFile(names[i]) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return inputs, nil
}

// readPolicyFile reads and strictly decodes one policy file.
func readPolicyFile(name string) (Input, error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return Input{}, err // names the file already
	}
	p, err := openshell.Unmarshal(raw)
	if err != nil {
		return Input{}, fmt.Errorf("%s: %w", name, openshell.DecodeError(err))
	}
	return Input{File: name, Policy: p, Raw: raw}, nil
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
	var wg sync.WaitGroup
	next := &counter{n: n}
	for range workers {
		wg.Go(func() {
			for i, ok := next.take(); ok; i, ok = next.take() {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// counter hands out 0 ... n-1 to concurrent callers.
type counter struct {
	mu   sync.Mutex
	next int
	n    int
}

// take returns the next number, or false once all are taken.
func (c *counter) take() (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.next
	c.next++
	return i, i < c.n
}
