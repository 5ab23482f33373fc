package decide

import (
	"fmt"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// Forward-proxy requests: a plain-HTTP request in absolute form sent to the
// proxy itself ("GET http://host/path HTTP/1.1", no CONNECT), which
// OpenShell decides in handle_forward_proxy (crates/openshell-supervisor-
// network/src/proxy.rs:3314 @ v0.0.83, :4791 @ v0.0.111). It shares the L4
// decision, the L7 rules and the destination check with CONNECT, and
// differs from a request inside a CONNECT tunnel in these ways:
//
//   - only http is forwarded: https is refused with 400 "Use CONNECT for
//     HTTPS URLs" at both tags (proxy.rs:3389 @ v0.0.83); v0.0.111 refuses
//     every other scheme too (proxy.rs:4858 "unsupported_proxy_scheme"),
//     while v0.0.83 forwards ws:// and wss:// as plain HTTP; a target
//     without a port is port 443 for https and 80 for every other scheme
//     (parse_proxy_uri, proxy.rs:3036 @ v0.0.83, :4268 @ v0.0.111);
//   - tls is never consulted: the L7 configs inspect the request even when
//     the first endpoint config says tls: skip (there is no query_tls_mode
//     call on this path);
//   - the request is always routed by endpoint path, even to a single L7
//     config, and a path no config matches is refused (403, even under
//     audit: proxy.rs:3709 @ v0.0.83, :5187 @ v0.0.111);
//   - v0.0.111 canonicalises the request-target before any L7 lookup, so a
//     non-canonical path is refused (400) on an L4-only endpoint as well
//     (prepare_forward_target, proxy.rs:4401, called at :5058); v0.0.83
//     canonicalises only when an L7 config applies (proxy.rs:3668);
//   - a query string that does not decode is evaluated as no query
//     (parse_query_params(..).unwrap_or_default(), proxy.rs:3679 @ v0.0.83,
//     :5092 @ v0.0.111), where a tunnelled request is refused;
//   - the L7 verdict comes before the destination check (proxy.rs:4018 @
//     v0.0.83, :5550 @ v0.0.111); both refuse, so only the reason differs.
//
// Hard denials (JSON-RPC response frames on json-rpc, a bad MCP tool name)
// are the same (forward_l7_hard_deny_reason, proxy.rs:459 @ v0.0.83;
// l7_request_hard_deny_reason, l7/relay.rs:2261 @ v0.0.111).

// forwardScheme is the scheme gate of handle_forward_proxy.
func (d *Decider) forwardScheme(r *Request, host string) (Decision, bool) {
	switch {
	case r.Scheme == "https":
		return Decision{Reason: fmt.Sprintf("forward-proxy request to https://%s refused with 400: use CONNECT for HTTPS URLs (proxy.rs handle_forward_proxy)", host)}, false
	case r.Scheme != "http" && openshell.CompareVersions(d.version, "v0.0.111") >= 0:
		return Decision{Reason: fmt.Sprintf("forward-proxy request with scheme %s refused with 400: forward proxy requests must use http (proxy.rs handle_forward_proxy @ v0.0.111)", r.Scheme)}, false
	}
	return Decision{}, true
}

// decideForward decides a forward-proxy request once the L4 decision has
// allowed it (ms non-empty).
func (d *Decider) decideForward(ms []matched, cfg *matched, configs []*matched, r *Request, host string, dst dest) Decision {
	first := firstConfig(ms, cfg)
	canon, err := d.forwardPath(configs, r)
	if err != nil {
		return Decision{Policy: first.key, Path: epPath(first.key, first.i),
			Reason: fmt.Sprintf("forward-proxy request path %q refused with 400 before policy evaluation: %v (l7/path.rs canonicalize_request_target)", r.Path, err)}
	}
	var allow Decision
	if len(configs) > 0 {
		allow = d.forwardL7(ms, configs, r, canon)
		if !allow.Allowed {
			return allow
		}
	}
	if deny, ok := d.destination(ms, cfg, host, r.Port, dst); !ok {
		return deny
	}
	if len(configs) > 0 {
		allow.Reason = "forward proxy: " + allow.Reason
		return allow
	}
	return Decision{Allowed: true, Policy: first.key, Path: epPath(first.key, first.i),
		Reason: fmt.Sprintf("forward proxy: L4 endpoint %s allows the request without inspection (no endpoint for this host:port has an L7 protocol)", first.ep.Host)}
}

// forwardPath is the path a forward-proxy request is decided on: the
// request-target canonicalised (always at v0.0.111, only with an L7 config
// at v0.0.83), else as written.
func (d *Decider) forwardPath(configs []*matched, r *Request) (string, error) {
	if openshell.CompareVersions(d.version, "v0.0.111") < 0 && len(configs) == 0 {
		return r.Path, nil
	}
	return canonicalRequestPath(r.Path, anyEncodedSlash(configs), d.version)
}

// forwardL7 is the L7 verdict on a forward-proxy request with the path
// canon: routed by endpoint path even to a single config (no route is
// refused even under audit), the encoded-slash re-check of v0.0.111, the
// hard denials, then the rules, with a query that does not decode
// evaluated as no query.
func (d *Decider) forwardL7(ms []matched, configs []*matched, r *Request, canon string) Decision {
	route := selectConfigForPath(configs, canon)
	if route == nil {
		return Decision{Policy: configs[0].key, Path: epPath(configs[0].key, configs[0].i),
			Reason: fmt.Sprintf("forward-proxy request %s %s did not match an L7 endpoint path (refused even under audit)", r.Method, canon)}
	}
	if d.encodedSlashRefused(route, canon) {
		return Decision{Policy: route.key, Path: epPath(route.key, route.i),
			Reason: fmt.Sprintf("forward-proxy request path %q: %v (proxy.rs:5211 @ v0.0.111)", r.Path, errPathEncodedSlash)}
	}
	if deny, ok := hardDeny(route, r); ok {
		return deny
	}
	return d.decideL7(ms, route, withoutBadQuery(r), canon)
}

// withoutBadQuery is r, or when its query does not decode a copy of r
// with no query (parse_query_params(..).unwrap_or_default()).
func withoutBadQuery(r *Request) *Request {
	if r.QueryError == "" {
		return r
	}
	q := *r
	q.Query, q.QueryError = nil, ""
	return &q
}
