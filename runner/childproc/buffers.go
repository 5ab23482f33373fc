package childproc

import "bytes"

// The bounded buffers a child's output is read into (openshell's stderr, a
// sandbox's logs): what comes out of a sandbox is hostile, so none of them
// grows without bound.

// CapWriter keeps the first Max bytes written to it, cut at the last whole
// line, and discards the rest.
type CapWriter struct {
	Max int // bytes kept
	buf bytes.Buffer
	cut bool
}

// Write keeps what fits and reports all of p written.
func (c *CapWriter) Write(p []byte) (int, error) {
	if room := c.Max - c.buf.Len(); room > 0 && !c.cut {
		if len(p) <= room {
			c.buf.Write(p)
			return len(p), nil
		}
		c.buf.Write(p[:room])
	}
	if !c.cut {
		c.cut = true
		b := c.buf.Bytes()
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			c.buf.Truncate(i + 1)
		}
	}
	return len(p), nil
}

// Bytes returns what was kept.
func (c *CapWriter) Bytes() []byte { return c.buf.Bytes() }

// String returns what was kept, as a string.
func (c *CapWriter) String() string { return c.buf.String() }

// Truncated reports whether bytes were discarded.
func (c *CapWriter) Truncated() bool { return c.cut }

// TailBuffer keeps the last Max bytes written to it.
type TailBuffer struct {
	Max int // bytes kept
	buf []byte
}

// Write appends p and drops all but the last Max bytes.
func (t *TailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.Max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.Max:]...)
	}
	return len(p), nil
}

// Bytes returns the last Max bytes written.
func (t *TailBuffer) Bytes() []byte { return t.buf }
