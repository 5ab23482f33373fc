package openshell

// The network facts of OpenShell's proxy that the validator, the decision
// engine and `policy suggest` share.

import (
	"net/netip"
	"slices"
	"strings"
)

// ControlPlanePort reports whether OpenShell's destination check refuses
// port whatever the policy says (BLOCKED_CONTROL_PLANE_PORTS,
// crates/openshell-supervisor-network/src/proxy.rs:4107@v0.0.111, :2828@v0.0.83: etcd 2379 and
// 2380, the Kubernetes API 6443, the kubelet 10250 and 10255;
// checked at proxy.rs:3713,3901,3941@v0.0.111).
// `policy suggest` uses it to refuse such denials instead of suggesting a
// grant that could never work.
func ControlPlanePort(port int) bool {
	return slices.Contains(controlPlanePorts, int64(port))
}

// controlPlanePorts are blocked by the proxy whatever the policy says.
var controlPlanePorts = []int64{2379, 2380, 6443, 10250, 10255}

// ParseAllowedIP parses an allowed_ips entry: a CIDR or a bare address (as a host prefix), the
// forms OpenShell's ipnet parsing accepts.
func ParseAllowedIP(s string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		if p.Addr().Zone() != "" {
			return netip.Prefix{}, false
		}
		return p, true
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, a.BitLen()), true
}

// hostGatewayAliases are the driver-injected names of the host machine
// (HOST_GATEWAY_ALIASES, proxy.rs:52 @ v0.0.83, proxy.rs:100 @ v0.0.111).
var hostGatewayAliases = []string{"host.openshell.internal", "host.containers.internal", "host.docker.internal"}

// IsHostGatewayAlias mirrors is_host_gateway_alias: case-insensitive, with
// IPv6-style brackets stripped.
func IsHostGatewayAlias(host string) bool {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	for _, a := range hostGatewayAliases {
		if strings.EqualFold(a, h) {
			return true
		}
	}
	return false
}
