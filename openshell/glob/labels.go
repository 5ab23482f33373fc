package glob

// The engine under every host pattern dialect (Host, ProfileHost,
// CredentialHost).
//
// A host pattern is read as a sequence of elements over the dot-separated
// labels of a host name. An element either stands for exactly one label
// (a literal label, or a single-label glob), or it is a run that stands for
// any labels: one or more of them, or zero or more. The dialects differ only
// in how a pattern's text becomes elements; matching and overlap are shared:
//
//   - match reads the host's labels left to right and carries the set of
//     element positions the labels read so far can end at, as one simulates
//     a nondeterministic automaton: a label moves a single element one step
//     on and a run either one step on or nowhere (it may take more labels).
//     A zero-or-more run is passed over without reading anything. The host
//     matches when the end position is in the set after its last label.
//     Time is O(elements × labels), with no backtracking.
//   - overlap runs two patterns side by side on one imagined host. A pair
//     of positions moves on when the two elements there could accept one
//     and the same label (mayShare); each side then moves as match would
//     move it. The patterns overlap when the pair of end positions is
//     reachable. Each pair is visited at most once.

// repeat is how many labels an element takes.
type repeat uint8

const (
	single     repeat = iota // exactly one label
	oneOrMore                // a run of at least one label
	zeroOrMore               // a run of any number of labels, none included
)

// elem is one element of a label sequence.
type elem struct {
	rep   repeat
	lit   string            // the label, for a single literal element
	match func(string) bool // a single-label glob; nil for a literal or a run
}

// literal reports whether e stands for exactly one known label.
func (e elem) literal() bool { return e.rep == single && e.match == nil }

// accepts reports whether e can take label: a run takes any label.
func (e elem) accepts(label string) bool {
	switch {
	case e.rep != single:
		return true
	case e.match != nil:
		return e.match(label)
	}
	return label == e.lit
}

// mayShare reports whether some label could be taken by both a and b. It
// is exact when one side is a literal or a run, and assumed true for two
// globs: OpenShell makes the same assumption (label_patterns_may_overlap,
// openshell-core/src/host_pattern.rs:258-281 @ v0.0.111), and for the
// profile dialect, whose only glob is a whole-label `*`, it is exact.
func mayShare(a, b elem) bool {
	switch {
	case a.literal() && b.literal():
		return a.lit == b.lit
	case a.literal():
		return b.accepts(a.lit)
	case b.literal():
		return a.accepts(b.lit)
	}
	return true
}

// labelSeq is a compiled host pattern: its elements in order.
type labelSeq []elem

// enter marks position i in set and, past every zero-or-more run from
// there, the positions after it: those need no label to be reached.
func (s labelSeq) enter(set []bool, i int) {
	for ; i <= len(s); i++ {
		set[i] = true
		if i == len(s) || s[i].rep != zeroOrMore {
			return
		}
	}
}

// after marks in set the positions element i can be at once it has taken
// a label: the next one, and i itself for a run.
func (s labelSeq) after(set []bool, i int) {
	if s[i].rep != single {
		s.enter(set, i)
	}
	s.enter(set, i+1)
}

// match reports whether the sequence accepts the labels, in order.
func (s labelSeq) match(labels []string) bool {
	cur := make([]bool, len(s)+1)
	s.enter(cur, 0)
	for _, l := range labels {
		next := make([]bool, len(s)+1)
		for i, on := range cur[:len(s)] {
			if on && s[i].accepts(l) {
				s.after(next, i)
			}
		}
		cur = next
	}
	return cur[len(s)]
}

// steps lists the positions element i can be at once it has taken a
// label, before passing over any zero-or-more run (lockstep.add does that).
func (s labelSeq) steps(i int) []int {
	if s[i].rep != single {
		return []int{i, i + 1}
	}
	return []int{i + 1}
}

// overlaps reports whether s and o can accept one and the same label
// sequence (see the file comment).
func (s labelSeq) overlaps(o labelSeq) bool {
	w := &lockstep{a: s, b: o, seen: make([]bool, (len(s)+1)*(len(o)+1))}
	w.add(0, 0)
	return w.run()
}

// lockstep is the state of labelSeq.overlaps: the two sequences, the
// position pairs reached and those still to explore.
type lockstep struct {
	a, b labelSeq
	seen []bool
	todo [][2]int
}

// add reaches the pair (i, j) and the pairs past zero-or-more runs from
// it.
func (w *lockstep) add(i, j int) {
	k := i*(len(w.b)+1) + j
	if w.seen[k] {
		return
	}
	w.seen[k] = true
	w.todo = append(w.todo, [2]int{i, j})
	if i < len(w.a) && w.a[i].rep == zeroOrMore {
		w.add(i+1, j)
	}
	if j < len(w.b) && w.b[j].rep == zeroOrMore {
		w.add(i, j+1)
	}
}

// run explores the reached pairs until both ends are reached together.
func (w *lockstep) run() bool {
	for len(w.todo) > 0 {
		p := w.todo[len(w.todo)-1]
		w.todo = w.todo[:len(w.todo)-1]
		i, j := p[0], p[1]
		if i == len(w.a) && j == len(w.b) {
			return true
		}
		if i < len(w.a) && j < len(w.b) && mayShare(w.a[i], w.b[j]) {
			w.stepBoth(i, j)
		}
	}
	return false
}

// stepBoth reaches every pair the two elements at (i, j) can move to on
// one shared label.
func (w *lockstep) stepBoth(i, j int) {
	for _, x := range w.a.steps(i) {
		for _, y := range w.b.steps(j) {
			w.add(x, y)
		}
	}
}

// asciiLower lowercases the ASCII letters of s and nothing else, as Rust's
// str::to_ascii_lowercase does: OpenShell compares hosts that way.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// isSpace is Rust's char::is_whitespace (the Unicode White_Space
// property), which OpenShell's host checks and str::trim use.
func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return 0x2000 <= r && r <= 0x200A
}
