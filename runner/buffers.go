package runner

import "bytes"

// The bounded buffers a child's output is read into (openshell's stderr, a
// sandbox's logs): what comes out of a sandbox is hostile, so none of them
// grows without bound.

// capWriter keeps the first max bytes written to it, cut at the last whole
// line, and discards the rest.
type capWriter struct {
	max int
	buf bytes.Buffer
	cut bool
}

func (c *capWriter) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 && !c.cut {
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

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte { return t.buf }
