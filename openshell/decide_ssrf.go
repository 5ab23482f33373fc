package openshell

import (
	"fmt"
	"net/netip"
	"strings"
)

// The SSRF guard: which resolved addresses a request may reach whatever the
// policy allows (internal ranges, the trusted host-gateway alias,
// allowed_ips), as crates/openshell-supervisor-network/src/proxy.rs does.
// The always-blocked addresses are in blocked.go.

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
	if !isHostGatewayAlias(host) {
		return false
	}
	a := addr.Unmap()
	if a == netip.MustParseAddr("169.254.169.254") {
		return false
	}
	return blockedV4LinkLocal.Contains(a) || blockedV6LinkLocal.Contains(a.WithZone(""))
}

// ssrf applies the SSRF guard to a resolved or literal address: a private
// address needs allowed_ips covering it or (since v0.0.111) an exact host;
// a public one must be inside allowed_ips when the config has some.
func (d *Decider) ssrf(ms []matched, cfg *matched, host string, addr netip.Addr) (Decision, bool) {
	var ips []string
	if cfg != nil {
		ips = cfg.ep.AllowedIPs
	}
	private := inAny(addr, privateRanges)
	switch {
	case len(ips) > 0 && ipAllowed(ips, addr):
		return Decision{}, true
	case len(ips) > 0:
		kind := "a public address"
		if private {
			kind = "a private address"
		}
		return Decision{Policy: cfg.key, Path: epPath(cfg.key, cfg.i) + ".allowed_ips",
			Reason: fmt.Sprintf("%s is %s outside the endpoint's allowed_ips", addr, kind)}, false
	case !private:
		return Decision{}, true
	}
	if Supports(FeaturePrivateExactHost, d.version) {
		for _, m := range ms {
			if m.ep.Host != "" && !strings.Contains(m.ep.Host, "*") && strings.EqualFold(m.ep.Host, host) {
				return Decision{}, true
			}
		}
	}
	return Decision{Reason: fmt.Sprintf("%s is a private address: it needs allowed_ips covering it or an exact host name", addr)}, false
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
