package decide

import (
	"errors"
	"fmt"
)

// The passthrough relay: what OpenShell does with the requests inside a
// CONNECT tunnel to an endpoint that has no L7 config (no protocol, an
// unknown one, or tcp) and no tls: skip.
//
// After the 200, the proxy peeks at the tunnel. TLS is terminated (the
// sandbox CA) and plaintext HTTP/1 is read as it is; either way, with no
// L7 config on the route, the stream enters relay_passthrough_with_credentials
// (proxy.rs:2189-2209 and :2274-2282, proxy/relay.rs:146-179 and :266-274 @
// v0.0.111; proxy.rs:1173-1235 and :1348-1366 @ v0.0.83). Its name says
// credentials, but it runs for every such tunnel: credentials only decide
// whether placeholders are rewritten. It parses every request with
// RestProvider::default(), i.e. strict CanonicalizeOptions
// (allow_encoded_slash false, even when the endpoint sets it; l7/relay.rs:
// 2625-2637 @ v0.0.111, :1712-1726 @ v0.0.83; l7/path.rs:77-84), so
// parse_http_request canonicalises the request-target and decodes the
// query (l7/rest.rs:260-266 @ v0.0.111, :220-226 @ v0.0.83). A request that
// fails is never forwarded: the relay logs "HTTP request rejected before
// policy evaluation" and closes the tunnel without a response
// (l7/relay.rs:2640-2647 @ v0.0.111, :1729-1736 @ v0.0.83). No policy rule
// and no enforcement mode applies on this path.
//
// Bytes that are neither TLS nor HTTP (a plaintext SQL wire protocol) are
// relayed raw when nothing requires inspection (proxy.rs:2359-2369 and
// unsupported_l7_tunnel_protocol_detail :1147 @ v0.0.111); inside TLS they
// reach the passthrough parser, which cannot read them and closes the
// connection.

// passthroughHint is parse_rejection_detail's Passthrough advice for an
// encoded slash (l7/relay.rs:366-368 @ v0.0.111, :106-108 @ v0.0.83).
const passthroughHint = "passthrough credential relay uses strict path parsing, so configure this endpoint with protocol: rest and allow_encoded_slash: true for encoded-slash APIs, or use tls: skip if HTTP parsing is not needed"

// passthrough decides request r (an HTTP request, r.Method set) on a tunnel
// to the L4 endpoint first.
func (d *Decider) passthrough(first matched, r *Request) Decision {
	where := func(why string) Decision {
		return Decision{Policy: first.key, Path: epPath(first.key, first.i), Reason: why}
	}
	tls := r.Scheme == "https" || r.Scheme == "wss"
	if r.Command != "" {
		if tls {
			return where(fmt.Sprintf("L4 endpoint %s: TLS is terminated and the passthrough relay parses HTTP; SQL bytes are not HTTP, so it closes the connection (l7/relay.rs:2637 relay_passthrough_with_credentials)", first.ep.Host))
		}
		raw := where(fmt.Sprintf("L4 endpoint %s: neither TLS nor HTTP, the tunnel is relayed raw without request inspection (proxy.rs:2359)", first.ep.Host))
		raw.Allowed = true
		return raw
	}
	if _, err := canonicalRequestPath(r.Path, false, d.version); err != nil {
		why := err.Error()
		if errors.Is(err, errPathEncodedSlash) {
			why += "; " + passthroughHint
		}
		return where(fmt.Sprintf("L4 endpoint %s: request path %q is rejected by the passthrough relay's strict HTTP parser and the tunnel is closed: %s (l7/relay.rs:2637 relay_passthrough_with_credentials, l7/path.rs canonicalize_request_target)", first.ep.Host, r.Path, why))
	}
	if r.QueryError != "" {
		return where(fmt.Sprintf("L4 endpoint %s: request query is rejected by the passthrough relay's HTTP parser and the tunnel is closed: %s (l7/rest.rs parse_query_params)", first.ep.Host, r.QueryError))
	}
	allow := where(fmt.Sprintf("L4 endpoint %s: the connection is allowed without request inspection (no endpoint for this host:port has an L7 protocol; the passthrough relay only canonicalises the path)", first.ep.Host))
	allow.Allowed = true
	return allow
}
