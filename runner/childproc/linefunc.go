package childproc

import (
	"bytes"
	"sync"
)

// LineFunc is an io.Writer that calls fn with each complete line written
// to it (without the newline); Flush and Close pass on a partial last line.
type LineFunc struct {
	mu  sync.Mutex
	fn  func(string)
	buf []byte
}

// NewLineFunc returns a LineFunc calling fn.
func NewLineFunc(fn func(string)) *LineFunc { return &LineFunc{fn: fn} }

// Write calls fn with each line p completes; a line over 64 KiB without
// its end is passed on in pieces.
func (l *LineFunc) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := string(bytes.TrimRight(l.buf[:i], "\r"))
		l.buf = l.buf[i+1:]
		if line != "" {
			l.fn(line)
		}
	}
	if len(l.buf) > 64<<10 { // a line without end: pass it on in pieces
		l.fn(string(l.buf))
		l.buf = nil
	}
	return len(p), nil
}

// Flush passes on a partial last line.
func (l *LineFunc) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.fn(string(l.buf))
		l.buf = nil
	}
}

// Close flushes.
func (l *LineFunc) Close() error {
	l.Flush()
	return nil
}
