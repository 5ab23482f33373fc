package decide

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// The SSRF guard: which resolved addresses a request may reach whatever the
// policy allows (internal ranges, the trusted host-gateway alias,
// allowed_ips), as crates/openshell-supervisor-network/src/proxy.rs does.
// The always-blocked addresses are openshell.AlwaysBlockedIP.

// privateRanges need an exact host or allowed_ips (the proxy's internal-IP
// classification, openshell-core/src/net.rs:257 is_internal_v4 @ v0.0.111,
// :193 @ v0.0.83): RFC 1918, CGNAT, IETF protocol assignments, the three
// documentation TEST-NETs, benchmarking, limited broadcast, and IPv6 ULA
// (IPv4-mapped forms are unmapped first; net.rs test_internal_ip_special_use_ranges).
var privateRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"), netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("255.255.255.255/32"),
	netip.MustParsePrefix("fc00::/7"),
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// trustedGatewayAddr reports whether a host-gateway alias resolving to addr
// takes the trusted-gateway path, which bypasses the SSRF tiers (proxy.rs:
// 776 @ v0.0.83, :3448 hydrate_destination_plan @ v0.0.111): addr must be
// link-local and not the cloud metadata address 169.254.169.254
// (detect_trusted_host_gateway, proxy.rs:3643). "at IP" stands for the
// /etc/hosts entry of host.openshell.internal, which the proxy trusts; a
// private address such as Docker's 172.17.0.1 takes the normal path.
func trustedGatewayAddr(host string, addr netip.Addr) bool {
	if !openshell.IsHostGatewayAlias(host) {
		return false
	}
	a := addr.Unmap()
	if a == netip.MustParseAddr("169.254.169.254") {
		return false
	}
	return a.IsLinkLocalUnicast() // 169.254/16 or fe80::/10, as openshell.AlwaysBlockedIP
}

// dest is what the request says of its destination address: the literal
// host or the "at IP" address, and whether a host-gateway alias takes the
// trusted-gateway path.
type dest struct {
	addr    netip.Addr
	isIP    bool
	literal bool // the request host itself is an IP literal
	gateway bool
}

func newDestination(host string, r *Request) dest {
	d := dest{addr: r.Addr, isIP: r.Addr.IsValid()}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && a.Zone() == "" {
		d.addr, d.isIP, d.literal = a, true, true
	}
	d.gateway = r.Addr.IsValid() && trustedGatewayAddr(host, r.Addr)
	return d
}

// alwaysBlocked reports whether the destination is an always-blocked
// address (openshell.AlwaysBlockedIP) that does not take the
// trusted-gateway path.
func (d dest) alwaysBlocked() bool {
	return d.isIP && !d.gateway && openshell.AlwaysBlockedIP(d.addr)
}

// destination is the proxy's destination check after the L4 decision, one
// mode chosen in this order (build_validation_plan,
// proxy/destination.rs:79-106 @ v0.0.111; the same chain inline at
// proxy.rs:764-1040 @ v0.0.83 for CONNECT and :4018-4320 for forward
// proxy requests):
//
//   - a trusted host-gateway alias: control-plane ports refused;
//   - the first extended config's allowed_ips: parse_allowed_ips refuses
//     the connection when any entry is malformed or overlaps an
//     always-blocked range (proxy.rs:2843 @ v0.0.83, :4122 @ v0.0.111),
//     then control-plane ports, then every resolved address must be inside
//     (validate_allowed_ips_for_resolved_addrs);
//   - an IP-literal request host (not always-blocked) is its own allowed
//     address (implicit_allowed_ips_for_ip_host, proxy.rs:2399 @ v0.0.83,
//     :3587 @ v0.0.111): control-plane ports refused;
//   - an exact declared host of a matching policy (exact_declared_endpoint_host,
//     sandbox-policy.rego): private addresses allowed, control-plane ports
//     refused (validate_declared_endpoint_resolved_addrs);
//   - otherwise internal addresses are refused and nothing else
//     (reject_internal_resolved_addrs, proxy.rs:2676 @ v0.0.83, :3864 @
//     v0.0.111, has no control-plane check): a wildcard host on port 6443
//     that resolves to a public address is allowed.
//
// Without "at IP" a host name is taken to resolve where the mode allows.
func (d *Decider) destination(ms []matched, cfg *matched, host string, port int, dst dest) (Decision, bool) {
	cpReason := controlPlaneReason(port)
	switch {
	case dst.trustedGateway(host):
		return controlPlaneCheck(cpReason)
	case cfg != nil && len(cfg.ep.AllowedIPs) > 0:
		return allowedIPsDestination(cfg, cpReason, dst)
	case dst.literal && !openshell.AlwaysBlockedIP(dst.addr):
		return controlPlaneCheck(cpReason)
	case d.exactHostPolicy(ms, host):
		return controlPlaneCheck(cpReason)
	case dst.isIP && inAny(dst.addr, privateRanges):
		return Decision{Reason: fmt.Sprintf("%s is a private address: it needs allowed_ips covering it or an exact host name", dst.addr)}, false
	}
	return Decision{}, true
}

// trustedGateway reports whether the destination takes the trusted-gateway
// path. A host-gateway alias without "at IP" is taken to be the trusted
// gateway, as in a sandbox whose driver injected it.
func (d dest) trustedGateway(host string) bool {
	return d.gateway || (!d.isIP && openshell.IsHostGatewayAlias(host))
}

// controlPlaneReason is why the proxy refuses port as a control-plane
// port, or "" when it is not one.
func controlPlaneReason(port int) string {
	if openshell.ControlPlanePort(port) {
		return fmt.Sprintf("port %d is a control-plane port, refused by the proxy's destination check", port)
	}
	return ""
}

// controlPlaneCheck refuses the destination when cpReason says the port is
// a control-plane port, and allows it otherwise.
func controlPlaneCheck(cpReason string) (Decision, bool) {
	if cpReason != "" {
		return Decision{Reason: cpReason}, false
	}
	return Decision{}, true
}

// allowedIPsDestination is the allowed_ips mode of the first config cfg:
// every entry must parse and stay clear of the always-blocked ranges, the
// port must not be a control-plane port, and an "at IP" address must be
// covered by an entry.
func allowedIPsDestination(cfg *matched, cpReason string, dst dest) (Decision, bool) {
	refuse := func(sub, why string) (Decision, bool) {
		return Decision{Policy: cfg.key, Path: epPath(cfg.key, cfg.i) + sub, Reason: why}, false
	}
	if s, bad := unusableAllowedIP(cfg.ep.AllowedIPs); bad {
		return refuse(".allowed_ips", fmt.Sprintf("allowed_ips entry %q is malformed or overlaps an always-blocked range: the proxy refuses every connection through this endpoint (parse_allowed_ips)", s))
	}
	if cpReason != "" {
		return refuse("", cpReason)
	}
	if dst.isIP && !ipAllowed(cfg.ep.AllowedIPs, dst.addr) {
		return refuse(".allowed_ips", fmt.Sprintf("%s is %s outside the endpoint's allowed_ips", dst.addr, addressKind(dst.addr)))
	}
	return Decision{}, true
}

// unusableAllowedIP returns the first allowed_ips entry parse_allowed_ips
// refuses: malformed, or overlapping an always-blocked range.
func unusableAllowedIP(list []string) (string, bool) {
	for _, s := range list {
		if p, ok := openshell.ParseAllowedIP(s); !ok || openshell.AlwaysBlockedNet(p) {
			return s, true
		}
	}
	return "", false
}

// addressKind names addr as a private or a public address.
func addressKind(addr netip.Addr) string {
	if inAny(addr, privateRanges) {
		return "a private address"
	}
	return "a public address"
}

// exactHostPolicy reports whether, at a release that lets an exact host
// name reach a private address, a matching policy names host exactly.
func (d *Decider) exactHostPolicy(ms []matched, host string) bool {
	if !openshell.Supports(openshell.FeaturePrivateExactHost, d.version) {
		return false
	}
	for _, m := range ms {
		if m.ep.Host != "" && !strings.Contains(m.ep.Host, "*") && strings.EqualFold(m.ep.Host, host) {
			return true
		}
	}
	return false
}

func ipAllowed(list []string, a netip.Addr) bool {
	a = a.Unmap()
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil && p.Contains(a) {
			return true
		}
		if ip, err := netip.ParseAddr(s); err == nil && ip.Unmap() == a {
			return true
		}
	}
	return false
}
