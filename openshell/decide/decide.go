package decide

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// The decision engine follows OpenShell's own evaluation, cited as
// sandbox-policy.rego:LINE (crates/openshell-supervisor-network/data/, line
// numbers @ v0.0.111; v0.0.83 has the same decision rules at other line
// numbers: allow_request :237, request_allowed_for_endpoint :443, path_matches
// :703, _matching_endpoint_configs :862) and l7/FILE:LINE (crates/openshell-supervisor-network/
// src/l7/). Globs are regorus's glob.match (../glob/glob.go).

// Decision is the verdict on one request, with the element that decided it.
type Decision struct {
	Allowed bool `json:"allowed"`
	// Audit is set when an endpoint that is not enforced let through a
	// request its rules deny: OpenShell logs it and allows it.
	Audit  bool   `json:"audit,omitempty"`
	Reason string `json:"reason"`
	// Policy is the network policy key; Path the deciding element, e.g.
	// network_policies.github.endpoints[0].rules[2].
	Policy string `json:"policy,omitempty"`
	Path   string `json:"path,omitempty"`
}

// Verdict renders the decision as allow, deny or audit.
func (d Decision) Verdict() string {
	switch {
	case d.Audit:
		return "audit"
	case d.Allowed:
		return "allow"
	}
	return "deny"
}

// Decider decides requests against one policy for one OpenShell version.
// It is safe for concurrent use once built.
type Decider struct {
	p       *openshell.Policy
	version string
	keys    []string
	// rules holds each endpoint's effective allow rules: its rules, or its
	// access preset expanded (l7/mod.rs:1629 expand_access_presets).
	rules map[*openshell.Endpoint][]openshell.Match
	globs globCache
	// relaxed: binaries are not matched (see RelaxedBinaryIdentity).
	relaxed bool
}

// RelaxedBinaryIdentity returns a Decider for a sandbox whose supervisor
// runs with binary identity relaxed (OPENSHELL network binary identity
// "relaxed", "disabled", "endpoint-only", "false" or "0": opa.rs:95 @
// v0.0.111, opa.rs:68 data.runtime @ v0.0.83): every policy's binaries
// match any process (sandbox-policy.rego:22 binary_identity_required, :143
// binary_allowed), so policies are endpoint/L7 scoped.
func (d *Decider) RelaxedBinaryIdentity() *Decider {
	c := *d
	c.relaxed = true
	return &c
}

// NewDecider prepares p for decisions with the semantics of OpenShell
// version (a supported tag; "" is DefaultOpenShellVersion).
func New(p *openshell.Policy, version string) (*Decider, error) {
	if version == "" {
		version = openshell.DefaultOpenShellVersion
	}
	v, err := openshell.NormalizeVersion(version)
	if err != nil {
		return nil, err
	}
	d := &Decider{p: p, version: v, keys: p.PolicyKeys(), rules: map[*openshell.Endpoint][]openshell.Match{},
		globs: globCache{slash: map[string]*glob.Rego{}, dot: map[string]*glob.Rego{}}}
	for _, k := range d.keys {
		np := p.NetworkPolicies[k]
		for i := range np.Endpoints {
			d.addEndpoint(&p.NetworkPolicies[k].Endpoints[i])
		}
		for _, b := range np.Binaries {
			d.globs.addSlash(b.Path)
		}
	}
	return d, nil
}

// addEndpoint records ep's effective rules and compiles every pattern of
// the endpoint and of its allow and deny rules.
func (d *Decider) addEndpoint(ep *openshell.Endpoint) {
	d.globs.addSlash(ep.Path)
	d.globs.addDot(strings.ToLower(ep.Host))
	d.rules[ep] = effectiveRules(ep)
	for j := range d.rules[ep] {
		d.globs.addMatch(&d.rules[ep][j])
	}
	for j := range ep.DenyRules {
		d.globs.addMatch(&ep.DenyRules[j])
	}
}

// effectiveRules is what Rego sees as endpoint.rules: the rules, or, when
// there are none, the access preset expanded (l7/mod.rs:1580
// access_preset_rules and :1629 expand_access_presets @ v0.0.111; the same
// table @ v0.0.83 l7/mod.rs:1460): websocket read-only is GET only and
// read-write adds WEBSOCKET_TEXT; graphql presets are operation types; an
// MCP endpoint with allow_all_known_mcp_methods and no rules gets method *.
// An unknown preset is ignored with a warning: no rules.
func effectiveRules(ep *openshell.Endpoint) []openshell.Match {
	if len(ep.Rules) > 0 {
		out := make([]openshell.Match, len(ep.Rules))
		for i := range ep.Rules {
			out[i] = ep.Rules[i].Allow
		}
		return out
	}
	proto := ep.Protocol
	if proto == "" {
		proto = openshell.ProtocolREST
	}
	if ep.Access == "" {
		if proto == openshell.ProtocolMCP && allowAllKnownMCP(ep) {
			return []openshell.Match{{Method: "*"}}
		}
		return nil
	}
	return presetRules(proto, ep.Access)
}

// The access presets of effectiveRules: the GraphQL operation types, or
// the methods allowed on every path, of each access level. A websocket
// endpoint has its own read-only and read-write sets and shares full with
// every protocol other than graphql.
var (
	graphqlPresets = map[string][]string{
		openshell.AccessReadOnly:  {"query"},
		openshell.AccessReadWrite: {"query", "mutation"},
		openshell.AccessFull:      {"*"},
	}
	websocketPresets = map[string][]string{
		openshell.AccessReadOnly:  {"GET"},
		openshell.AccessReadWrite: {"GET", "WEBSOCKET_TEXT"},
	}
	methodPresets = map[string][]string{
		openshell.AccessFull:      {"*"},
		openshell.AccessReadOnly:  {"GET", "HEAD", "OPTIONS"},
		openshell.AccessReadWrite: {"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"},
	}
)

// presetRules expands an access preset for a protocol (the table of
// effectiveRules); nil for an unknown preset.
func presetRules(proto, access string) []openshell.Match {
	if ts, ok := graphqlPresets[access]; ok && proto == openshell.ProtocolGraphQL {
		return gqlRules(ts...)
	}
	if ms, ok := websocketPresets[access]; ok && proto == openshell.ProtocolWebsocket {
		return restRules(ms...)
	}
	if ms, ok := methodPresets[access]; ok {
		return restRules(ms...)
	}
	return nil
}

// restRules are the preset rules allowing each method on every path.
func restRules(ms ...string) []openshell.Match {
	out := make([]openshell.Match, len(ms))
	for i, m := range ms {
		out[i] = openshell.Match{Method: m, Path: "**"}
	}
	return out
}

// gqlRules are the preset rules allowing each GraphQL operation type.
func gqlRules(ts ...string) []openshell.Match {
	out := make([]openshell.Match, len(ts))
	for i, t := range ts {
		out[i] = openshell.Match{OperationType: t}
	}
	return out
}

// Decide evaluates a request against a policy with the semantics of the
// default OpenShell version. See Decider.Decide.
func Decide(p *openshell.Policy, r *Request) Decision {
	d, err := New(p, openshell.DefaultOpenShellVersion)
	if err != nil {
		return Decision{Reason: err.Error()}
	}
	return d.Decide(r)
}

// Decide evaluates r as OpenShell's proxy does:
//
//   - always-blocked addresses (openshell.AlwaysBlockedIP) first;
//   - the L4 decision: a policy whose endpoint matches host and port and
//     whose binaries match the process or an ancestor
//     (sandbox-policy.rego:94 network_policy_for_request);
//   - the endpoint configs of the connection: every endpoint with an
//     extended config (protocol other than tcp, allowed_ips or tls) among
//     all matching policies, in policy name order and then endpoint order
//     (sandbox-policy.rego:892 _matching_endpoint_configs, :1028
//     endpoint_has_extended_config; regorus iterates the policy-name set in
//     sorted order). The first one alone decides tls: skip and allowed_ips
//     (query_tls_mode, query_allowed_ips); every one with an L7 protocol
//     takes part in L7 inspection, whatever its own tls (route.go);
//   - the destination check on the resolved address ("at IP"), control-plane
//     ports included (ssrf.go);
//   - with an L7 config and no tls: skip on the first config, every
//     request: path canonicalised (l7/path.rs), then allowed when an
//     endpoint of a matching policy allows it and no deny rule of one
//     denies it (sandbox-policy.rego:270 allow_request, :296 deny_request);
//     enforcement other than "enforce" (the default is audit, l7/mod.rs:209)
//     logs the denial and lets the request through;
//   - with no L7 config and no tls: skip, every request: the passthrough
//     relay's strict HTTP parser, which refuses a path that does not
//     canonicalise (an encoded slash, a `..` above the root) or a query
//     that does not decode (passthrough.go).
//
// A forward-proxy request (r.Forward) follows handle_forward_proxy instead
// (forward.go).
func (d *Decider) Decide(r *Request) Decision {
	// The host as the client sent it, lower-cased: the proxy passes the
	// CONNECT target's host on unchanged (proxy.rs:6106 parse_target @
	// v0.0.111, :4535 @ v0.0.83) and Rego lower()s both sides, so a
	// trailing root dot does not match a policy host written without one.
	host := strings.ToLower(r.Host)
	if r.Forward {
		if deny, ok := d.forwardScheme(r, host); !ok {
			return deny
		}
	}
	dst := newDestination(host, r)
	if dst.alwaysBlocked() {
		return Decision{Reason: fmt.Sprintf("%s is loopback, link-local or unspecified, always blocked by the SSRF guard", dst.addr)}
	}
	ms, hostMatched := d.matchPolicies(host, r)
	if len(ms) == 0 {
		return noPolicy(host, r, hostMatched)
	}
	cfg := firstExtended(ms)
	configs := l7Configs(ms)
	if r.Forward {
		return d.decideForward(ms, cfg, configs, r, host, dst)
	}
	if deny, ok := d.destination(ms, cfg, host, r.Port, dst); !ok {
		return deny
	}
	if deny, ok := d.credentialGuard(ms, r); !ok {
		return deny
	}
	return d.decideRequests(ms, cfg, configs, r)
}

// noPolicy is the denial of a connection no network policy allows:
// hostMatched says an endpoint matched host and port, but not for the
// process or its ancestors.
func noPolicy(host string, r *Request, hostMatched bool) Decision {
	if hostMatched {
		return Decision{Reason: fmt.Sprintf("no network policy for %s:%d allows binary %s", host, r.Port, strings.Join(r.Binaries(), " or its ancestors "))}
	}
	return Decision{Reason: fmt.Sprintf("no network policy allows %s:%d", host, r.Port)}
}

// firstConfig is the endpoint that speaks for the connection: the first
// extended config cfg when there is one, else the first matching endpoint.
func firstConfig(ms []matched, cfg *matched) matched {
	if cfg != nil {
		return *cfg
	}
	return ms[0]
}

// decideRequests decides the requests over an allowed connection: none
// (no method: the connection alone), the raw tunnel of tls: skip, the
// passthrough relay, or L7 inspection.
func (d *Decider) decideRequests(ms []matched, cfg *matched, configs []*matched, r *Request) Decision {
	first := firstConfig(ms, cfg)
	// tls: skip on the first config relays the tunnel raw (query_tls_mode,
	// proxy.rs:2362 and :1153 @ v0.0.83, proxy.rs:3514 and :2171 @
	// v0.0.111); otherwise the L7 configs, if any, inspect it
	// (l7_inspection_active, proxy.rs:354 @ v0.0.83, :1089 @ v0.0.111).
	skip := cfg != nil && cfg.ep.TLS == openshell.TLSSkip
	if r.Method == "" {
		d := Decision{Allowed: true, Policy: first.key, Path: epPath(first.key, first.i),
			Reason: "L4: the connection is allowed"}
		if !skip && len(configs) > 0 {
			d.Reason = "the connection is allowed; requests over it are checked against the L7 rules of " + epPath(configs[0].key, configs[0].i)
		}
		return d
	}
	if skip {
		return Decision{Allowed: true, Policy: first.key, Path: epPath(first.key, first.i),
			Reason: fmt.Sprintf("L4 endpoint %s: the connection is allowed without request inspection (tls: skip: requests are not inspected)", first.ep.Host)}
	}
	if len(configs) == 0 {
		return d.passthrough(first, r)
	}
	return d.inspect(ms, configs, r)
}

// inspect is L7 inspection: the request refused before policy evaluation
// (an SQL stream, a query or path that does not parse), route selection
// among several configs, the hard denials, then the rules.
func (d *Decider) inspect(ms []matched, configs []*matched, r *Request) Decision {
	route := configs[0]
	if deny, ok := sqlStream(configs, r); ok {
		return deny
	}
	if r.QueryError != "" {
		return Decision{Policy: route.key, Path: epPath(route.key, route.i),
			Reason: fmt.Sprintf("request query is rejected before policy evaluation: %s (l7/rest.rs parse_query_params)", r.QueryError)}
	}
	canon, err := canonicalRequestPath(r.Path, anyEncodedSlash(configs), d.version)
	if err != nil {
		return Decision{Policy: route.key, Path: epPath(route.key, route.i),
			Reason: fmt.Sprintf("request path %q is rejected before policy evaluation: %v (l7/path.rs canonicalize_request_target)", r.Path, err)}
	}
	if len(configs) > 1 {
		sel, deny, ok := d.selectRoute(configs, route, canon, r)
		if !ok {
			return deny
		}
		route = sel
	}
	if deny, ok := hardDeny(route, r); ok {
		return deny
	}
	return d.decideL7(ms, route, r, canon)
}

// selectRoute picks the config that handles canon among several.
func (d *Decider) selectRoute(configs []*matched, route *matched, canon string, r *Request) (*matched, Decision, bool) {
	// Route selection (l7/relay.rs:506 relay_with_route_selection @
	// v0.0.111, :230 @ v0.0.83; proxy/relay.rs:250 with more than one
	// config): the request is canonicalised with allow_encoded_slash if
	// any config opts in, then the config whose endpoint path matches
	// most specifically handles it (relay.rs:924).
	sel := selectConfigForPath(configs, canon)
	if sel == nil {
		return nil, Decision{Policy: route.key, Path: epPath(route.key, route.i),
			Reason: fmt.Sprintf("no L7 endpoint path matched request %s (l7/relay.rs route selection)", canon)}, false
	}
	// v0.0.111 re-checks the opt-in against the selected config
	// (relay.rs:572-584); v0.0.83 lets one endpoint's opt-in cover
	// every endpoint on the host:port.
	if d.encodedSlashRefused(sel, canon) {
		return nil, Decision{Policy: sel.key, Path: epPath(sel.key, sel.i),
			Reason: fmt.Sprintf("request path %q: %v (l7/relay.rs:581)", r.Path, errPathEncodedSlash)}, false
	}
	return sel, Decision{}, true
}

// anyEncodedSlash reports whether one of the configs opts in to
// allow_encoded_slash: the request is canonicalised with it then.
func anyEncodedSlash(configs []*matched) bool {
	return slices.ContainsFunc(configs, func(c *matched) bool { return c.ep.AllowEncodedSlash })
}

// encodedSlashRefused reports whether v0.0.111's re-check of
// allow_encoded_slash against the selected config route refuses canon,
// which an opt-in of another config let keep an encoded slash.
func (d *Decider) encodedSlashRefused(route *matched, canon string) bool {
	return openshell.CompareVersions(d.version, "v0.0.111") >= 0 && !route.ep.AllowEncodedSlash && strings.Contains(canon, "%2F")
}
