package policydiff

import (
	"fmt"
	"strings"

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
	if prover.IsWriteMethod(m.Method) || m.Method == "*" || (m.Method == "" && m.OperationType == "mutation") {
		c.apply(grade{RiskHigh, prover.CapabilityExpansion, "a write method: the agent can change state with the credentials it holds"})
	}
	if beforePath != "" && pathWidenedAcrossPlaceholder(beforePath, m.Path) {
		c.apply(grade{RiskHigh, CatPathWidened, "the path now matches far more than the placeholder allowed"})
	} else if beforePath == "" && (m.Path == "**" || strings.HasSuffix(m.Path, "/**")) && !newEndpoint {
		c.apply(grade{RiskMedium, CatPathWidened, "a recursive path"})
	}
	for _, s := range c.From {
		if strings.Contains(s.Reason, "profile forge-write") {
			c.apply(grade{RiskHigh, CatForgeWrite, "profile forge-write: comments and labels on the forge"})
		}
	}
}

// rules compares the allow and deny rules of two paired endpoints.
func (d *differ) rules(bu, hu *epUnit) {
	bs, hs := allowRules(bu.ep), allowRules(hu.ep)
	bByKey := map[string]ruleUnit{}
	for _, r := range bs {
		bByKey[r.key()] = r
	}
	hKeys := map[string]bool{}
	var newRules []ruleUnit
	for _, hr := range hs {
		hKeys[hr.key()] = true
		br, ok := bByKey[hr.key()]
		if !ok {
			newRules = append(newRules, hr)
			continue
		}
		bsrc := sourcesFor(d.b, fmt.Sprintf("%s.rules[%d]", bu.path, br.i))
		hsrc := sourcesFor(d.h, fmt.Sprintf("%s.rules[%d]", hu.path, hr.i))
		if !sameOrigin(bsrc, hsrc) {
			d.add(Change{Action: ActionMove, Kind: "rule", Policy: hu.policy, Host: hu.ep.Host, Port: firstPort(hu.ports()),
				Before: "allow " + ruleLabel(br.m), After: "allow " + ruleLabel(hr.m), Risk: RiskInfo, Categories: []string{},
				Why: "the same grant, declared elsewhere", From: hsrc, Was: bsrc, order: epOrder(hu, "1"+ruleLabel(hr.m))})
		}
	}
	var gone []ruleUnit
	for _, br := range bs {
		if !hKeys[br.key()] {
			gone = append(gone, br)
		}
	}
	used := map[int]bool{}
	for _, hr := range newRules {
		j := pairRule(gone, used, hr)
		if j < 0 {
			d.ruleAdded(hu, hr.i, false)
			continue
		}
		used[j] = true
		br := gone[j]
		c := d.add(Change{Kind: "rule", Policy: hu.policy, Host: hu.ep.Host, Port: firstPort(hu.ports()),
			Before: "allow " + ruleLabel(br.m), After: "allow " + ruleLabel(hr.m),
			From: sourcesFor(d.h, fmt.Sprintf("%s.rules[%d]", hu.path, hr.i)), Was: sourcesFor(d.b, fmt.Sprintf("%s.rules[%d]", bu.path, br.i)),
			order: epOrder(hu, "1"+ruleLabel(hr.m))})
		wider := covers(hr.m.Path, br.m.Path) && methodCovers(hr.m.Method, br.m.Method)
		narrower := covers(br.m.Path, hr.m.Path) && methodCovers(br.m.Method, hr.m.Method)
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
	for j, br := range gone {
		if used[j] {
			continue
		}
		d.add(Change{Action: ActionRemove, Kind: "rule", Policy: bu.policy, Host: bu.ep.Host, Port: firstPort(bu.ports()),
			Before: "allow " + ruleLabel(br.m), Risk: RiskInfo, From: sourcesFor(d.b, fmt.Sprintf("%s.rules[%d]", bu.path, br.i)),
			order: epOrder(hu, "1"+ruleLabel(br.m))})
	}
	d.denyRules(bu, hu)
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
		sameMethod := strings.EqualFold(br.m.Method, hr.m.Method)
		samePath := br.m.Path == hr.m.Path
		switch {
		case sameMethod && (covers(hr.m.Path, br.m.Path) || covers(br.m.Path, hr.m.Path)):
			return j
		case samePath && (methodCovers(hr.m.Method, br.m.Method) || methodCovers(br.m.Method, hr.m.Method)):
			return j
		case sameMethod && similar(br.m.Path, hr.m.Path) && best < 0:
			best = j
		}
	}
	return best
}

// denyRules compares deny rules: a new one narrows, a removed one widens.
func (d *differ) denyRules(bu, hu *epUnit) {
	key := func(m *openshell.Match) string { return ruleLabel(m) }
	bset, hset := map[string]int{}, map[string]int{}
	for i := range bu.ep.DenyRules {
		bset[key(&bu.ep.DenyRules[i])] = i
	}
	for i := range hu.ep.DenyRules {
		hset[key(&hu.ep.DenyRules[i])] = i
	}
	for k, i := range hset {
		if _, ok := bset[k]; !ok {
			d.add(Change{Action: ActionNarrow, Kind: "deny_rule", Policy: hu.policy, Host: hu.ep.Host, Port: firstPort(hu.ports()),
				After: "deny " + k, Risk: RiskInfo, From: sourcesFor(d.h, fmt.Sprintf("%s.deny_rules[%d]", hu.path, i)), order: epOrder(hu, "2"+k)})
		}
	}
	for k, i := range bset {
		if _, ok := hset[k]; !ok {
			c := d.add(Change{Action: ActionWiden, Kind: "deny_rule", Policy: hu.policy, Host: hu.ep.Host, Port: firstPort(hu.ports()),
				Before: "deny " + k, From: sourcesFor(d.b, fmt.Sprintf("%s.deny_rules[%d]", bu.path, i)), order: epOrder(hu, "2"+k)})
			c.apply(grade{RiskMedium, "", "requests a deny rule refused are allowed again"})
			if prover.IsWriteMethod(bu.ep.DenyRules[i].Method) || bu.ep.DenyRules[i].Method == "*" {
				c.apply(grade{RiskHigh, prover.CapabilityExpansion, "a write method the deny rule refused"})
			}
		}
	}
}
