package policydiff

import (
	"fmt"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/prover"
)

// ruleLabel renders a rule as "METHOD path" plus its other matchers.
func ruleLabel(m *openshell.Match) string {
	var parts []string
	if m.Method != "" {
		parts = append(parts, strings.ToUpper(m.Method))
	}
	if m.Path != "" {
		parts = append(parts, m.Path)
	}
	rest := *m
	rest.Method, rest.Path = "", ""
	if b := literalJSON(rest); b != "{}" {
		parts = append(parts, b)
	}
	return strings.Join(parts, " ")
}

// ruleRest is a rule's identity beyond method and path.
func ruleRest(m *openshell.Match) string {
	rest := *m
	rest.Method, rest.Path = "", ""
	return literalJSON(rest)
}

type ruleUnit struct {
	i int
	m *openshell.Match
}

func (r ruleUnit) key() string {
	return strings.ToUpper(r.m.Method) + "\x00" + r.m.Path + "\x00" + ruleRest(r.m)
}

func allowRules(ep *openshell.Endpoint) []ruleUnit {
	out := make([]ruleUnit, len(ep.Rules))
	for i := range ep.Rules {
		out[i] = ruleUnit{i, &ep.Rules[i].Allow}
	}
	return out
}

// ruleAdded reports one allow rule of the head endpoint as added.
func (d *differ) ruleAdded(u *epUnit, i int, newEndpoint bool) {
	m := &u.ep.Rules[i].Allow
	c := d.add(Change{Action: ActionAdd, Kind: "rule", Policy: u.policy, Host: u.ep.Host, Port: firstPort(u.ports()),
		After: "allow " + ruleLabel(m), From: sourcesFor(d.h, fmt.Sprintf("%s.rules[%d]", u.path, i)), order: epOrder(u, "1"+ruleLabel(m))})
	d.gradeRule(c, u, m, "", newEndpoint)
}

// gradeRule grades an added or widened allow rule.
func (d *differ) gradeRule(c *Change, u *epUnit, m *openshell.Match, beforePath string, newEndpoint bool) {
	if newEndpoint {
		c.apply(grade{RiskInfo, "", "part of the new endpoint"})
	} else {
		c.apply(grade{RiskLow, "", "a new request on a host the agent already reaches"})
	}
	if writeRule(m) {
		c.apply(grade{RiskHigh, prover.CapabilityExpansion, "a write method: the agent can change state with the credentials it holds"})
	}
	c.apply(pathGrades(beforePath, m.Path, newEndpoint)...)
	c.apply(forgeWriteGrades(c.From)...)
}

// writeRule reports whether a rule allows a write: a write method, any
// method, or a GraphQL mutation.
func writeRule(m *openshell.Match) bool {
	return prover.IsWriteMethod(m.Method) || m.Method == "*" || (m.Method == "" && m.OperationType == "mutation")
}

// pathGrades grades the path of an added or widened rule (beforePath is
// the widened rule's old path, "" for an added rule): a widening across a
// placeholder, or a recursive path on an endpoint the agent already reaches.
func pathGrades(beforePath, path string, newEndpoint bool) []grade {
	if beforePath != "" {
		if pathWidenedAcrossPlaceholder(beforePath, path) {
			return []grade{{RiskHigh, CatPathWidened, "the path now matches far more than the placeholder allowed"}}
		}
		return nil
	}
	if !newEndpoint && (path == "**" || strings.HasSuffix(path, "/**")) {
		return []grade{{RiskMedium, CatPathWidened, "a recursive path"}}
	}
	return nil
}

// forgeWriteGrades grades a grant that the forge-write profile causes.
func forgeWriteGrades(srcs []bundle.Source) []grade {
	var out []grade
	for _, s := range srcs {
		if strings.Contains(s.Reason, "profile forge-write") {
			out = append(out, grade{RiskHigh, CatForgeWrite, "profile forge-write: comments and labels on the forge"})
		}
	}
	return out
}

// rules compares the allow and deny rules of two paired endpoints: a rule
// both hold (by key) may have moved; a new rule replaces the removed rule
// pairRule pairs it with, else it is added; the removed rules left over
// are removed.
func (d *differ) rules(bu, hu *epUnit) {
	bs, hs := allowRules(bu.ep), allowRules(hu.ep)
	d.ruleMoves(bu, hu, bs, hs)
	gone := unkeyed(hs, bs)
	used := map[int]bool{}
	for _, hr := range unkeyed(bs, hs) {
		j := pairRule(gone, used, hr)
		if j < 0 {
			d.ruleAdded(hu, hr.i, false)
			continue
		}
		used[j] = true
		d.ruleReplaced(bu, hu, gone[j], hr)
	}
	for j, br := range gone {
		if !used[j] {
			d.ruleRemoved(bu, hu, br)
		}
	}
	d.denyRules(bu, hu)
}

// ruleMoves reports each allow rule both endpoints hold (by key) whose
// sources changed.
func (d *differ) ruleMoves(bu, hu *epUnit, bs, hs []ruleUnit) {
	bByKey := map[string]ruleUnit{}
	for _, r := range bs {
		bByKey[r.key()] = r
	}
	for _, hr := range hs {
		br, ok := bByKey[hr.key()]
		if !ok {
			continue
		}
		bsrc, hsrc := sourcesFor(d.b, rulePath(bu, br)), sourcesFor(d.h, rulePath(hu, hr))
		if !sameOrigin(bsrc, hsrc) {
			d.add(Change{Action: ActionMove, Kind: "rule", Policy: hu.policy, Host: hu.ep.Host, Port: firstPort(hu.ports()),
				Before: "allow " + ruleLabel(br.m), After: "allow " + ruleLabel(hr.m), Risk: RiskInfo, Categories: []string{},
				Why: "the same grant, declared elsewhere", From: hsrc, Was: bsrc, order: epOrder(hu, "1"+ruleLabel(hr.m))})
		}
	}
}

// unkeyed returns the rules of b whose key no rule of a has.
func unkeyed(a, b []ruleUnit) []ruleUnit {
	keys := map[string]bool{}
	for _, r := range a {
		keys[r.key()] = true
	}
	var out []ruleUnit
	for _, r := range b {
		if !keys[r.key()] {
			out = append(out, r)
		}
	}
	return out
}

// rulePath is the policy path of an allow rule of u.
func rulePath(u *epUnit, r ruleUnit) string {
	return fmt.Sprintf("%s.rules[%d]", u.path, r.i)
}

// ruleReplaced grades a new rule hr that replaces the removed rule br:
// wider, narrower, or matching other requests.
func (d *differ) ruleReplaced(bu, hu *epUnit, br, hr ruleUnit) {
	c := d.add(Change{Kind: "rule", Policy: hu.policy, Host: hu.ep.Host, Port: firstPort(hu.ports()),
		Before: "allow " + ruleLabel(br.m), After: "allow " + ruleLabel(hr.m),
		From: sourcesFor(d.h, rulePath(hu, hr)), Was: sourcesFor(d.b, rulePath(bu, br)),
		order: epOrder(hu, "1"+ruleLabel(hr.m))})
	wider, narrower := ruleCovers(hr.m, br.m), ruleCovers(br.m, hr.m)
	switch {
	case wider && !narrower:
		c.Action = ActionWiden
		c.apply(grade{RiskMedium, "", "the rule matches more requests"})
		d.gradeRule(c, hu, hr.m, br.m.Path, false)
	case narrower && !wider:
		c.Action, c.Risk = ActionNarrow, RiskInfo
		c.Categories = []string{}
	default:
		c.Action = ActionChange
		c.apply(grade{RiskLow, "", "the rule matches other requests"})
		if hasPlaceholder(br.m.Path) != hasPlaceholder(hr.m.Path) {
			c.Why = "a concrete value and a placeholder swapped: the runner resolves the placeholder per job"
		}
		if prover.IsWriteMethod(hr.m.Method) {
			c.apply(grade{RiskMedium, "", "a write method on other paths"})
		}
	}
}

// ruleCovers reports whether rule a matches every request rule b does, by
// path and method.
func ruleCovers(a, b *openshell.Match) bool {
	return covers(a.Path, b.Path) && methodCovers(a.Method, b.Method)
}

// ruleRemoved reports a base allow rule no new rule replaces.
func (d *differ) ruleRemoved(bu, hu *epUnit, br ruleUnit) {
	d.add(Change{Action: ActionRemove, Kind: "rule", Policy: bu.policy, Host: bu.ep.Host, Port: firstPort(bu.ports()),
		Before: "allow " + ruleLabel(br.m), Risk: RiskInfo, From: sourcesFor(d.b, rulePath(bu, br)),
		order: epOrder(hu, "1"+ruleLabel(br.m))})
}

// methodCovers: "*" covers every method, GET covers HEAD (a GET rule also
// matches HEAD, sandbox-policy.rego:716-727 @ v0.0.111).
func methodCovers(a, b string) bool {
	a, b = strings.ToUpper(a), strings.ToUpper(b)
	return a == b || a == "*" || (a == "GET" && b == "HEAD")
}

// pairRule finds the removed rule a new rule replaces: the same matchers
// but the path or method, wider, narrower or the same shape with a
// placeholder swapped for a value.
func pairRule(gone []ruleUnit, used map[int]bool, hr ruleUnit) int {
	best := -1
	for j, br := range gone {
		if used[j] || ruleRest(br.m) != ruleRest(hr.m) {
			continue
		}
		if nested(br.m, hr.m) {
			return j
		}
		if best < 0 && strings.EqualFold(br.m.Method, hr.m.Method) && similar(br.m.Path, hr.m.Path) {
			best = j
		}
	}
	return best
}

// nested reports whether one of two rules covers the other along one
// axis: the same method and one path covering the other, or the same path
// and one method covering the other.
func nested(a, b *openshell.Match) bool {
	if strings.EqualFold(a.Method, b.Method) {
		return covers(b.Path, a.Path) || covers(a.Path, b.Path)
	}
	return a.Path == b.Path && (methodCovers(b.Method, a.Method) || methodCovers(a.Method, b.Method))
}

// denyRules compares deny rules: a new one narrows, a removed one widens.
func (d *differ) denyRules(bu, hu *epUnit) {
	bset, hset := denyIndex(bu.ep), denyIndex(hu.ep)
	for k, i := range hset {
		if _, ok := bset[k]; !ok {
			d.denyRuleAdded(hu, i)
		}
	}
	for k, i := range bset {
		if _, ok := hset[k]; !ok {
			d.denyRuleRemoved(bu, hu, i)
		}
	}
}

// denyIndex maps each deny rule's label to its (last) index.
func denyIndex(ep *openshell.Endpoint) map[string]int {
	idx := map[string]int{}
	for i := range ep.DenyRules {
		idx[ruleLabel(&ep.DenyRules[i])] = i
	}
	return idx
}

// denyRuleAdded reports the i-th deny rule of the head endpoint u as a
// narrowing.
func (d *differ) denyRuleAdded(u *epUnit, i int) {
	k := ruleLabel(&u.ep.DenyRules[i])
	d.add(Change{Action: ActionNarrow, Kind: "deny_rule", Policy: u.policy, Host: u.ep.Host, Port: firstPort(u.ports()),
		After: "deny " + k, Risk: RiskInfo, From: sourcesFor(d.h, fmt.Sprintf("%s.deny_rules[%d]", u.path, i)), order: epOrder(u, "2"+k)})
}

// denyRuleRemoved grades the removal of the i-th deny rule of the base
// endpoint bu: what it refused is allowed again.
func (d *differ) denyRuleRemoved(bu, hu *epUnit, i int) {
	m := &bu.ep.DenyRules[i]
	k := ruleLabel(m)
	c := d.add(Change{Action: ActionWiden, Kind: "deny_rule", Policy: hu.policy, Host: hu.ep.Host, Port: firstPort(hu.ports()),
		Before: "deny " + k, From: sourcesFor(d.b, fmt.Sprintf("%s.deny_rules[%d]", bu.path, i)), order: epOrder(hu, "2"+k)})
	c.apply(grade{RiskMedium, "", "requests a deny rule refused are allowed again"})
	if prover.IsWriteMethod(m.Method) || m.Method == "*" {
		c.apply(grade{RiskHigh, prover.CapabilityExpansion, "a write method the deny rule refused"})
	}
}
