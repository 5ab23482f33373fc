package suggest

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
)

// probeMethods are the methods a suggestion must not open besides its own.
var probeMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// number orders the suggestions and gives them ids.
func (p *planner) number() {
	sort.SliceStable(p.sugs, func(i, j int) bool {
		a, b := p.sugs[i], p.sugs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.YAMLPath != b.YAMLPath {
			return a.YAMLPath < b.YAMLPath
		}
		return a.Value < b.Value
	})
	for i, s := range p.sugs {
		s.ID = "S" + strconv.Itoa(i+1)
		s.Covers = s.Covers[:0]
		for _, d := range s.denials {
			s.Covers = append(s.Covers, d.ID)
		}
		sort.Slice(s.Covers, func(a, b int) bool { return idLess(s.Covers[a], s.Covers[b]) })
		s.Covers = compactStrings(s.Covers)
	}
}

func idLess(a, b string) bool {
	x, _ := strconv.Atoi(a[1:])
	y, _ := strconv.Atoi(b[1:])
	return x < y
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// verify recompiles the patched project and checks, with the decision
// engine, that (a) every covered denial is now allowed, (b) nearby requests
// that were denied stay denied (the other methods on the same path, a
// sibling path, the same host from /usr/bin/nc), and (c) records the tier
// before and after. A new endpoint whose requests its binary cannot make
// gets the binary declared, once.
func (p *planner) verify(ctx context.Context, version string) error {
	p.number()
	if len(p.sugs) == 0 {
		return nil
	}
	if p.opts.Compile == nil {
		return fmt.Errorf("%w: no compiler to check the patched project with", ErrVerify)
	}
	for attempt := 0; ; attempt++ {
		after, err := p.opts.Compile(ctx, overlay{base: p.opts.Project, files: p.res.Files})
		if next := nextTier(p.declaredTier(), p.tierTo); err != nil && next != "" {
			// The declared tier caps what the agent may hold (egress needs
			// network, a write method full): say so by raising it in the
			// same patch, one step at a time, never silently, and check
			// that this compiles.
			p.tierTo = next
			if aerr := p.apply(); aerr != nil {
				return aerr
			}
			p.number()
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: the patched project does not compile: %w", ErrVerify, err)
		}
		dec, err := newDecider(after.Policy, p.opts.Values, version)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrVerify, err)
		}
		if attempt < 2 && p.declareBinaries(dec) {
			if err := p.apply(); err != nil {
				return err
			}
			p.number()
			continue
		}
		p.attributeTier(after.Tier)
		for _, s := range p.sugs {
			if err := p.check(s, dec); err != nil {
				return err
			}
		}
		return p.expectations(after, version)
	}
}

// declareBinaries gives a new endpoint an explicit binaries: list when
// its covered requests are denied only for their binary (the tools do not
// imply it). It reports whether it changed a suggestion.
func (p *planner) declareBinaries(dec *decide.Decider) bool {
	changed := false
	relaxed := dec.RelaxedBinaryIdentity()
	for _, s := range p.sugs {
		if s.Change != "add-endpoint" {
			continue
		}
		for _, r := range s.requests {
			if dec.Decide(r).Allowed || !relaxed.Decide(r).Allowed {
				continue
			}
			if !containsString(s.binaries, r.Binary) {
				s.binaries = append(s.binaries, r.Binary)
				changed = true
			}
		}
	}
	return changed
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// check verifies one suggestion against the patched policy.
func (p *planner) check(s *Suggestion, dec *decide.Decider) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s (%s %s in %s): %s", ErrVerify, s.ID, s.Change, s.Value, s.File, fmt.Sprintf(format, args...))
	}
	for _, r := range s.requests {
		if d := dec.Decide(r); !d.Allowed || d.Audit {
			return fail("%s is still not allowed: %s", r, d.Reason)
		}
	}
	s.probes = nil
	seen := map[string]bool{}
	for _, r := range s.requests {
		for _, probe := range p.probesFor(s, r) {
			key := probe.String()
			if seen[key] {
				continue
			}
			seen[key] = true
			if p.before.Decide(probe).Allowed {
				continue
			}
			if d := dec.Decide(probe); d.Allowed {
				return fail("it also allows %s, which was denied: the suggestion is wider than the evidence", probe)
			}
			s.probes = append(s.probes, probe)
		}
	}
	return nil
}

// probesFor are the requests near r that must stay denied.
func (p *planner) probesFor(s *Suggestion, r *decide.Request) []*decide.Request {
	var out []*decide.Request
	hp := net.JoinHostPort(r.Host, strconv.Itoa(r.Port))
	add := func(text string) {
		if q, err := decide.ParseRequest(text); err == nil {
			out = append(out, q)
		}
	}
	if r.Method != "" {
		prefix := ""
		if r.Forward {
			prefix = "forward "
		}
		scheme := r.Scheme
		for _, m := range probeMethods {
			if s.methods[m] || m == r.Method || s.Provisional && m == "GET" {
				continue
			}
			add(fmt.Sprintf("%s%s %s://%s%s from %s", prefix, m, scheme, hp, r.Path, r.Binary))
		}
		// Another issue, owner or repository: a segment the rule holds as
		// a placeholder, with a value the job does not have.
		for _, probe := range placeholderProbes(s, r.Path) {
			add(fmt.Sprintf("%s%s %s://%s%s from %s", prefix, r.Method, scheme, hp, probe, r.Binary))
		}
		if !strings.Contains(s.Value, "*") && strings.Count(r.Path, "/") >= 2 {
			sib := r.Path[:strings.LastIndexByte(r.Path, '/')+1] + "fullsend-probe"
			add(fmt.Sprintf("%s%s %s://%s%s from %s", prefix, r.Method, scheme, hp, sib, r.Binary))
		}
	}
	if r.Method == "" && s.Provisional {
		// access: read-only must not let the binary write.
		scheme := "http"
		if r.Port == 443 {
			scheme = "https"
		}
		for _, m := range []string{"POST", "PUT", "DELETE"} {
			add(fmt.Sprintf("%s %s://%s/ from %s", m, scheme, hp, r.Binary))
		}
	}
	if !(s.Change == "add-binary" && s.Value == "/usr/bin/nc") {
		add(fmt.Sprintf("CONNECT %s from /usr/bin/nc", hp))
	}
	return out
}

// expectations runs the project's *.policytest.yaml files of the agent on
// the policy before and after the patch, and warns of every expectation the
// patch breaks: a human chooses between the grant and the expectation.
func (p *planner) expectations(after *Target, version string) error {
	fsys := overlay{base: p.opts.Project, files: p.res.Files}
	files, err := decide.FindExpectations(fsys)
	if err != nil {
		return nil // no expectations to keep
	}
	var mine []string
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			continue
		}
		if ef, err := decide.ParseExpectFile(f, data); err == nil && ef.Agent == p.opts.Agent.Name {
			mine = append(mine, f)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	run := func(pol *openshell.Policy) map[string]bool {
		rep, err := decide.RunExpectationsVersion(fsys, mine, map[string]*openshell.Policy{p.opts.Agent.Name: pol}, nil, version)
		out := map[string]bool{}
		if err != nil {
			return out
		}
		for _, c := range rep.Results {
			out[fmt.Sprintf("%s:%d", c.File, c.Line)] = c.Pass
		}
		return out
	}
	was, now := run(p.opts.Agent.Policy), run(after.Policy)
	var broken []string
	for k, pass := range now {
		if !pass && was[k] {
			broken = append(broken, k)
		}
	}
	sort.Strings(broken)
	for _, k := range broken {
		p.res.Warnings = append(p.res.Warnings, fmt.Sprintf("the suggested grants break the expectation at %s: decide whether the agent needs the grant, then change the grant or the expectation", k))
	}
	return nil
}

// declaredTier is the agent file's sandbox.tier, "" when it declares none.
func (p *planner) declaredTier() string {
	src, err := p.source(p.opts.Agent.File)
	if err != nil {
		return ""
	}
	if t := get(src.sandbox(), "tier"); t != nil && t.Kind == yaml.ScalarNode {
		return t.Value
	}
	return ""
}

// placeholderProbes returns reqPath with one placeholder segment of the
// suggestion's rule changed: ISSUE_NUMBER to the next number, a name to
// "fullsend-probe".
func placeholderProbes(s *Suggestion, reqPath string) []string {
	rules := s.Rules
	if s.Change == "add-rule" {
		rules = []string{s.Value}
	}
	segs := strings.Split(reqPath, "/")
	var out []string
	for _, rule := range rules {
		_, rp, _ := strings.Cut(rule, " ")
		rsegs := strings.Split(rp, "/")
		if len(rsegs) != len(segs) {
			continue
		}
		for i, rs := range rsegs {
			if !strings.HasPrefix(rs, "{{") {
				continue
			}
			probe := "fullsend-probe"
			if n, err := strconv.Atoi(segs[i]); err == nil {
				probe = strconv.Itoa(n + 1)
			}
			cp := append([]string(nil), segs...)
			cp[i] = probe
			out = append(out, strings.Join(cp, "/"))
		}
	}
	return out
}

// attributeTier records the tier before and after on each suggestion. When
// the patch raises the tier, the raise is put on the suggestions that need
// it by fullsend's tier model (a write method needs full; any egress needs
// network), or on every suggestion when none does; the others keep their
// tier, and a warning says the patch as a whole raises it.
func (p *planner) attributeTier(after string) {
	before := p.opts.Agent.Tier
	var raisers []*Suggestion
	for _, s := range p.sugs {
		s.TierBefore, s.TierAfter = before, before
		writes := false
		for m := range s.methods {
			writes = writes || writeMethods[m]
		}
		if after == "full" && writes || before == "read-only" && s.Change != "add-rule" {
			raisers = append(raisers, s)
		}
	}
	if after == before {
		return
	}
	if len(raisers) == 0 {
		raisers = p.sugs
	}
	var ids []string
	for _, s := range raisers {
		s.TierAfter = after
		ids = append(ids, s.ID)
		if p.tierTo != "" {
			s.addNote(fmt.Sprintf("the agent declares sandbox.tier %s, which does not allow this: the patch raises it to %s", p.declaredTier(), p.tierTo))
		}
	}
	p.res.Warnings = append(p.res.Warnings, fmt.Sprintf("the patch raises the agent's tier from %s to %s (%s)", before, after, strings.Join(ids, ", ")))
}

// nextTier is the tier to try after tried ("" before any), above the
// declared one; "" when there is none left.
func nextTier(declared, tried string) string {
	ladder := []string{"read-only", "network", "full"}
	from := tried
	if from == "" {
		from = declared
	}
	i := slices.Index(ladder, from)
	if declared == "" || i < 0 || i == len(ladder)-1 {
		return ""
	}
	return ladder[i+1]
}
