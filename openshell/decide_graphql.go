package openshell

import (
	"fmt"
	"strings"
)

// GraphQL and endpoint-path routing in the decision engine.
//
// OpenShell routes an L7 request to the endpoints whose path selector
// matches the request path (endpoint_path_matches_request in
// crates/openshell-supervisor-network/data/sandbox-policy.rego:911-922 @
// v0.0.83; select_l7_config_for_path in src/l7/relay.rs:272 @ v0.0.83).
// On an endpoint with protocol graphql the proxy parses the body into
// operations (src/l7/graphql.rs) and the endpoint is authoritative once its
// path matches: an operation no allow rule of it names is denied, even when
// a broader REST rule on the same host would allow the POST
// (sandbox-policy.rego:320-330 @ v0.0.83, :353-361 @ v0.0.111). An allow
// rule names operation_type ("*" for any), optionally operation_name (a
// glob) and fields: every root field of the operation must match one
// (graphql_allow_fields_match, sandbox-policy.rego @ v0.0.111). A deny rule
// with operation_type matches when any root field matches.

// endpointPathMatches applies an endpoint's path selector: "" , "**" and
// "/**" match every path; "/x/**" matches /x and below; otherwise a glob
// (l7/mod.rs:283-294 @ v0.0.83).
func endpointPathMatches(pattern, p string) bool {
	switch pattern {
	case "", "**", "/**":
		return true
	case p:
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "/**"); ok && !strings.ContainsAny(prefix, "*?[") {
		return p == prefix || strings.HasPrefix(p, prefix+"/")
	}
	return GlobMatch(pattern, p, '/')
}

// routeByPath keeps, for an HTTP request, the endpoints whose path
// selector matches reqPath.
func routeByPath(matches []endpointMatch, r *Request, reqPath string) []endpointMatch {
	if r.Method == "" {
		return matches
	}
	kept := matches[:0:0]
	for _, m := range matches {
		if endpointPathMatches(m.ep.Path, reqPath) {
			kept = append(kept, m)
		}
	}
	return kept
}

// decideGraphQL decides a request routed to a graphql endpoint; ok is false
// when no applicable endpoint has protocol graphql (REST rules decide).
func decideGraphQL(matches []endpointMatch, r *Request) (Decision, bool) {
	var gql []endpointMatch
	for _, m := range matches {
		if strings.EqualFold(m.ep.Protocol, ProtocolGraphQL) {
			gql = append(gql, m)
		}
	}
	if len(gql) == 0 || r.Method == "" {
		return Decision{}, false
	}
	if len(r.GraphQL) == 0 {
		m := gql[0]
		return audited(m.ep, Decision{Policy: m.key, Path: epPath(m.key, m.i),
			Reason: fmt.Sprintf("GraphQL request rejected: %s %s carries no GraphQL operation (name one with \"graphql TYPE[/NAME]:FIELD,...\")", r.Method, r.Path)}), true
	}
	for _, m := range gql {
		for j := range m.ep.DenyRules {
			dr := &m.ep.DenyRules[j]
			if dr.OperationType == "" {
				continue
			}
			for _, op := range r.GraphQL {
				if graphQLRuleMatches(dr, op, false) {
					return audited(m.ep, Decision{Policy: m.key, Path: fmt.Sprintf("%s.deny_rules[%d]", epPath(m.key, m.i), j),
						Reason: fmt.Sprintf("GraphQL operation blocked by endpoint policy: %s", op)}), true
				}
			}
		}
	}
	for _, m := range gql {
		if path, ok := graphQLAllowed(m, r.GraphQL); ok {
			return Decision{Allowed: true, Policy: m.key, Path: path,
				Reason: fmt.Sprintf("allowed GraphQL %s", joinOps(r.GraphQL))}, true
		}
	}
	// Authoritative: a REST rule on the same host must not let it through.
	m := gql[0]
	return audited(m.ep, Decision{Policy: m.key, Path: epPath(m.key, m.i),
		Reason: fmt.Sprintf("GraphQL operation not permitted by policy: %s", joinOps(r.GraphQL))}), true
}

// graphQLAllowed reports whether every operation is allowed by a rule of
// the endpoint, and the path of the rule that allowed the last one.
func graphQLAllowed(m endpointMatch, ops []GraphQLOperation) (string, bool) {
	path := ""
	for _, op := range ops {
		found := false
		for j := range m.ep.Rules {
			if a := &m.ep.Rules[j].Allow; a.OperationType != "" && graphQLRuleMatches(a, op, true) {
				path, found = fmt.Sprintf("%s.rules[%d]", epPath(m.key, m.i), j), true
				break
			}
		}
		if !found {
			return "", false
		}
	}
	return path, true
}

// graphQLRuleMatches matches one operation against an allow rule (every
// root field must match a pattern) or a deny rule (any root field).
func graphQLRuleMatches(rule *Match, op GraphQLOperation, allow bool) bool {
	if rule.OperationType != "*" && !strings.EqualFold(rule.OperationType, op.OperationType) {
		return false
	}
	if rule.OperationName != "" && !GlobMatch(rule.OperationName, op.OperationName) {
		return false
	}
	if len(rule.Fields) == 0 {
		return true
	}
	if len(op.Fields) == 0 {
		return !allow
	}
	matched := 0
	for _, f := range op.Fields {
		for _, pat := range rule.Fields {
			if GlobMatch(pat, f) {
				matched++
				break
			}
		}
	}
	if allow {
		return matched == len(op.Fields)
	}
	return matched > 0
}

// String renders an operation in the request syntax: TYPE[/NAME]:FIELD,...
func (op GraphQLOperation) String() string {
	s := op.OperationType
	if op.OperationName != "" {
		s += "/" + op.OperationName
	}
	if len(op.Fields) > 0 {
		s += ":" + strings.Join(op.Fields, ",")
	}
	return s
}

func joinOps(ops []GraphQLOperation) string {
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = op.String()
	}
	return strings.Join(parts, " ")
}

// parseGraphQLOperation reads TYPE[/NAME][:FIELD,FIELD...] as in
// "graphql query/IssueByNumber:repository".
func parseGraphQLOperation(s string) (GraphQLOperation, error) {
	head, fields, hasFields := strings.Cut(s, ":")
	typ, name, _ := strings.Cut(head, "/")
	var op GraphQLOperation
	switch strings.ToLower(typ) {
	case "query", "mutation", "subscription":
		op.OperationType = strings.ToLower(typ)
	default:
		return op, fmt.Errorf("graphql operation %q: type must be query, mutation or subscription", s)
	}
	op.OperationName = name
	if hasFields {
		for _, f := range strings.Split(fields, ",") {
			if f == "" {
				return op, fmt.Errorf("graphql operation %q: empty field name", s)
			}
			op.Fields = append(op.Fields, f)
		}
	}
	return op, nil
}
