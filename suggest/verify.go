package suggest

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
)

// number orders the suggestions and gives them ids.
func (p *planner) number() {
	slices.SortStableFunc(p.sugs, func(a, b *Suggestion) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.YAMLPath, b.YAMLPath), cmp.Compare(a.Value, b.Value))
	})
	for i, s := range p.sugs {
		if !p.keepIDs {
			s.ID = "S" + strconv.Itoa(i+1)
		}
		s.Covers = s.Covers[:0]
		for _, d := range s.denials {
			s.Covers = append(s.Covers, d.ID)
		}
		sort.Slice(s.Covers, func(a, b int) bool { return idLess(s.Covers[a], s.Covers[b]) })
		s.Covers = slices.Compact(s.Covers)
	}
}

// only keeps the suggestions Options.Only names, with their ids, and
// checks the patch of those alone again; the others are named in a
// warning.
func (p *planner) only(ctx context.Context, version string) error {
	if len(p.opts.Only) == 0 {
		return nil
	}
	var have, left []string
	for _, s := range p.sugs {
		have = append(have, s.ID)
	}
	for _, id := range p.opts.Only {
		if !slices.Contains(have, id) {
			return fmt.Errorf("%w %s (have: %s)", ErrOnly, id, strings.Join(have, ", "))
		}
	}
	p.sugs = slices.DeleteFunc(p.sugs, func(s *Suggestion) bool {
		if slices.Contains(p.opts.Only, s.ID) {
			return false
		}
		left = append(left, s.ID)
		return true
	})
	p.res.Warnings = p.res.Warnings[:p.warned] // the check of the whole patch
	if len(left) > 0 {
		p.res.Warnings = append(p.res.Warnings, "left out of the patch (--only): "+strings.Join(left, ", "))
	}
	p.keepIDs, p.tierTo = true, ""
	if err := p.reapply(); err != nil {
		return err
	}
	return p.verify(ctx, version)
}

// idLess orders ids S1 < S2 < S10.
func idLess(a, b string) bool {
	x, _ := strconv.Atoi(a[1:])
	y, _ := strconv.Atoi(b[1:])
	return x < y
}

// verify recompiles the patched project and checks, with the decision
// engine, that (a) every covered denial is now allowed, (b) nearby requests
// that were denied stay denied (the other methods on the same path, a
// sibling path, the same host from /usr/bin/nc), and (c) records the tier
// before and after. A suggestion that fails its check, or whose change keeps
// the patched project from compiling, is taken out of the patch and its
// denials listed as manual (unverified): one unverifiable suggestion never
// hides the others, which are checked again without it.
func (p *planner) verify(ctx context.Context, version string) error {
	if len(p.sugs) > 0 && p.opts.Compile == nil {
		return fmt.Errorf("%w: no compiler to check the patched project with", ErrVerify)
	}
	for {
		p.number()
		if len(p.sugs) == 0 {
			return nil
		}
		after, dec, err := p.settle(ctx, version)
		if err != nil {
			if err := p.isolate(ctx, version, err); err != nil {
				return err
			}
			continue
		}
		failed := p.checkAll(dec)
		if len(failed) == 0 {
			p.after, p.version = after, version
			p.attributeTier(after.Tier)
			return p.expectations(after, version)
		}
		if err := p.drop(failed); err != nil {
			return err
		}
	}
}

// checkAll checks every suggestion against the patched policy and returns
// those that fail, each listed as manual with the reason.
func (p *planner) checkAll(dec *decide.Decider) []*Suggestion {
	var failed []*Suggestion
	for _, s := range p.sugs {
		if err := p.check(s, dec); err != nil {
			p.unverified(s, err.Error())
			failed = append(failed, s)
		}
	}
	return failed
}

// unverified lists a suggestion's denials as manual: the change that would
// allow them could not be verified, so a human decides.
func (p *planner) unverified(s *Suggestion, why string) {
	for _, d := range s.denials {
		p.res.Manual = append(p.res.Manual, Finding{Denial: d.ID, Why: why, Unverified: true,
			Hint: "the change was left out of the patch: read the denial and decide by hand"})
	}
}

// drop takes the suggestions out of the patch and applies the rest again
// from the declared tier.
func (p *planner) drop(out []*Suggestion) error {
	p.sugs = slices.DeleteFunc(p.sugs, func(s *Suggestion) bool { return slices.Contains(out, s) })
	p.tierTo = ""
	return p.reapply()
}

// isolate finds the suggestions that keep the patched project from
// compiling (cause): it adds them one at a time, keeping each that compiles
// with those kept before it; the others are listed as unverified.
func (p *planner) isolate(ctx context.Context, version string, cause error) error {
	all := p.sugs
	var kept, bad []*Suggestion
	for _, s := range all {
		p.sugs, p.tierTo = append(slices.Clone(kept), s), ""
		if err := p.reapply(); err != nil {
			return err
		}
		if _, _, err := p.settle(ctx, version); err != nil {
			p.unverified(s, fmt.Sprintf("%s %s in %s: %v", s.Change, s.Value, s.File, err))
			bad = append(bad, s)
			continue
		}
		kept = append(kept, s)
	}
	if len(bad) == 0 { // each compiles with the others: the set does not
		for _, s := range all {
			p.unverified(s, fmt.Sprintf("%s %s in %s: with the other suggestions: %v", s.Change, s.Value, s.File, cause))
		}
		kept = nil
	}
	p.sugs, p.tierTo = kept, ""
	return p.reapply()
}

// settle compiles the patched project until it compiles, and returns the
// compiled agent and its decider: while the project does not compile, the
// patch raises the declared tier.
func (p *planner) settle(ctx context.Context, version string) (*Target, *decide.Decider, error) {
	for {
		after, err := p.opts.Compile(ctx, overlay{base: p.opts.Project, files: p.res.Files})
		if err != nil {
			if !p.raiseTier() {
				return nil, nil, fmt.Errorf("the patched project does not compile: %w", err)
			}
			if err := p.reapply(); err != nil {
				return nil, nil, err
			}
			continue
		}
		dec, err := newDecider(after.Policy, p.opts.Values, version)
		if err != nil {
			return nil, nil, fmt.Errorf("the patched policy: %w", err)
		}
		return after, dec, nil
	}
}

// raiseTier raises the tier the patch sets one step, from the declared
// tier or the last one tried; false when none is left (or the agent
// declares none). The declared tier caps what the agent may hold (egress
// needs network, a write method full): the patch says so by raising it,
// one step at a time, never silently, and settle checks that this
// compiles.
func (p *planner) raiseTier() bool {
	next := nextTier(p.declaredTier(), p.tierTo)
	if next == "" {
		return false
	}
	p.tierTo = next
	return true
}

// reapply applies the suggestions again after a change to them, and
// numbers them.
func (p *planner) reapply() error {
	if err := p.apply(); err != nil {
		return err
	}
	p.number()
	return nil
}

// check verifies one suggestion against the patched policy.
func (p *planner) check(s *Suggestion, dec *decide.Decider) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s %s in %s failed its check: %s", s.Change, s.Value, s.File, fmt.Sprintf(format, args...))
	}
	for _, r := range s.requests {
		if d := dec.Decide(r); !d.Allowed || d.Audit {
			return fail("%s is still not allowed: %s", r, d.Reason)
		}
	}
	s.probes = nil
	for _, probe := range p.probesOf(s) {
		if p.before.Decide(probe).Allowed {
			continue
		}
		if d := dec.Decide(probe); d.Allowed {
			return fail("it also allows %s, which was denied: the suggestion is wider than the evidence", probe)
		}
		s.probes = append(s.probes, probe)
	}
	return nil
}

// expectations runs the project's *.policytest.yaml files of the agent on
// the policy before and after the patch, and warns of every expectation the
// patch breaks: a human chooses between the grant and the expectation.
func (p *planner) expectations(after *Target, version string) error {
	fsys := overlay{base: p.opts.Project, files: p.res.Files}
	mine := p.agentExpectations(fsys)
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
	for _, k := range brokenExpectations(run(p.opts.Agent.Policy), run(after.Policy)) {
		p.res.Warnings = append(p.res.Warnings, fmt.Sprintf("the suggested grants break the expectation at %s: decide whether the agent needs the grant, then change the grant or the expectation", k))
	}
	return nil
}

// agentExpectations are the project's *.policytest.yaml files that hold
// the agent's expectations; none when there are none to keep.
func (p *planner) agentExpectations(fsys overlay) []string {
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
	return mine
}

// brokenExpectations are the expectations (file:line) that passed before
// the patch and fail after it, sorted.
func brokenExpectations(was, now map[string]bool) []string {
	var broken []string
	for k, pass := range now {
		if !pass && was[k] {
			broken = append(broken, k)
		}
	}
	sort.Strings(broken)
	return broken
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

// attributeTier records the tier before and after on each suggestion. When
// the patch raises the tier, the raise is put on the suggestions that need
// it by fullsend's tier model (a write method needs full; any egress needs
// network), or on every suggestion when none does; the others keep their
// tier, and a warning says the patch as a whole raises it.
func (p *planner) attributeTier(after string) {
	before := p.opts.Agent.Tier
	raisers := p.tierRaisers(before, after)
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

// tierRaisers sets every suggestion's tier to before and returns those
// that need after by fullsend's tier model: a write method needs full,
// any egress from read-only needs network.
func (p *planner) tierRaisers(before, after string) []*Suggestion {
	var raisers []*Suggestion
	for _, s := range p.sugs {
		s.TierBefore, s.TierAfter = before, before
		if after == "full" && s.writes() || before == "read-only" && s.Change != "add-rule" {
			raisers = append(raisers, s)
		}
	}
	return raisers
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
