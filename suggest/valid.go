package suggest

import (
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// rawTool reports interpreters and raw network tools, binaries that can
// send anything: the day-2 risk table's high row. OpenShell's prover names
// the narrower l7_bypass_credentialed class (git-remote-https, ssh, nc: wire
// protocols the L7 proxy cannot inspect, docs/sandboxes/policy-advisor.mdx:176
// @v0.0.111), which needs a credential in scope that suggest cannot see.
func rawTool(bin string) bool {
	b := path.Base(bin)
	return slices.Contains(rawTools, b) || slices.ContainsFunc(rawToolFamilies, func(p string) bool { return strings.HasPrefix(b, p) })
}

// rawTools are the interpreters and raw network tools by base name;
// rawToolFamilies are those whose versioned names (python3.12, node20,
// git-remote-https) count too.
var (
	rawTools        = []string{"python", "node", "bash", "sh", "zsh", "dash", "curl", "wget", "nc", "ncat", "netcat", "ssh", "git-remote-http", "perl", "ruby", "socat", "telnet"}
	rawToolFamilies = []string{"python", "node", "git-remote-http"}
)

// The bytes a plain host label, request path and binary path may hold.
const (
	alnum      = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	labelChars = "abcdefghijklmnopqrstuvwxyz0123456789-_"
	pathChars  = alnum + "/-._~!$&'()+,;=:@%"
	binChars   = alnum + "/-._+@"
)

// validHost accepts a DNS name (letters, digits, '-', '_', dots) or an IP
// literal.
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Zone() == ""
	}
	return !slices.ContainsFunc(strings.Split(h, "."), badLabel)
}

// badLabel reports a DNS label that is empty, longer than 63 bytes or
// holds a byte other than a lower-case letter, a digit, '-' or '_'.
func badLabel(label string) bool {
	return label == "" || len(label) > 63 || strings.Trim(label, labelChars) != ""
}

// validPath accepts an absolute request path of URL path characters, with
// nothing OpenShell's globs or fullsend's placeholders would read as syntax
// (* ? [ ] { } \).
func validPath(s string) bool {
	return strings.HasPrefix(s, "/") && len(s) <= 2048 && strings.Trim(s, pathChars) == "" &&
		!strings.Contains(s, "/../") && !strings.HasSuffix(s, "/..")
}

// validBinary accepts an absolute executable path without spaces, glob or
// control characters.
func validBinary(s string) bool {
	return strings.HasPrefix(s, "/") && len(s) <= 1024 && strings.Trim(s, binChars) == ""
}

// validMethod accepts the REST methods a sandbox: block can grant.
func validMethod(m string) bool {
	return slices.Contains(restMethods, m)
}

var restMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// blocked says why a destination is refused whatever the policy: the
// always-blocked addresses (openshell.AlwaysBlockedIP, mirroring
// is_always_blocked_ip, crates/openshell-core/src/net.rs:62@v0.0.111),
// loopback and cloud metadata names, and the control-plane ports
// (BLOCKED_CONTROL_PLANE_PORTS, proxy.rs:3713,3901@v0.0.111).
func blocked(host string, port int) string {
	if a, err := netip.ParseAddr(host); err == nil && openshell.AlwaysBlockedIP(a) {
		return fmt.Sprintf("%s is an always-blocked address (loopback, link-local or cloud metadata): OpenShell refuses it whatever the policy", host)
	}
	if why := numericHost(host); why != "" {
		return why
	}
	switch {
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return fmt.Sprintf("%s is loopback, always blocked by OpenShell", host)
	case host == "metadata.google.internal" || host == "metadata":
		return fmt.Sprintf("%s is a cloud metadata endpoint, always blocked by OpenShell", host)
	case openshell.ControlPlanePort(port):
		return fmt.Sprintf("port %d is a control-plane port (etcd, Kubernetes API, kubelet), refused by OpenShell's destination check", port)
	}
	return ""
}

// numericHost says why a host that is an IPv4 address in another form than
// the dotted quad is refused; "" for any other host. OpenShell reads a
// host as an IP literal only in Rust's strict form (resolve_ip_literal,
// crates/openshell-supervisor-network/src/proxy.rs:3754-3759@v0.0.111), and
// hands any other name to the sandbox's /etc/hosts and then
// tokio::net::lookup_host, which is the C library's getaddrinfo
// (resolve_socket_addrs, proxy.rs:3836-3862@v0.0.111, :2648-2670@v0.0.83).
// getaddrinfo takes a name inet_aton parses as that address: 2852039166,
// 0251.0376.0251.0376, 0xa9fea9fe and 169.254.43518 are all
// 169.254.169.254, which the resolved-address check then refuses
// (validate_declared_endpoint_resolved_addrs, proxy.rs:3931-3962@v0.0.111,
// with is_always_blocked_ip, crates/openshell-core/src/net.rs:62-79, which
// also reads IPv4-mapped IPv6). suggest judges such a host by the address,
// and refuses every such form: a human writes the address itself.
func numericHost(host string) string {
	if _, err := netip.ParseAddr(host); err == nil {
		return ""
	}
	a, ok := atonIPv4(host)
	switch {
	case !ok:
		return ""
	case openshell.AlwaysBlockedIP(a):
		return fmt.Sprintf("%s is %s as OpenShell's resolver reads it (getaddrinfo), an always-blocked address (loopback, link-local or cloud metadata): OpenShell refuses it whatever the policy", host, a)
	}
	return fmt.Sprintf("%s is the IPv4 address %s in a decimal, octal, hex or short form, as OpenShell's resolver reads it (getaddrinfo); suggest never grants a disguised address: declare %s if it is meant", host, a, a)
}

// atonIPv4 reads s as inet_aton does (the numeric names getaddrinfo
// accepts): one to four parts split by dots, each decimal, octal (a
// leading 0) or hex (0x); every part but the last is one byte, the last
// fills the remaining bytes.
func atonIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var n uint64
	for i, p := range parts {
		v, ok := atonPart(p)
		last := i == len(parts)-1
		if !ok || !last && v > 255 || last && v >= 1<<(8*(4-i)) {
			return netip.Addr{}, false
		}
		if last {
			n |= v
		} else {
			n |= v << (24 - 8*i)
		}
	}
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// atonPart reads one part of an inet_aton address: 0x for hex (no digits
// is 0), a leading 0 for octal, else decimal; at most 32 bits.
func atonPart(p string) (uint64, bool) {
	base := 10
	switch {
	case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	v, err := strconv.ParseUint(p, base, 32)
	return v, err == nil
}
