package openshell

import "net/netip"

// The always-blocked destinations of OpenShell's SSRF guard, whatever the
// policy says: the one list both the decision engine and the validator use.

var (
	blockedV4Loopback  = netip.MustParsePrefix("127.0.0.0/8")
	blockedV4LinkLocal = netip.MustParsePrefix("169.254.0.0/16")
	blockedV6LinkLocal = netip.MustParsePrefix("fe80::/10")
)

// AlwaysBlockedIP mirrors is_always_blocked_ip (crates/openshell-core/src/
// net.rs:62 @ v0.0.111, :55 @ v0.0.83): IPv4 loopback 127/8, link-local
// 169.254/16 (cloud metadata) and exactly 0.0.0.0 (Ipv4Addr::is_unspecified:
// not the rest of 0/8); IPv6 ::1, ::, fe80::/10, and IPv4-mapped
// ::ffff:169.254/16 (net.rs is_link_local_ip), ::ffff:127/8 and
// ::ffff:0.0.0.0.
func AlwaysBlockedIP(a netip.Addr) bool {
	if a.Is4() {
		return blockedV4Loopback.Contains(a) || blockedV4LinkLocal.Contains(a) || a == netip.IPv4Unspecified()
	}
	if a.IsLoopback() || a == netip.IPv6Unspecified() || blockedV6LinkLocal.Contains(a.WithZone("")) {
		return true
	}
	if a.Is4In6() {
		u := a.Unmap()
		return blockedV4Loopback.Contains(u) || blockedV4LinkLocal.Contains(u) || u == netip.IPv4Unspecified()
	}
	return false
}

// AlwaysBlockedNet mirrors is_always_blocked_net (net.rs @ v0.0.111): an
// IPv4 range overlapping 127/8 or 169.254/16 or starting at 0.0.0.0; an IPv6
// range containing ::1, ::, fe80::, or the mapped loopback, link-local or
// unspecified addresses, or itself link-local or mapped-blocked.
func AlwaysBlockedNet(p netip.Prefix) bool {
	p = p.Masked()
	if p.Addr().Is4() {
		return p.Overlaps(blockedV4Loopback) || p.Overlaps(blockedV4LinkLocal) || p.Addr().IsUnspecified()
	}
	for _, a := range []string{"::1", "::", "fe80::", "::ffff:127.0.0.1", "::ffff:169.254.0.0", "::ffff:0.0.0.0"} {
		if p.Contains(netip.MustParseAddr(a)) {
			return true
		}
	}
	return blockedV6LinkLocal.Contains(p.Addr()) || (p.Addr().Is4In6() && AlwaysBlockedIP(p.Addr()))
}
