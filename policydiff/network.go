package policydiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/prover"
)

// network compares endpoints (with their rules) and binaries, policy by
// policy.
func (d *differ) network() {
	bes, hes := endpoints(d.b.Policy), endpoints(d.h.Policy)
	matched := map[*epUnit]bool{}
	newEps := d.pairByKey(bes, hes, matched)
	// An endpoint whose ports changed pairs with the base endpoint of the
	// same policy, host and path.
	for _, hu := range newEps {
		pair := unmatchedSameHost(bes, matched, hu)
		if pair == nil {
			d.endpointAdded(hu)
			continue
		}
		matched[pair] = true
		d.endpointPair(pair, hu)
	}
	for _, bu := range bes {
		if !matched[bu] {
			d.endpointRemoved(bu)
		}
	}
	d.binaries()
}

// pairByKey compares each head endpoint with the unmatched base endpoint
// of the same key (policy, host, path and ports), marking the base one
// matched, and returns the head endpoints left without one.
func (d *differ) pairByKey(bes, hes []*epUnit, matched map[*epUnit]bool) []*epUnit {
	bByKey := map[string]*epUnit{}
	for _, u := range bes {
		bByKey[u.key()] = u
	}
	var newEps []*epUnit
	for _, hu := range hes {
		if bu, ok := bByKey[hu.key()]; ok && !matched[bu] {
			matched[bu] = true
			d.endpointPair(bu, hu)
			continue
		}
		newEps = append(newEps, hu)
	}
	return newEps
}

// unmatchedSameHost returns the first unmatched base endpoint with the
// policy, host and path of hu, or nil.
func unmatchedSameHost(bes []*epUnit, matched map[*epUnit]bool, hu *epUnit) *epUnit {
	i := slices.IndexFunc(bes, func(bu *epUnit) bool { return !matched[bu] && bu.hostKey() == hu.hostKey() })
	if i < 0 {
		return nil
	}
	return bes[i]
}

// endpointRemoved reports a base endpoint the head no longer has.
func (d *differ) endpointRemoved(bu *epUnit) {
	d.add(Change{Action: ActionRemove, Kind: "endpoint", Policy: bu.policy, Host: bu.ep.Host, Port: firstPort(bu.ports()),
		Before: bu.label(), Risk: RiskInfo, From: sourcesFor(d.b, bu.path), order: epOrder(bu, "")})
}

func firstPort(ps []int) int {
	if len(ps) == 0 {
		return 0
	}
	return ps[0]
}

// epOrder sorts changes by policy, host, port, then the unit within.
func epOrder(u *epUnit, sub string) string {
	return fmt.Sprintf("2%s\x00%s\x00%s\x00%s", u.policy, strings.ToLower(u.ep.Host), portsString(u.ports()), sub)
}

func (d *differ) endpointChange(u *epUnit, action, field, before, after string) *Change {
	return d.add(Change{Action: action, Kind: "endpoint", Field: field, Policy: u.policy, Host: u.ep.Host, Port: firstPort(u.ports()),
		Before: before, After: after, From: sourcesFor(d.h, u.path), order: epOrder(u, "0"+field)})
}

// endpointAdded reports a new endpoint and every rule in it.
func (d *differ) endpointAdded(u *epUnit) {
	ep := u.ep
	c := d.add(Change{Action: ActionAdd, Kind: "endpoint", Policy: u.policy, Host: ep.Host, Port: firstPort(u.ports()), After: endpointDesc(u),
		From: sourcesFor(d.h, u.path), order: epOrder(u, "")})
	c.apply(grade{RiskMedium, "", "a new host the agent can reach"})
	c.apply(hostGrades(ep.Host)...)
	c.apply(portGrades(u.ports())...)
	c.apply(allowedIPGrades(ep.Host, ep.AllowedIPs)...)
	if ep.Enforcement == openshell.EnforcementAudit {
		c.apply(auditGrade)
	}
	d.credentialedTransport(c, ep)
	d.credentialScope(c, ep, u.ports())
	if ep.Access != "" {
		c.apply(accessGrade(ep.Access))
	}
	c.apply(d.policyGrades(u, d.h)...)
	for i := range ep.Rules {
		d.ruleAdded(u, i, true)
	}
	for i := range ep.DenyRules {
		d.denyRuleAdded(u, i)
	}
}

// endpointDesc describes a new endpoint by its settings: the ports when
// more than one, the path, the protocol (or L4), the access preset and the
// allowed_ips.
func endpointDesc(u *epUnit) string {
	ep := u.ep
	var parts []string
	if len(u.ports()) > 1 {
		parts = append(parts, "ports "+portsString(u.ports()))
	}
	if ep.Path != "" {
		parts = append(parts, "path "+ep.Path)
	}
	if ep.Protocol != "" {
		parts = append(parts, "protocol "+ep.Protocol)
	} else {
		parts = append(parts, "L4 (no protocol)")
	}
	if ep.Access != "" {
		parts = append(parts, "access "+ep.Access)
	}
	if len(ep.AllowedIPs) > 0 {
		parts = append(parts, "allowed_ips "+strings.Join(ep.AllowedIPs, ","))
	}
	return strings.Join(parts, " ")
}

// auditGrade grades enforcement: audit.
var auditGrade = grade{RiskCritical, CatAudit, "audit forwards the requests the rules would deny"}

// accessGrade grades an access preset the agent gains: read-only opens
// every read path, any other preset write methods on every path.
func accessGrade(access string) grade {
	if access == openshell.AccessReadOnly {
		return grade{RiskMedium, "", "access: read-only allows every GET, HEAD and OPTIONS path"}
	}
	return grade{RiskHigh, prover.CapabilityExpansion, "access: " + access + " allows write methods on every path"}
}

// credentialedTransport grades an endpoint whose traffic to a credentialed
// host is not inspected (B.4: tls: skip or raw L4 on a credentialed
// endpoint; OpenShell refuses the tunnel unless allow_uninspected_credentials
// opts in, proxy.rs:2024-2066 @ v0.0.111).
func (d *differ) credentialedTransport(c *Change, ep *openshell.Endpoint) {
	if !d.hCreds.Credentialed(ep.Host) {
		return
	}
	raw := ep.Protocol == "" || (ep.Protocol == openshell.ProtocolTCP && len(ep.Rules) == 0)
	if raw || ep.TLS == openshell.TLSSkip {
		c.apply(grade{RiskCritical, prover.L7BypassCredentialed, "traffic to a host that holds credentials is not inspected (raw L4 or tls: skip)"})
	}
	if ep.AllowUninspectedCredentials {
		c.apply(grade{RiskHigh, CatUninspectedCrd, "credentialed traffic may pass uninspected"})
	}
}

// policyGrades grades a new reach for every binary of the policy: a
// credentialed host newly reached by the policy's binaries.
func (d *differ) policyGrades(u *epUnit, a *Agent) []grade {
	var out []grade
	if d.hCreds.Credentialed(u.ep.Host) && len(a.Policy.NetworkPolicies[u.policy].Binaries) > 0 {
		out = append(out, grade{RiskHigh, prover.CredentialReachExpansion, "the policy's binaries gain reach to a host that holds credentials"})
	}
	return append(out, forgeWriteGrades(sourcesFor(a, u.path))...)
}

// endpointPair compares two endpoints that are the same grant unit: each
// setting in turn, then the origin, then the rules.
func (d *differ) endpointPair(bu, hu *epUnit) {
	d.pairPorts(bu, hu)
	be, he := bu.ep, hu.ep
	if be.Protocol != he.Protocol {
		d.pairProtocol(hu, be, he)
	}
	if be.Enforcement != he.Enforcement {
		d.pairEnforcement(hu, be, he)
	}
	if be.Access != he.Access {
		d.pairAccess(hu, be, he)
	}
	if be.TLS != he.TLS {
		d.pairTLS(hu, be, he)
	}
	if !slices.Equal(sortedCopy(be.AllowedIPs), sortedCopy(he.AllowedIPs)) {
		d.pairAllowedIPs(hu, be, he)
	}
	d.pairSwitches(hu, be, he)
	d.pairOther(bu, hu)
	d.rules(bu, hu)
}

// pairPorts grades a change of ports: fewer narrows, others widen.
func (d *differ) pairPorts(bu, hu *epUnit) {
	bp, hp := portsString(bu.ports()), portsString(hu.ports())
	if bp == hp {
		return
	}
	bs, hs := bu.ports(), hu.ports()
	newPorts := []int{}
	for _, p := range hs {
		if !slices.Contains(bs, p) {
			newPorts = append(newPorts, p)
		}
	}
	c := d.endpointChange(hu, ActionChange, "ports", bp, hp)
	switch {
	case len(newPorts) == 0:
		c.Action, c.Risk = ActionNarrow, RiskInfo
	case len(newPorts) == len(hs) || len(bs) == 0:
		c.apply(grade{RiskMedium, "", "the agent reaches the host on another port"})
	default:
		c.Action = ActionWiden
		c.apply(grade{RiskMedium, "", "a port added"})
	}
	c.apply(portGrades(newPorts)...)
	if len(newPorts) > 0 {
		c.apply(d.policyGrades(hu, d.h)...)
		d.credentialScope(c, hu.ep, newPorts)
	}
}

// pairProtocol grades a change of protocol: losing L7 inspection widens.
func (d *differ) pairProtocol(hu *epUnit, be, he *openshell.Endpoint) {
	c := d.endpointChange(hu, ActionChange, "protocol", orNone(be.Protocol), orNone(he.Protocol))
	switch {
	case he.Protocol == "" || (he.Protocol == openshell.ProtocolTCP && be.Protocol != ""):
		c.Action = ActionWiden
		c.apply(grade{RiskMedium, "", "requests are no longer inspected at L7"})
		d.credentialedTransport(c, he)
	case be.Protocol == "" || be.Protocol == openshell.ProtocolTCP:
		c.Action, c.Risk = ActionNarrow, RiskInfo
	default:
		c.apply(grade{RiskLow, "", "another L7 protocol parses the requests"})
	}
}

// pairEnforcement grades a change of enforcement: audit widens.
func (d *differ) pairEnforcement(hu *epUnit, be, he *openshell.Endpoint) {
	c := d.endpointChange(hu, ActionChange, "enforcement", orNone(be.Enforcement), orNone(he.Enforcement))
	if he.Enforcement == openshell.EnforcementAudit {
		c.Action = ActionWiden
		c.apply(auditGrade)
	} else {
		c.Action, c.Risk = ActionNarrow, RiskInfo
	}
}

// pairAccess grades a change of access preset by its rank.
func (d *differ) pairAccess(hu *epUnit, be, he *openshell.Endpoint) {
	c := d.endpointChange(hu, ActionChange, "access", orNone(be.Access), orNone(he.Access))
	if accessRank[he.Access] <= accessRank[be.Access] {
		c.Action, c.Risk = ActionNarrow, RiskInfo
		return
	}
	c.Action = ActionWiden
	c.apply(accessGrade(he.Access))
}

// pairTLS grades a change of tls: skip widens.
func (d *differ) pairTLS(hu *epUnit, be, he *openshell.Endpoint) {
	c := d.endpointChange(hu, ActionChange, "tls", orNone(be.TLS), orNone(he.TLS))
	switch {
	case he.TLS == openshell.TLSSkip:
		c.Action = ActionWiden
		c.apply(grade{RiskMedium, "", "TLS is not terminated: requests are not inspected"})
		d.credentialedTransport(c, he)
	case be.TLS == openshell.TLSSkip:
		c.Action, c.Risk = ActionNarrow, RiskInfo
	default:
		c.apply(grade{RiskLow, "", ""})
	}
}

// pairAllowedIPs grades a change of allowed_ips.
func (d *differ) pairAllowedIPs(hu *epUnit, be, he *openshell.Endpoint) {
	add, rem := added(be.AllowedIPs, he.AllowedIPs), added(he.AllowedIPs, be.AllowedIPs)
	c := d.endpointChange(hu, ActionChange, "allowed_ips", strings.Join(be.AllowedIPs, ","), strings.Join(he.AllowedIPs, ","))
	switch {
	case len(add) == 0:
		c.Action, c.Risk = ActionNarrow, RiskInfo
	case len(rem) == 0:
		c.Action = ActionWiden
	}
	c.apply(grade{RiskMedium, "", "the host may resolve to other addresses"})
	c.apply(allowedIPGrades(he.Host, add)...)
}

// pairSwitches grades the boolean settings: turning one on widens.
func (d *differ) pairSwitches(hu *epUnit, be, he *openshell.Endpoint) {
	for _, sw := range []struct {
		field  string
		b, h   bool
		widens grade
	}{
		{"allow_encoded_slash", be.AllowEncodedSlash, he.AllowEncodedSlash,
			grade{RiskMedium, "", "%2F in a path no longer fails the request"}},
		{"allow_uninspected_credentials", be.AllowUninspectedCredentials, he.AllowUninspectedCredentials,
			grade{RiskHigh, CatUninspectedCrd, "credentialed traffic may pass uninspected"}},
	} {
		if sw.b == sw.h {
			continue
		}
		c := d.endpointChange(hu, ActionNarrow, sw.field, strconv.FormatBool(sw.b), strconv.FormatBool(sw.h))
		c.Risk = RiskInfo
		if sw.h {
			c.Action, c.Risk = ActionWiden, ""
			c.apply(sw.widens)
		}
	}
}

// pairOther grades the credential binding, the other settings and a change
// of origin (the unit's sources).
func (d *differ) pairOther(bu, hu *epUnit) {
	be, he := bu.ep, hu.ep
	if bb, hb := bindingOf(be), bindingOf(he); bb != hb {
		c := d.endpointChange(hu, ActionChange, "credential_binding", orNone(bb), orNone(hb))
		c.apply(grade{RiskMedium, "", "another provider's credentials are attached"})
		d.credentialScope(c, he, hu.ports())
	}
	if bo, ho := otherSettings(be), otherSettings(he); bo != ho {
		c := d.endpointChange(hu, ActionChange, "settings", bo, ho)
		c.apply(grade{RiskLow, "", "other endpoint settings"})
	}
	if bs, hs := sourcesFor(d.b, bu.path), sourcesFor(d.h, hu.path); !sameOrigin(bs, hs) {
		c := d.endpointChange(hu, ActionMove, "", bu.label(), hu.label())
		c.Risk, c.Was = RiskInfo, bs
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func bindingOf(ep *openshell.Endpoint) string {
	if ep.CredentialBinding == nil {
		return ""
	}
	return ep.CredentialBinding.Provider
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

// otherSettings renders the endpoint settings no other field compares.
func otherSettings(ep *openshell.Endpoint) string {
	c := *ep
	c.Host, c.Path, c.Port, c.Ports, c.Protocol, c.TLS, c.Enforcement, c.Access = "", "", 0, nil, "", "", "", ""
	c.Rules, c.DenyRules, c.AllowedIPs, c.AllowEncodedSlash, c.AllowUninspectedCredentials, c.CredentialBinding = nil, nil, nil, false, false, nil
	if b := literalJSON(c); b != "{}" {
		return b
	}
	return ""
}

// literalJSON encodes v as compact JSON without HTML escaping: values are
// shown as written (renderers escape for their format).
func literalJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// attachProver runs OpenShell's prover on both policies and attaches each
// path of its delta (finding_delta) to the change that explains it: the
// binary added to the path's policy, else a rule added or widened on its
// endpoint, else a change of the endpoint, else any change of the policy;
// a path no change explains becomes a change of kind reach.
func (d *differ) attachProver() {
	reg := d.opts.Registry
	delta := prover.Delta(prover.Check(d.b.Policy, d.bCreds, reg), prover.Check(d.h.Policy, d.hCreds, reg))
	for _, p := range prover.Paths(delta) {
		i := d.explain(p)
		if i < 0 {
			d.add(Change{Action: ActionAdd, Kind: "reach", Policy: p.Policy, Host: p.Host, Port: p.Port, After: p.String(),
				From: nil, order: fmt.Sprintf("2%s\x00%s\x00%d\x00\xfe", p.Policy, strings.ToLower(p.Host), p.Port)})
			i = len(d.changes) - 1
		}
		c := &d.changes[i]
		c.Prover = append(c.Prover, p)
		c.apply(proverGrade(p))
		if c.Kind == "reach" {
			c.apply(grade{category: p.Category, why: p.Mechanism})
		}
	}
}

// explain returns the index of the change that explains a prover path,
// by the first of explainers any change satisfies, or -1.
func (d *differ) explain(p prover.Path) int {
	for _, explains := range explainers {
		for i := range d.changes {
			if explains(&d.changes[i], p) {
				return i
			}
		}
	}
	return -1
}

// explainers are the ways a change explains a prover path, most specific
// first.
var explainers = []func(c *Change, p prover.Path) bool{explainsByBinary, explainsByRule, explainsByEndpoint, explainsByPolicy}

// explainsByBinary: the path's binary added to its policy.
func explainsByBinary(c *Change, p prover.Path) bool {
	return c.Kind == "binary" && c.Action == ActionAdd && c.Policy == p.Policy && c.After == p.Binary
}

// explainsByRule: a rule added or widened on the path's host, allowing its
// method when it has one.
func explainsByRule(c *Change, p prover.Path) bool {
	return c.Kind == "rule" && (c.Action == ActionAdd || c.Action == ActionWiden) && c.Policy == p.Policy &&
		strings.EqualFold(c.Host, p.Host) && (p.Method == "" || strings.HasPrefix(c.After, "allow "+p.Method+" "))
}

// explainsByEndpoint: a change (not a removal or move) of the path's
// endpoint.
func explainsByEndpoint(c *Change, p prover.Path) bool {
	return c.Kind == "endpoint" && strings.EqualFold(c.Host, p.Host) && explainsByPolicy(c, p)
}

// explainsByPolicy: any change (not a removal or move) of the path's
// policy.
func explainsByPolicy(c *Change, p prover.Path) bool {
	return c.Policy == p.Policy && c.Action != ActionRemove && c.Action != ActionMove
}
