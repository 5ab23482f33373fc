// Package redact is the run's secret masker: the secret values one run
// registers (provider credentials, pass-env values, tokens) replaced by ***
// in strings (Masker) and in streams (Writer, across any split of the
// writes, with bounded memory). The runner masks its log, the agent's
// output, the evidence files and the calls recorded for diagnosis with
// it. The CI's own masking is the Reporter's (ciout.Reporter.Mask).
package redact

import (
	"io"
	"slices"
	"strings"
	"sync"
)

// minSecretLen is the shortest value the Masker hides; shorter values would
// garble ordinary output and are not credentials.
const minSecretLen = 4

// Masker replaces known secret values in text with ***.
type Masker struct {
	mu sync.RWMutex
	// secrets is never changed in place (Add makes a new slice), so a
	// snapshot stays valid without the lock. Longest first.
	secrets []string
}

// Add registers a secret. A value of several lines also registers each of
// its lines, as GitHub's ::add-mask:: does (ciout.Reporter.Mask): a line of
// a key is a part of the key.
func (m *Masker) Add(secret string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := slices.Clone(m.secrets)
	add := func(s string) {
		if len(s) >= minSecretLen && !slices.Contains(next, s) {
			next = append(next, s)
		}
	}
	add(secret)
	if strings.ContainsAny(secret, "\r\n") {
		for _, line := range strings.FieldsFunc(secret, func(r rune) bool { return r == '\n' || r == '\r' }) {
			add(strings.TrimSpace(line))
		}
	}
	// Longest first (then by value, so the order does not depend on the
	// order of the calls).
	slices.SortFunc(next, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	m.secrets = next
}

// snapshot returns the secrets, longest first; the slice is never modified.
func (m *Masker) snapshot() []string {
	if m == nil {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.secrets
}

// String returns s with every byte of every occurrence of a secret hidden:
// each run of overlapping occurrences (of one secret or of several) becomes
// one ***, so no part of a secret that overlaps another is left readable.
func (m *Masker) String(s string) string {
	return maskSpans(s, m.snapshot())
}

func (m *Masker) Strings(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = m.String(s)
	}
	return out
}

// maskSpans replaces the union of the occurrences of secrets in s by ***,
// one per maximal run of overlapping occurrences. Occurrences that only
// touch stay two: masking two pieces that no occurrence spans gives the
// same text as masking them together, which Writer relies on.
func maskSpans(s string, secrets []string) string {
	type span struct{ a, b int }
	var spans []span
	for _, sec := range secrets {
		for i := 0; i <= len(s)-len(sec); {
			j := strings.Index(s[i:], sec)
			if j < 0 {
				break
			}
			spans = append(spans, span{i + j, i + j + len(sec)})
			i += j + 1 // overlapping occurrences too ("aaaa" in "aaaaa")
		}
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(x, y span) int { return x.a - y.a })
	var b strings.Builder
	b.Grow(len(s))
	last, cur := 0, spans[0]
	for _, sp := range spans[1:] {
		if sp.a < cur.b {
			cur.b = max(cur.b, sp.b)
			continue
		}
		b.WriteString(s[last:cur.a])
		b.WriteString("***")
		last, cur = cur.b, sp
	}
	b.WriteString(s[last:cur.a])
	b.WriteString("***")
	b.WriteString(s[cur.b:])
	return b.String()
}

// NewWriter returns a Writer that masks m's secrets on their way to w.
func NewWriter(m *Masker, w io.Writer) *Writer { return &Writer{m: m, w: w} }

// Writer masks secrets in a stream. Whatever the sequence of writes,
// a secret split across them is masked: a write passes on, masked, all it
// can, and holds back only the bytes that could still become part of a
// secret (at most the longest secret's length minus one, plus any
// occurrence they overlap). Close (or Flush) writes what is held back.
type Writer struct {
	m   *Masker
	w   io.Writer
	mu  sync.Mutex
	buf []byte
	// swallow counts the next input bytes dropped after an overlong hold
	// was written as *** (see maxHold).
	swallow int
}

// maxHold bounds what a Writer holds back. Only a chain of overlapping
// occurrences of a secret that overlaps itself ("0000" in a run of zeros)
// holds back more than the longest secret; such a hold is written as ***,
// and the next len(longest secret)-1 input bytes, which may end the last
// occurrence, are dropped: memory stays bounded whatever the agent writes,
// and no part of a secret comes out.
const maxHold = 64 << 10

func (mw *Writer) Write(p []byte) (int, error) {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	n := len(p)
	if mw.swallow > 0 {
		k := min(mw.swallow, len(p))
		mw.swallow -= k
		p = p[k:]
	}
	mw.buf = append(mw.buf, p...)
	secrets := mw.m.snapshot()
	text := string(mw.buf)
	cut := safeCut(text, secrets)
	out := maskSpans(text[:cut], secrets)
	if len(text)-cut > maxHold {
		out, cut = out+"***", len(text)
		mw.swallow = len(secrets[0]) - 1
	}
	mw.buf = append(mw.buf[:0], text[cut:]...)
	if out == "" {
		return n, nil
	}
	_, err := io.WriteString(mw.w, out)
	return n, err
}

// safeCut returns how much of buf can be masked and passed on now: the
// bytes before the shortest suffix of buf that may still grow into a
// secret (a proper prefix of one), moved back before any occurrence of a
// secret that the cut would split. Masking buf[:cut] and, later, the rest
// then gives what masking the whole stream at once gives.
func safeCut(buf string, secrets []string) int {
	cut := len(buf)
	for _, s := range secrets {
		// The earliest j such that buf[j:] is a proper prefix of s.
		for j := max(0, len(buf)-len(s)+1); j < cut; j++ {
			k := strings.IndexByte(buf[j:cut], s[0])
			if k < 0 {
				break
			}
			j += k
			if strings.HasPrefix(s, buf[j:]) {
				cut = j
				break
			}
		}
	}
	for moved := true; moved; {
		moved = false
		for _, s := range secrets {
			// An occurrence that starts in [cut-len(s)+1, cut) ends past
			// cut: it lies entirely in this window.
			lo, hi := max(0, cut-len(s)+1), min(len(buf), cut+len(s)-1)
			if hi-lo < len(s) {
				continue
			}
			if i := strings.Index(buf[lo:hi], s); i >= 0 {
				cut, moved = lo+i, true
			}
		}
	}
	return cut
}

// Flush writes, masked, what the writer holds back. The stream may go on:
// a secret whose start was flushed is then no longer recognised, so flush
// only where the text is complete (the end of a log line or of a stream).
func (mw *Writer) Flush() error {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if len(mw.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(mw.w, mw.m.String(string(mw.buf)))
	mw.buf = mw.buf[:0]
	return err
}

// Close flushes; the underlying writer stays open.
func (mw *Writer) Close() error { return mw.Flush() }
