package image

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Status is a live one-line status for a terminal: the running tasks (a
// base being resolved, binaries being built, layers being pushed) with
// their detail and elapsed time, redrawn in place a few times a second and
// erased when the last task ends. A nil *Status does nothing, so callers
// pass NewStatus(nil) when the output is not a terminal.
type Status struct {
	w     io.Writer
	now   func() time.Time
	mu    sync.Mutex
	tasks map[string]*statusTask
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	drawn bool
}

type statusTask struct {
	start  time.Time
	detail string
}

// statusWidth bounds the status line, so that it does not wrap (a wrapped
// line cannot be redrawn with a carriage return).
const statusWidth = 100

// NewStatus starts a status line on w; nil w gives a nil Status.
func NewStatus(w io.Writer) *Status {
	if w == nil {
		return nil
	}
	return newStatus(w, time.Now, 250*time.Millisecond)
}

func newStatus(w io.Writer, now func() time.Time, every time.Duration) *Status {
	s := &Status{w: w, now: now, tasks: map[string]*statusTask{}, stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop(every)
	return s
}

func (s *Status) loop(every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.draw()
		}
	}
}

// Start adds a task and returns the function that ends it.
func (s *Status) Start(name string) func() {
	if s == nil {
		return func() {}
	}
	s.mu.Lock()
	s.tasks[name] = &statusTask{start: s.now()}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.tasks, name)
		s.mu.Unlock()
		s.draw()
	}
}

// Set updates a running task's detail (e.g. "40% of 12.0 MiB").
func (s *Status) Set(name, detail string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if t, ok := s.tasks[name]; ok {
		t.detail = detail
	}
	s.mu.Unlock()
}

// Println prints text as a line of its own above the status line (a
// finished stage's summary); the status is redrawn below it.
func (s *Status) Println(text string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprint(s.w, "\r\x1b[K"+text+"\n")
	s.drawn = false
}

// Close erases the line and stops redrawing; it may be called again.
func (s *Status) Close() {
	if s == nil {
		return
	}
	s.once.Do(func() { close(s.stop) })
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drawn {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.drawn = false
	}
}

// Line is the current status text ("" with no task running).
func (s *Status) Line() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.line()
}

func (s *Status) line() string {
	names := make([]string, 0, len(s.tasks))
	for n := range s.tasks {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		t := s.tasks[n]
		p := n
		if t.detail != "" {
			p += " " + t.detail
		}
		parts = append(parts, fmt.Sprintf("%s (%ds)", p, int(s.now().Sub(t.start).Seconds())))
	}
	l := strings.Join(parts, " | ")
	if r := []rune(l); len(r) > statusWidth {
		l = string(r[:statusWidth-1]) + "…"
	}
	return l
}

func (s *Status) draw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.line()
	if l == "" && !s.drawn {
		return
	}
	fmt.Fprint(s.w, "\r\x1b[K"+l)
	s.drawn = l != ""
}

// pushProgress reports a push's progress as the detail of task name on
// status; the returned wait ends the task once go-containerregistry closes
// the channel.
func pushProgress(status *Status, name string) (remote.Option, func()) {
	ch := make(chan v1.Update, 64)
	done := make(chan struct{})
	end := status.Start(name)
	started := time.Now()
	go func() {
		defer close(done)
		defer end()
		var last v1.Update
		for u := range ch {
			if u.Error != nil || u.Total == 0 {
				continue
			}
			last = u
			status.Set(name, progressText(u))
		}
		if last.Total > 0 {
			status.Println(fmt.Sprintf("%s: %s in %s", name, progressText(last), since(started)))
		}
	}()
	return remote.WithProgress(ch), func() { <-done }
}

func progressText(u v1.Update) string {
	return fmt.Sprintf("%3d%% of %.1f MiB", u.Complete*100/u.Total, float64(u.Total)/(1<<20))
}

// since formats a stage's duration for its summary line.
func since(start time.Time) string {
	d := time.Since(start)
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}
