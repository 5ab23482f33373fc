package image

import (
	"bytes"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// syncBuf is a bytes.Buffer safe for the status goroutine.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) { b.mu.Lock(); defer b.mu.Unlock(); return b.b.Write(p) }
func (b *syncBuf) String() string              { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

// fakeClock advances only when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time            { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration)       { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
func newClock() *fakeClock                     { return &fakeClock{t: time.Unix(1000, 0)} }
func (c *fakeClock) status(w *syncBuf) *Status { return newStatus(w, c.now, time.Hour) }

func TestStatusLine(t *testing.T) {
	var w syncBuf
	clock := newClock()
	s := clock.status(&w)
	endArm := s.Start("building fullsend for linux/arm64")
	clock.add(3 * time.Second)
	endPush := s.Start("pushing 127.0.0.1:5000/x")
	s.Set("pushing 127.0.0.1:5000/x", " 40% of 12.0 MiB")
	clock.add(2 * time.Second)
	want := "building fullsend for linux/arm64 (5s) | pushing 127.0.0.1:5000/x  40% of 12.0 MiB (2s)"
	if got := s.Line(); got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	s.draw()
	if !strings.HasSuffix(w.String(), "\r\x1b[K"+want) {
		t.Errorf("drawn %q", w.String())
	}
	endArm()
	endPush()
	if got := s.Line(); got != "" {
		t.Errorf("line after the tasks ended: %q", got)
	}
	s.Close()
	s.Close() // idempotent
	if !strings.HasSuffix(w.String(), "\r\x1b[K") {
		t.Errorf("the line was not erased: %q", w.String())
	}
}

func TestStatusWidth(t *testing.T) {
	var w syncBuf
	s := newClock().status(&w)
	defer s.Close()
	s.Start(strings.Repeat("x", 300))
	if n := len([]rune(s.Line())); n != statusWidth {
		t.Errorf("line of %d runes, want %d", n, statusWidth)
	}
}

func TestNilStatus(t *testing.T) {
	s := NewStatus(nil)
	if s != nil {
		t.Fatal("NewStatus(nil) is not nil")
	}
	s.Start("x")()
	s.Set("x", "y")
	s.Close()
}

func TestPushProgress(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	img, err := random.Image(1<<16, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/x:v1")
	if err != nil {
		t.Fatal(err)
	}
	var w syncBuf
	s := newClock().status(&w)
	opt, wait := pushProgress(s, "pushing x")
	if s.Line() == "" {
		t.Error("no task while pushing")
	}
	if err := remote.Write(ref, img, opt); err != nil {
		t.Fatal(err)
	}
	wait()
	if got := s.Line(); got != "" {
		t.Errorf("task still shown after the push: %q", got)
	}
	s.Close()
	if !strings.Contains(w.String(), "pushing x: 100% of") {
		t.Errorf("no summary line: %q", w.String())
	}
}
