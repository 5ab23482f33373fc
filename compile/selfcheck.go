package compile

import (
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// The self-check: before a policy ships, the decision engine
// (decide.Decide) runs on the requests each of its rules is written for,
// and on the requests its catalog profiles name (intended:), so that a glob
// whose meaning under OpenShell's matching differs from the author's intent
// is caught at compile time, positioned at the rule.
//
// OpenShell matches rule globs with glob.match: for paths "/" is the
// delimiter, so "*" never crosses it and "**" spans segments only as a whole
// segment ("/files/**.json" does not match /files/a/b.json); for query
// values "." is a delimiter, so `q: "repo:o/r *"` denies a search for
// "foo.bar", and so does "repo:o/r **" ("**" is recursive only as a whole
// dot-separated part); "repo:o/r {*,*.**}" matches any text. The sample request of a rule reads each glob as
// its author most likely meant it: "*" in a path as one segment with a dot
// in it, "**" as several segments, "*" and "**" in a query value as text
// with dots.

// Sample values the self-check puts where a rule has a glob.
const (
	samplePathStar   = "x.y"
	samplePathStars  = "a/b.c"
	sampleQueryValue = "foo.bar"
)

// selfCheck runs the decision engine on every rule's intended request and
// on the intended requests of the profiles the agent pulled in; a denial is
// an error at the rule (or profile) that intends it.
func (b *builder) selfCheck(pol *openshell.Policy) {
	p := pol.Clone()
	if _, err := openshell.ApplyPlaceholders(p, placeholder.Examples()); err != nil {
		return // reported by the compile itself
	}
	// One decider for every request: preparing one compiles all of the
	// policy's globs, as decide.Decide would for each request.
	allow := decider(p)
	for _, key := range p.PolicyKeys() {
		b.checkRules(allow, key, p.NetworkPolicies[key])
	}
	b.checkIntended(allow)
	b.checkMCPIntended(allow)
}

// checkRules runs allow on the request every L7 rule of the network policy
// key is written for, from the policy's first literal binary; a denial is
// an error at the rule.
func (b *builder) checkRules(allow func(*decide.Request) decide.Decision, key string, np openshell.NetworkPolicy) {
	bin := firstBinary(np)
	if bin == "" {
		return
	}
	for i := range np.Endpoints {
		ep := &np.Endpoints[i]
		if !openshell.IsL7(ep) {
			continue
		}
		for j, rule := range ep.Rules {
			r, ok := ruleSample(ep, &rule.Allow, bin)
			if !ok {
				continue
			}
			if d := allow(r); !d.Allowed {
				b.errorf(b.rulePos(rule), "", globHint(&rule.Allow),
					"%s on %s would deny the request it is written for, %s: %s (network_policies.%s.endpoints[%d].rules[%d])",
					ruleLabel(rule.Allow), ep.Host, r, d.Reason, key, i, j)
			}
		}
	}
}

// rulePos is where a rule was written: its first source, else the agent's
// file.
func (b *builder) rulePos(r openshell.Rule) agentdef.Pos {
	if len(r.From) > 0 {
		return posOf(r.From[0])
	}
	return agentdef.Pos{File: b.agent.File}
}

// decider returns decide.Decide on p with the decider prepared once; p
// must not change while it is used.
func decider(p *openshell.Policy) func(*decide.Request) decide.Decision {
	d, err := decide.New(p, openshell.DefaultOpenShellVersion)
	return func(r *decide.Request) decide.Decision {
		if err != nil {
			return decide.Decision{Reason: err.Error()}
		}
		return d.Decide(r)
	}
}

// checkIntended runs the intended requests of the catalog profiles the
// agent pulled in (git fetch without .git, a search with dots, a regional
// model host) with allow, on the example-expanded policy.
func (b *builder) checkIntended(allow func(*decide.Request) decide.Decision) {
	for _, u := range b.profilesUsed {
		for _, text := range b.cat.Profiles[u.name].Intended {
			b.checkIntendedRequest(allow, u, text)
		}
	}
}

// checkIntendedRequest runs allow on one intended request of the profile
// use u, from its first binary; a request the catalog cannot spell, or
// the policy denies, is an error where the agent pulled the profile in.
func (b *builder) checkIntendedRequest(allow func(*decide.Request) decide.Decision, u profileUse, text string) {
	if strings.Contains(text, " graphql ") && !openshell.Supports(openshell.FeatureProtocolGraphQL, b.version) {
		return // left out with a warning (supportsEndpoint)
	}
	expanded, ok := withExamples(text, b.values)
	if !ok {
		b.errorf(u.at, "sandbox.profiles", "fix the intended request in the catalog", "profile %s: intended request %q has an unknown placeholder", u.name, text)
		return
	}
	if len(u.bins) == 0 {
		return
	}
	r, err := decide.ParseRequest(expanded + " from " + u.bins[0])
	if err != nil {
		b.errorf(u.at, "sandbox.profiles", "fix the intended request in the catalog", "profile %s: intended request %q: %v", u.name, text, err)
		return
	}
	if d := allow(r); !d.Allowed {
		b.errorf(u.at, "sandbox.profiles", "the profile's rules must allow what it says it is for; fix its globs",
			"profile %s intends %s, which the compiled policy denies: %s", u.name, r, d.Reason)
	}
}

// profileUse records a profile the agent pulled in, where, and for which
// binaries.
type profileUse struct {
	name string
	at   agentdef.Pos
	bins []string
}

// withExamples replaces every placeholder of s with its compile-time value
// (--set), else its example value, as the self-check's policy has them (an
// intended request names hosts and paths alike).
func withExamples(s string, values placeholder.Values) (string, bool) {
	refs, err := placeholder.Find(s)
	if err != nil {
		return "", false
	}
	ex := placeholder.Examples()
	for k, v := range values {
		ex[k] = v
	}
	var out strings.Builder
	last := 0
	for _, r := range refs {
		v, ok := ex[r.Name]
		if !ok {
			return "", false
		}
		out.WriteString(s[last:r.Start])
		out.WriteString(v)
		last = r.End
	}
	out.WriteString(s[last:])
	return out.String(), true
}

func firstBinary(np openshell.NetworkPolicy) string {
	for _, b := range np.Binaries {
		if !strings.ContainsAny(b.Path, "*?[") {
			return b.Path
		}
	}
	return ""
}

// ruleSample builds the request a rule is written for; false when the rule
// has globs the sampler does not read (classes, alternatives).
func ruleSample(ep *openshell.Endpoint, m *openshell.Match, bin string) (*decide.Request, bool) {
	r, ok := endpointSample(ep, bin)
	if !ok {
		return nil, false
	}
	if m.OperationType != "" {
		return graphQLSample(r, ep, m)
	}
	return restSample(r, m)
}

// endpointSample is the request to ep from bin before any rule is read:
// a host with its wildcards filled in, the first port, the scheme that port
// implies and the address the endpoint pins; false when the host is empty
// or keeps a glob the sampler does not fill.
func endpointSample(ep *openshell.Endpoint, bin string) (*decide.Request, bool) {
	host := hostWildcards.Replace(ep.Host)
	if host == "" || strings.ContainsAny(host, "*{}") {
		return nil, false
	}
	port := endpointPort(*ep)
	r := &decide.Request{Scheme: "https", Host: host, Port: port, Binary: bin, Addr: sampleAddr(ep, host)}
	if slices.Contains(httpPorts, port) {
		r.Scheme = "http"
	}
	return r, true
}

// hostWildcards fills a host's leading wildcard labels in for a sample.
var hostWildcards = strings.NewReplacer("**.", "a.", "*.", "a.")

// httpPorts are the ports a sample request speaks plain http to.
var httpPorts = []int{80, 8080, 8081, 8082}

// sampleAddr is the address a sample request to ep reaches: the first
// allowed_ips entry (a prefix's own address), else host when it is an IP
// address; the zero Addr when neither is.
func sampleAddr(ep *openshell.Endpoint, host string) netip.Addr {
	var addr netip.Addr
	if len(ep.AllowedIPs) > 0 {
		if pfx, err := netip.ParsePrefix(ep.AllowedIPs[0]); err == nil {
			addr = pfx.Addr()
		} else if a, err := netip.ParseAddr(ep.AllowedIPs[0]); err == nil {
			addr = a
		}
	}
	if a, err := netip.ParseAddr(host); err == nil && !addr.IsValid() {
		addr = a
	}
	return addr
}

// graphQLSample makes r the GraphQL operation a GraphQL rule m is written
// for: a POST to the endpoint's path (else /graphql) carrying one operation
// of m's type, name and first field.
func graphQLSample(r *decide.Request, ep *openshell.Endpoint, m *openshell.Match) (*decide.Request, bool) {
	r.Method, r.Path = "POST", ep.Path
	if r.Path == "" || strings.ContainsAny(r.Path, "*?[") {
		r.Path = "/graphql"
	}
	op := decide.GraphQLOp{Type: m.OperationType}
	if op.Type == "*" {
		op.Type = "query"
	}
	if m.OperationName != "" {
		op.Name = strings.ReplaceAll(m.OperationName, "*", "X")
	}
	if len(m.Fields) > 0 {
		op.Fields = []string{strings.ReplaceAll(m.Fields[0], "*", "x")}
	} else {
		op.Fields = []string{"viewer"}
	}
	r.GraphQL = []decide.GraphQLOp{op}
	return r, !strings.ContainsAny(m.OperationName+strings.Join(m.Fields, ""), "?[{")
}

// restSample makes r the HTTP request a method-and-path rule m is written
// for, its path and query globs read as meant (samplePath, sampleQuery).
func restSample(r *decide.Request, m *openshell.Match) (*decide.Request, bool) {
	if m.Method == "" || m.Path == "" || strings.ContainsAny(m.Path, "[{") {
		return nil, false
	}
	r.Method = strings.ToUpper(m.Method)
	if r.Method == "*" {
		r.Method = "GET"
	}
	r.Path = samplePath(m.Path)
	q, ok := sampleQueryValues(m.Query)
	if !ok {
		return nil, false
	}
	r.Query = q
	return r, true
}

// sampleQueryValues reads a rule's query globs as meant (sampleQuery), an
// any-of by its first glob; nil when there are none, false when a glob
// has a class or alternatives the sampler does not read.
func sampleQueryValues(query map[string]openshell.QueryMatch) (url.Values, bool) {
	var vals url.Values
	for k, q := range query {
		g := q.Glob
		if len(q.Any) > 0 {
			g = q.Any[0]
		}
		if strings.ContainsAny(g, "[{") {
			return nil, false
		}
		if vals == nil {
			vals = url.Values{}
		}
		vals.Set(k, sampleQuery(g))
	}
	return vals, true
}

// samplePath reads a rule path as meant: a whole "**" segment (and "**"
// inside a segment) as several segments, "*" as one segment with a dot.
func samplePath(p string) string {
	if p == "**" {
		return "/" + samplePathStars
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s == "**" {
			segs[i] = samplePathStars
			continue
		}
		s = strings.ReplaceAll(s, "**", "\x00")
		s = strings.ReplaceAll(s, "*", samplePathStar)
		s = strings.ReplaceAll(s, "?", "q")
		segs[i] = strings.ReplaceAll(s, "\x00", samplePathStars)
	}
	return strings.Join(segs, "/")
}

// sampleQuery reads a query glob as meant: "*" and "**" as text with dots.
func sampleQuery(g string) string {
	g = strings.ReplaceAll(g, "**", "\x00")
	g = strings.ReplaceAll(g, "*", sampleQueryValue)
	g = strings.ReplaceAll(g, "?", "q")
	return strings.ReplaceAll(g, "\x00", sampleQueryValue)
}

// globHint explains the OpenShell glob rule a denied sample most likely
// tripped on.
func globHint(m *openshell.Match) string {
	for _, q := range m.Query {
		for _, g := range append([]string{q.Glob}, q.Any...) {
			if strings.Contains(g, "*") && !strings.Contains(g, "{") {
				return "in query values OpenShell's * stops at '.' and ** spans dots only as a whole dot-separated part: write {*,*.**} to match any text with dots (repo:o/r {*,*.**})"
			}
		}
	}
	for _, s := range strings.Split(m.Path, "/") {
		if strings.Contains(s, "**") && s != "**" {
			return "** spans path segments only as a whole segment: write /dir/**/*.json, not /dir/**.json"
		}
	}
	return "check the rule's globs against OpenShell's matching: * stays within a path segment, ** must be a whole segment"
}
