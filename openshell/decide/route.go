package decide

import (
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// Route selection: which of several L7 endpoints on one host:port inspects a
// request, by endpoint path (crates/openshell-supervisor-network/src/l7/
// relay.rs:506 relay_with_route_selection @ v0.0.111).

// l7Configs are the connection's L7 endpoint configs, in policy name order
// and then endpoint order: the route snapshot's configs, every matching
// extended config that parse_l7_config accepts (query_l7_route_snapshot,
// proxy.rs:2292 @ v0.0.83, :3464 @ v0.0.111). parse_l7_config
// (l7/mod.rs:164 @ v0.0.83, :176 @ v0.0.111) reads the config's tls but
// does not drop a tls: skip config, so an L7 endpoint with tls: skip that
// is not the first extended config still takes part in route selection
// and decides the requests routed to it; only the first config's tls
// (query_tls_mode) turns inspection off for the whole connection.
func l7Configs(ms []matched) []*matched {
	var out []*matched
	for i := range ms {
		if l7Protocol(ms[i].ep) {
			out = append(out, &ms[i])
		}
	}
	return out
}

// selectConfigForPath is select_l7_config_for_path (l7/relay.rs:924 @
// v0.0.111, :513 @ v0.0.83): among the configs whose endpoint path
// matches (glob.EndpointPath, endpoint_path.rs), the one with the most non-'*' characters in its path; Rust's
// max_by_key keeps the last of equals.
func selectConfigForPath(configs []*matched, path string) *matched {
	var best *matched
	bestN := -1
	for _, c := range configs {
		if !glob.NewEndpointPath(c.ep.Path).Match(path) {
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

// l7Protocol reports whether the endpoint's protocol selects L7 inspection
// (l7/mod.rs:176 parse_l7_config: a protocol L7Protocol::parse knows,
// case-insensitively: openshell-policy/src/l7_validate.rs:25 @ v0.0.111,
// l7/mod.rs:35 @ v0.0.83; unknown protocols are refused at load at both
// tags, l7/mod.rs:1057 @ v0.0.83).
func l7Protocol(ep *openshell.Endpoint) bool {
	switch strings.ToLower(ep.Protocol) {
	case openshell.ProtocolREST, openshell.ProtocolWebsocket, openshell.ProtocolGraphQL, openshell.ProtocolSQL, openshell.ProtocolJSONRPC, openshell.ProtocolMCP:
		return true
	}
	return false
}
