package decide

import (
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// Rule matching: whether one allow or deny rule matches a request, by
// method, path and query globs (REST), JSON-RPC method, MCP tool and params,
// or GraphQL operation, with the glob semantics of package glob.

// globCache holds every pattern of the policy compiled, keyed by the
// pattern as written: slash for glob.match(p, ["/"], v), dot for
// glob.match(p, [] or ["."], v). It is filled when the Decider is built and
// only read afterwards.
type globCache struct {
	slash, dot map[string]*glob.Rego
}

func (c *globCache) addSlash(pat string) {
	if _, ok := c.slash[pat]; !ok {
		c.slash[pat] = glob.CompileRego(pat, []rune{'/'})
	}
}

func (c *globCache) addDot(pat string) {
	if _, ok := c.dot[pat]; !ok {
		c.dot[pat] = glob.CompileRego(pat, []rune{'.'})
	}
}

// addMatch compiles every pattern of rule m: its path for slash, its
// operation name, method, fields, query values and params for dot.
func (c *globCache) addMatch(m *openshell.Match) {
	c.addSlash(m.Path)
	c.addDot(m.OperationName)
	c.addDot(m.Method)
	for _, f := range m.Fields {
		c.addDot(f)
	}
	for _, q := range m.Query {
		c.addQuery(q)
	}
	for _, q := range flattenParams(m) {
		c.addQuery(q)
	}
}

// addQuery compiles the globs of a query or params matcher for dot.
func (c *globCache) addQuery(q openshell.QueryMatch) {
	c.addDot(q.Glob)
	for _, g := range q.Any {
		c.addDot(g)
	}
}

// match is glob.match(pat, ["/"], v) (slash) or glob.match(pat, [] or ["."],
// v) (dot), using the compiled pattern when there is one.
func (c *globCache) match(slash bool, pat, v string) bool {
	if slash {
		if g, ok := c.slash[pat]; ok {
			return g.Match(v)
		}
		return glob.RegoMatch(pat, []rune{'/'}, v)
	}
	if g, ok := c.dot[pat]; ok {
		return g.Match(v)
	}
	return glob.RegoMatch(pat, []rune{'.'}, v)
}

// methodMatches: "*" any method, else case-insensitive, and a GET rule
// also matches HEAD (sandbox-policy.rego:716-727).
func methodMatches(actual, expected string) bool {
	if expected == "*" {
		return true
	}
	a, e := strings.ToUpper(actual), strings.ToUpper(expected)
	return a == e || (a == "HEAD" && e == "GET")
}

// pathMatches: "**" matches anything, else glob.match(pattern, ["/"],
// path) (sandbox-policy.rego:736-741). A rule without path is an empty
// pattern, which matches only the empty path: never a request path.
func (d *Decider) pathMatches(pattern, p string) bool {
	if pattern == "**" {
		return true
	}
	return d.globs.match(true, pattern, p)
}

// queryMatches: allow rules need every configured key present with all its
// values matching (sandbox-policy.rego:747); deny rules need every key
// present and one value matching (:378-425).
func (d *Decider) queryMatches(q map[string]openshell.QueryMatch, r *Request, allow bool) bool {
	for key, qm := range q {
		if !d.valuesMatch(qm, r.Query[key], allow) {
			return false
		}
	}
	return true
}

// valuesMatch is queryMatches for one key with the request's values vals:
// present, and all of them (allow) or one of them (deny) matching qm.
func (d *Decider) valuesMatch(qm openshell.QueryMatch, vals []string, allow bool) bool {
	if len(vals) == 0 {
		return false
	}
	match := func(v string) bool { return d.valueMatches(qm, v) }
	if allow {
		return every(vals, match)
	}
	return slices.ContainsFunc(vals, match)
}

// every reports whether f holds for every element of s (true for none).
func every[E any](s []E, f func(E) bool) bool {
	for _, e := range s {
		if !f(e) {
			return false
		}
	}
	return true
}

// valueMatches is query_value_matches (sandbox-policy.rego:790-807): a glob
// or any of several, with glob.match(p, [], v), whose delimiter is '.'.
func (d *Decider) valueMatches(qm openshell.QueryMatch, v string) bool {
	match := func(g string) bool { return d.globs.match(false, g, v) }
	return qm.Glob != "" && match(qm.Glob) || slices.ContainsFunc(qm.Any, match)
}

// rpcMatches is jsonrpc_rule_matches (sandbox-policy.rego:790-860):
// json-rpc methods compare exactly ("*" any); MCP methods are globs and its
// params (tool: is params.name, openshell-policy lib.rs:533) must match the
// request's params, which carry only the tools/call name (l7/jsonrpc.rs:440).
func (d *Decider) rpcMatches(ep *openshell.Endpoint, ru *openshell.Match, r *Request) bool {
	if r.RPCMethod == "" {
		return false
	}
	if ep.Protocol == openshell.ProtocolJSONRPC {
		return ru.Method == "*" || ru.Method == r.RPCMethod
	}
	return d.globs.match(false, ru.Method, r.RPCMethod) && d.paramsMatch(ru, r)
}

// paramsMatch reports whether the rule's params match the request's,
// which hold only the tools/call name: every param must be name, and the
// request's tool must match it.
func (d *Decider) paramsMatch(ru *openshell.Match, r *Request) bool {
	for key, qm := range flattenParams(ru) {
		if key != "name" || r.Tool == "" || !d.valueMatches(qm, r.Tool) {
			return false
		}
	}
	return true
}

// flattenParams is a rule's params as Rego sees them: tool as params.name,
// nested objects flattened to dotted keys (openshell-policy lib.rs:424
// flatten_param_matchers @ v0.0.111).
func flattenParams(m *openshell.Match) map[string]openshell.QueryMatch {
	if m.Tool == nil && len(m.Params) == 0 {
		return nil
	}
	out := map[string]openshell.QueryMatch{}
	var walk func(prefix string, ps map[string]openshell.ParamMatch)
	walk = func(prefix string, ps map[string]openshell.ParamMatch) {
		for k, p := range ps {
			if p.Matcher != nil {
				out[prefix+k] = *p.Matcher
			} else {
				walk(prefix+k+".", p.Object)
			}
		}
	}
	walk("", m.Params)
	if m.Tool != nil {
		out["name"] = *m.Tool
	}
	return out
}

// graphqlAllowed is graphql_request_allowed (sandbox-policy.rego:586):
// every operation allowed by some rule with an operation_type, and no
// hash-only persisted query missing from the endpoint's registry (:607).
func (d *Decider) graphqlAllowed(ep *openshell.Endpoint, rules []openshell.Match, r *Request) bool {
	return len(r.GraphQL) > 0 && every(r.GraphQL, func(op GraphQLOp) bool { return d.opAllowed(ep, rules, op) })
}

// opAllowed reports whether a rule with an operation_type allows op (a
// persisted query through the endpoint's registry).
func (d *Decider) opAllowed(ep *openshell.Endpoint, rules []openshell.Match, op GraphQLOp) bool {
	eff, ok := effectiveOp(ep, op)
	if !ok {
		return false
	}
	for j := range rules {
		if rules[j].OperationType != "" && d.opMatches(eff, &rules[j], true) {
			return true
		}
	}
	return false
}

// effectiveOp is graphql_effective_operation (sandbox-policy.rego:630): a
// hash-only persisted query is the registered operation when the endpoint
// has persisted_queries: allow_registered and registers the hash; without
// a registration it is not allowed (false).
func effectiveOp(ep *openshell.Endpoint, op GraphQLOp) (GraphQLOp, bool) {
	if op.Hash == "" {
		return op, true
	}
	if ep.PersistedQueries != "allow_registered" {
		return op, false
	}
	reg, ok := ep.GraphQLPersistedQueries[op.Hash]
	if !ok {
		return op, false
	}
	return GraphQLOp{Type: reg.OperationType, Name: reg.OperationName, Fields: reg.Fields}, true
}

// opMatches matches one GraphQL operation (sandbox-policy.rego:646-712):
// type "*" or case-insensitive, name a glob, fields: allow rules need every
// selected root field to match a pattern, deny rules one.
func (d *Decider) opMatches(op GraphQLOp, ru *openshell.Match, allow bool) bool {
	if ru.OperationType != "*" && !strings.EqualFold(ru.OperationType, op.Type) {
		return false
	}
	if ru.OperationName != "" && !d.globs.match(false, ru.OperationName, op.Name) {
		return false
	}
	return len(ru.Fields) == 0 || d.fieldsMatch(ru.Fields, op.Fields, allow)
}

// fieldsMatch matches an operation's selected root fields against a rule's
// field patterns: allow rules need fields, each matching a pattern; deny
// rules one field matching.
func (d *Decider) fieldsMatch(patterns, fields []string, allow bool) bool {
	fieldOK := func(f string) bool {
		return slices.ContainsFunc(patterns, func(p string) bool { return d.globs.match(false, p, f) })
	}
	if !allow {
		return slices.ContainsFunc(fields, fieldOK)
	}
	return len(fields) > 0 && every(fields, fieldOK)
}
