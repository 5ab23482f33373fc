package compile

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

// Stage is one span of a compilation: a stage's name and when it ran,
// relative to the start of the compilation. Stages overlap: the lint rules
// compile while the project loads and compiles, and the checks run at once.
type Stage struct {
	Name       string
	Start, End time.Duration
}

// Took is how long the stage ran.
func (s Stage) Took() time.Duration { return s.End - s.Start }

// timeline records stages from any goroutine.
type timeline struct {
	start  time.Time
	mu     sync.Mutex
	stages []Stage
}

func newTimeline() *timeline { return &timeline{start: time.Now()} }

// begin starts the stage name and returns the function that ends it. A nil
// timeline records nothing.
func (t *timeline) begin(name string) (end func()) {
	if t == nil {
		return func() {}
	}
	from := time.Since(t.start)
	return func() {
		to := time.Since(t.start)
		t.mu.Lock()
		t.stages = append(t.stages, Stage{Name: name, Start: from, End: to})
		t.mu.Unlock()
	}
}

// list returns the stages recorded so far, by start (then name).
func (t *timeline) list() []Stage {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	out := append([]Stage(nil), t.stages...)
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b Stage) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// timed wraps check so that its run is recorded as the stage name.
func timed(t *timeline, name string, check Check) Check {
	if t == nil {
		return check
	}
	return func(ctx context.Context, out *Output) (agentdef.Diagnostics, error) {
		defer t.begin(name)()
		return check(ctx, out)
	}
}
