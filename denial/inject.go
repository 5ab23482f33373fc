package denial

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// Line injection, what Scan looks for.
//
// OpenShell prints the actor's executable path raw: the proxy reads it with
// readlink(/proc/<pid>/exe) (procfs.rs:127-156@v0.0.111, :84-113@v0.0.83;
// proxy.rs:2427-2428,1822-1825@v0.0.111), the shorthand prints
// "{name}({pid})" unescaped (format/shorthand.rs:199,269@v0.0.111,
// :128,190@v0.0.83), and the layer writes "{ts} OCSF {line}" with
// writeln!, which keeps any '\n' in it (tracing_layers/shorthand_layer.rs:63
// at both tags); `openshell logs` prints the same text (log_push.rs:54-60
// @v0.0.111). An agent that runs a binary from a path holding line breaks
// turns one event into a block of consecutive lines:
//
//	{ts} OCSF NET:OPEN [MED] DENIED <part 0 of the path>
//	<part 1 of the path>
//	...
//	<part k of the path>(<pid>) -> <host>:<port> [policy:...] [reason:...]
//
// Each part is the agent's choice within what a path can be: no NUL, and no
// "//" (the kernel's d_path joins components with one '/'). So every line
// of a block but the last holds no "//", and the block's path parts
// together are one readlink result, at most a page (d_path into a page,
// fs/proc/base.c do_proc_readlink): 4 KiB on x86-64, up to 64 KiB on arm64
// and ppc64 kernels with large pages. Any part may itself be a well-formed
// line, so the agent can also write a block with no fragment at all; that
// is the residual risk docs/threat-model.md states.
//
// Scan marks an event (hint) when an unparsed line is in the same possible
// block: between the two lines, the event's and the fragment's, every line
// but the later one holds no "//", and at most injectReach bytes lie
// strictly between them.

// injectReach bounds the bytes of log between two lines of one injected
// block: the largest page size of a Linux kernel OpenShell runs on.
const injectReach = 64 << 10

// Raw holds at most maxRawLines lines of at most maxRawLen bytes.
const (
	maxRawLines = 5
	maxRawLen   = 512
	ringLines   = maxRawLines - 1
)

// pendingEvent is an event a later fragment could still share a block
// with, and the offset its line ends at.
type pendingEvent struct {
	ev  Event
	end int64
}

// injection is Scan's view of the lines around an event.
type injection struct {
	emit func(Event)
	// pending holds the held events from head on, in input order; the
	// slots before head are handed over and cleared, and reused (hold).
	pending []pendingEvent
	head    int
	// fragOpen says that fragLine, unparsed and free of "//", ended at
	// fragEnd with no "//" line since: a later event may be in its block.
	fragOpen bool
	fragEnd  int64
	fragLine int
	// ring holds the last ringLines raw lines (cut), oldest first from
	// ringNext.
	ring     [ringLines][]byte
	ringN    int
	ringNext int
}

// see takes the next line: b (nil for an over-long line), its number, the
// offsets it starts and ends at, what it parsed to.
func (in *injection) see(b []byte, n int, start, end int64, ev Event, res LineResult) {
	in.release(start)
	barrier := b == nil || bytes.Contains(b, []byte("//"))
	switch res {
	case LineEvent:
		in.event(ev, n, start, end, barrier)
	case LineUnparsed:
		if b != nil {
			in.fragment(b, n, end, barrier)
		}
	}
	if barrier {
		in.flush()
		in.fragOpen = false
	}
	in.remember(b)
}

// event marks ev when an earlier fragment reaches it, and holds it while a
// later one may.
func (in *injection) event(ev Event, n int, start, end int64, barrier bool) {
	if in.fragOpen && start-in.fragEnd <= injectReach {
		ev.hint = "line " + strconv.Itoa(n) + " follows the unparsed line " + strconv.Itoa(in.fragLine) +
			" with no line between them that an injected binary path could not hold"
		ev.Raw = append(in.recent(), cutRaw(ev.line))
	}
	in.hold(pendingEvent{ev, end})
	if barrier {
		in.flush()
	}
}

// fragment marks every held event, which an unparsed line follows within
// reach, and opens the reach of the fragment for later events.
func (in *injection) fragment(b []byte, n int, end int64, barrier bool) {
	for i := in.head; i < len(in.pending); i++ {
		ev := &in.pending[i].ev
		if ev.hint == "" {
			ev.hint = "the unparsed line " + strconv.Itoa(n) + " follows line " + strconv.Itoa(ev.Line) +
				" with no line between them that an injected binary path could not hold"
			ev.Raw = []string{cutRaw(ev.line)}
		}
		if len(ev.Raw) < maxRawLines {
			ev.Raw = append(ev.Raw, cutRaw(string(b)))
		}
	}
	if !barrier {
		in.fragOpen, in.fragEnd, in.fragLine = true, end, n
	}
}

// release hands over the held events that no later line, from start on,
// can share a block with.
func (in *injection) release(start int64) {
	for in.head < len(in.pending) && start-in.pending[in.head].end > injectReach {
		in.emit(in.pending[in.head].ev)
		in.pending[in.head] = pendingEvent{}
		in.head++
	}
	if in.head == len(in.pending) {
		in.pending, in.head = in.pending[:0], 0
	}
}

// hold adds p to the held events. A full buffer whose first half or more
// was handed over moves the rest to its front rather than growing, so a
// log whose events stay held (no line ends a block) reuses one buffer.
func (in *injection) hold(p pendingEvent) {
	if len(in.pending) == cap(in.pending) && in.head > 0 && in.head >= len(in.pending)/2 {
		n := copy(in.pending, in.pending[in.head:])
		clear(in.pending[n:])
		in.pending, in.head = in.pending[:n], 0
	}
	in.pending = append(in.pending, p)
}

// flush hands over every held event.
func (in *injection) flush() {
	for i := in.head; i < len(in.pending); i++ {
		in.emit(in.pending[i].ev)
	}
	clear(in.pending)
	in.pending, in.head = in.pending[:0], 0
}

// remember keeps b, cut, as the newest of the recent lines.
func (in *injection) remember(b []byte) {
	in.ring[in.ringNext] = append(in.ring[in.ringNext][:0], b[:rawLen(b)]...)
	in.ringNext = (in.ringNext + 1) % ringLines
	in.ringN = min(in.ringN+1, ringLines)
}

// recent returns copies of the recent lines, oldest first.
func (in *injection) recent() []string {
	out := make([]string, 0, maxRawLines)
	for i := ringLines - in.ringN; i < ringLines; i++ {
		out = append(out, string(in.ring[(in.ringNext+i)%ringLines]))
	}
	return out
}

// cutRaw cuts a raw line at maxRawLen bytes, at a UTF-8 boundary.
func cutRaw(s string) string {
	if len(s) <= maxRawLen {
		return s
	}
	end := maxRawLen
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end]
}

// rawLen is the length cutRaw keeps of b.
func rawLen(b []byte) int {
	if len(b) <= maxRawLen {
		return len(b)
	}
	end := maxRawLen
	for end > 0 && !utf8.RuneStart(b[end]) {
		end--
	}
	return end
}
