package openshell

import "strings"

// Route selection: which of several L7 endpoints on one host:port inspects a
// request, by endpoint path (crates/openshell-supervisor-network/src/l7/
// relay.rs:506 relay_with_route_selection @ v0.0.111).

// inspectedConfigs are the L7 endpoint configs of the connection, in policy
// name order: the route snapshot's configs (proxy/relay.rs:146 @ v0.0.111).
func inspectedConfigs(ms []matched) []*matched {
	var out []*matched
	for i := range ms {
		if inspected(&ms[i]) {
			out = append(out, &ms[i])
		}
	}
	return out
}

// selectConfigForPath is select_l7_config_for_path (l7/relay.rs:924 @
// v0.0.111, :513 @ v0.0.83): among the configs whose endpoint path
// matches, the one with the most non-'*' characters in its path; Rust's
// max_by_key keeps the last of equals.
func selectConfigForPath(configs []*matched, path string) *matched {
	var best *matched
	bestN := -1
	for _, c := range configs {
		if !endpointPathMatches(c.ep.Path, path) {
			continue
		}
		n := 0
		if c.ep.Path != "" {
			n = len([]rune(c.ep.Path)) - strings.Count(c.ep.Path, "*")
		}
		if n >= bestN {
			best, bestN = c, n
		}
	}
	return best
}

// endpointPathMatches is openshell-core endpoint_path::matches (@
// v0.0.111): equal strings; "", "**" or "/**" match anything; "P/**"
// matches P and everything under it; otherwise a glob-crate pattern with
// default options, where '*' crosses '/' (rustGlobMatch).
func endpointPathMatches(pattern, p string) bool {
	if pattern == p {
		return true
	}
	switch {
	case pattern == "" || pattern == "**" || pattern == "/**":
		return true
	case strings.HasSuffix(pattern, "/**"):
		prefix := strings.TrimSuffix(pattern, "/**")
		return p == prefix || strings.HasPrefix(p, prefix+"/")
	}
	return rustGlobMatch(pattern, p)
}

// inspected reports whether the connection's config selects L7 inspection
// (l7/mod.rs:176 parse_l7_config: a protocol L7Protocol::parse knows,
// case-insensitively: openshell-policy/src/l7_validate.rs:25 @ v0.0.111,
// l7/mod.rs:35 @ v0.0.83, where an unknown protocol loads and stays L4; tls:
// skip turns termination off).
func inspected(cfg *matched) bool {
	if cfg == nil || cfg.ep.TLS == TLSSkip {
		return false
	}
	switch strings.ToLower(cfg.ep.Protocol) {
	case ProtocolREST, ProtocolWebsocket, ProtocolGraphQL, ProtocolSQL, ProtocolJSONRPC, ProtocolMCP:
		return true
	}
	return false
}
