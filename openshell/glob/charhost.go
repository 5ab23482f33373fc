package glob

import "strings"

// CharHost is a host pattern as OpenShell's endpoint ambiguity check reads
// it (host_patterns_overlap and glob_patterns_overlap,
// openshell-policy/src/ambiguity.rs:399-404,570-574 @ v0.0.111; the check
// is new since v0.0.83, which has no ambiguity.rs). Unlike Host it works on
// characters, not DNS labels: after ASCII lowercasing, a run of one `*`
// stands for any characters but '.', a run of two or more (`**`) for any
// characters at all, both possibly none, wherever they appear
// (tokenize_delimited_glob, ambiguity.rs:450-470); every other character,
// `?` and `[` included, stands for itself. An empty pattern overlaps every
// pattern (ambiguity.rs:400-402).
type CharHost struct {
	empty bool
	toks  []charTok
}

// charTok is one element of a CharHost: a literal character, or a star
// run that may or may not take a '.'.
type charTok struct {
	star  bool
	cross bool // a star of two or more: it takes '.' too
	lit   rune
}

// CompileCharHost reads a host pattern the way the ambiguity check does; no
// text is refused there, so it cannot fail.
func CompileCharHost(pattern string) *CharHost {
	h := &CharHost{empty: pattern == ""}
	rs := []rune(asciiLower(pattern))
	for i := 0; i < len(rs); {
		if rs[i] != '*' {
			h.toks = append(h.toks, charTok{lit: rs[i]})
			i++
			continue
		}
		j := i
		for j < len(rs) && rs[j] == '*' {
			j++
		}
		h.toks = append(h.toks, charTok{star: true, cross: j-i >= 2})
		i = j
	}
	return h
}

// takes reports whether t can take the character r.
func (t charTok) takes(r rune) bool {
	switch {
	case !t.star:
		return t.lit == r
	case t.cross:
		return true
	}
	return r != '.'
}

// shared returns a character both tokens can take, if any
// (tokens_share_character, ambiguity.rs:618-626 @ v0.0.111): two stars
// share every letter.
func shared(a, b charTok) (rune, bool) {
	switch {
	case !a.star:
		return a.lit, b.takes(a.lit)
	case !b.star:
		return b.lit, a.takes(b.lit)
	}
	return 'a', true
}

// Match reports whether the host is in the pattern's language as the
// ambiguity check sees it (an empty pattern matches every host).
func (h *CharHost) Match(host string) bool {
	if h.empty {
		return true
	}
	cur := h.closure(map[int]bool{0: true})
	for _, r := range asciiLower(host) {
		next := map[int]bool{}
		for i := range cur {
			if i < len(h.toks) && h.toks[i].takes(r) {
				next[h.stepped(i)] = true
			}
		}
		cur = h.closure(next)
	}
	return cur[len(h.toks)]
}

// closure adds to set the positions past every star reachable from it
// without a character.
func (h *CharHost) closure(set map[int]bool) map[int]bool {
	for i := range set {
		for ; i < len(h.toks) && h.toks[i].star; i++ {
			set[i+1] = true
		}
	}
	return set
}

// stepped is where position i is once its token has taken a character: a
// star stays, a literal moves on.
func (h *CharHost) stepped(i int) int {
	if h.toks[i].star {
		return i
	}
	return i + 1
}

// Overlaps reports whether some host is matched by both patterns, as
// OpenShell's ambiguity check decides it.
func (h *CharHost) Overlaps(o *CharHost) bool {
	_, ok := h.Witness(o)
	return ok
}

// Witness returns a host both patterns match, if there is one: it
// searches the product of the two patterns' automata, position pair by
// position pair, as token_languages_overlap does (ambiguity.rs:576-616 @
// v0.0.111). With an empty pattern the witness is the other's own.
func (h *CharHost) Witness(o *CharHost) (string, bool) {
	switch {
	case h.empty && o.empty:
		return "", true
	case h.empty:
		return o.Witness(o)
	case o.empty:
		return h.Witness(h)
	}
	p := &product{a: h, b: o, from: map[[2]int]step{{0, 0}: {}}}
	return p.search()
}

// step is how the product search first reached a pair: from the pair
// prev, taking the character r (none for a star passed over).
type step struct {
	prev [2]int
	r    rune
	has  bool
}

// product is the state of a Witness search.
type product struct {
	a, b *CharHost
	from map[[2]int]step
	todo [][2]int
}

// search explores pairs until both patterns end together.
func (p *product) search() (string, bool) {
	p.todo = [][2]int{{0, 0}}
	for len(p.todo) > 0 {
		q := p.todo[0]
		p.todo = p.todo[1:]
		if q[0] == len(p.a.toks) && q[1] == len(p.b.toks) {
			return p.trace(q), true
		}
		p.moves(q[0], q[1])
	}
	return "", false
}

// moves reaches the pairs one move from (i, j): past a star on either
// side, or both sides on one shared character.
func (p *product) moves(i, j int) {
	ta, okA := tokAt(p.a, i)
	tb, okB := tokAt(p.b, j)
	if okA && ta.star {
		p.reach([2]int{i, j}, [2]int{i + 1, j}, step{})
	}
	if okB && tb.star {
		p.reach([2]int{i, j}, [2]int{i, j + 1}, step{})
	}
	if !okA || !okB {
		return
	}
	if r, ok := shared(ta, tb); ok {
		p.reach([2]int{i, j}, [2]int{p.a.stepped(i), p.b.stepped(j)}, step{r: r, has: true})
	}
}

// tokAt returns token i of h, if there is one.
func tokAt(h *CharHost, i int) (charTok, bool) {
	if i < len(h.toks) {
		return h.toks[i], true
	}
	return charTok{}, false
}

// reach records the first way to the pair to and queues it.
func (p *product) reach(prev, to [2]int, s step) {
	if _, seen := p.from[to]; seen {
		return
	}
	s.prev = prev
	p.from[to] = s
	p.todo = append(p.todo, to)
}

// trace spells the characters taken on the way to q.
func (p *product) trace(q [2]int) string {
	var rs []rune
	for q != [2]int{0, 0} {
		s := p.from[q]
		if s.has {
			rs = append(rs, s.r)
		}
		q = s.prev
	}
	var b strings.Builder
	for i := len(rs) - 1; i >= 0; i-- {
		b.WriteRune(rs[i])
	}
	return b.String()
}
