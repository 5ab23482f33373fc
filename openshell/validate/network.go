package validate

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"

	"gopkg.in/yaml.v3"
)

// reservedPolicyPrefix marks network policies OpenShell synthesizes from
// providers; user policies may not use it.
const reservedPolicyPrefix = "_provider_"

// minSafePrefixBits: allowed_ips prefixes broader than this warn upstream.
const minSafePrefixBits = 16

func (c *checker) checkNetworkPolicies(p *obj) {
	var eps []endpointRef
	for _, e := range p.maps["network_policies"] {
		c.checkNetworkPolicy(e)
		name := cmp.Or(e.val.str("name"), e.key)
		for i, ep := range e.val.lists["endpoints"] {
			c.checkEndpoint(ep)
			eps = append(eps, endpointRef{policy: name, index: i, ep: ep})
		}
	}
	c.checkAmbiguity(eps)
}

// checkNetworkPolicy checks the key, the presence of endpoints and
// binaries, and the binaries of one network policy.
func (c *checker) checkNetworkPolicy(e entry) {
	np := e.val
	if strings.HasPrefix(e.key, reservedPolicyPrefix) && c.supports(openshell.FeatureReservedProviderKeys) {
		c.errorf(e.keyNode, np.path, CodeReservedKey, "rename the key; _provider_ is reserved for provider-generated policies",
			"network policy key %q uses the reserved prefix %q", e.key, reservedPolicyPrefix)
	}
	if !np.hasItems("endpoints") {
		// Loads: no load-time check counts endpoints
		// (validate_sandbox_policy, lib.rs:1402-1571 @ v0.0.111).
		c.trapf(np.pos("endpoints"), np.sub("endpoints"), CodeNoEndpoints, "list the host:port endpoints this policy allows, or remove the policy",
			"network policy %q has no endpoints, so it allows nothing", e.key)
	}
	if !np.hasItems("binaries") {
		// Loads: binaries are only matched per connection
		// (sandbox-policy.rego), never validated at load.
		c.trapf(np.pos("binaries"), np.sub("binaries"), CodeNoBinaries, "list the executables allowed to connect, e.g. `binaries: [{path: /usr/bin/curl}]`",
			"network policy %q has no binaries, and an empty binaries list matches no process", e.key)
	}
	for _, b := range np.lists["binaries"] {
		c.checkBinary(b)
	}
}

func (c *checker) checkBinary(b *obj) {
	if b.has("harness") {
		c.warnf(b.pos("harness"), b.sub("harness"), CodeIgnoredField, "remove it", "harness is deprecated and ignored")
	}
	p := b.str("path")
	switch {
	case !b.has("path"):
		// reported as a missing required field
	case strings.TrimSpace(p) == "":
		c.trapf(b.pos("path"), b.sub("path"), CodeBinaryPath, "give the absolute path of the executable, e.g. /usr/bin/gh", "binary path is empty and matches no process")
	case !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "*"):
		c.trapf(b.pos("path"), b.sub("path"), CodeBinaryPath, "binaries match the kernel-resolved absolute path: write /usr/bin/"+p,
			"binary path %q is not absolute and matches no process", p)
	}
}

// checkEndpoint runs the destination, SSRF and L7 checks on one endpoint.
func (c *checker) checkEndpoint(ep *obj) {
	if ep.broken("host") || ep.broken("port") || ep.broken("ports") || ep.broken("protocol") {
		return // the shape error is reported; semantic checks would only echo it
	}
	ports := c.checkPorts(ep)
	c.checkHost(ep, ports)
	c.checkAllowedIPs(ep)
	c.checkL7(ep, ports)
}

// checkPorts validates port/ports and returns the effective ports.
func (c *checker) checkPorts(ep *obj) []int64 {
	port := ep.num("port")
	list, nodes := ep.strs("ports")
	if port != 0 && len(list) > 0 {
		// Loads: the supervisor's JSON keeps ports and drops port
		// (opa.rs:1239-1246 @ v0.0.83), so validate_l7_policies' own
		// port+ports check (l7/mod.rs:1011-1023 @ v0.0.83) never fires.
		c.trapf(ep.pos("ports"), ep.sub("ports"), CodePortAndPorts, "use only ports, listing every port",
			"port and ports are mutually exclusive; OpenShell silently drops port when ports is set")
	}
	switch {
	case len(list) > 0:
		return c.listedPorts(ep, list, nodes)
	case port != 0:
		return []int64{port}
	case ep.has("port"):
		c.portProblem(ep.pos("port"), ep.sub("port"), "port 0 is not a destination port")
	default:
		c.missingTarget(ep, ep.node, ep.sub("port"), CodePortMissing, "add `port: 443` (or `ports: [...]`)",
			"endpoint has no port or ports, so it matches no connection")
	}
	return nil
}

// listedPorts checks the ports list of an endpoint (list, with the node
// of each entry) and returns its distinct non-zero ports.
func (c *checker) listedPorts(ep *obj, list []string, nodes []*yaml.Node) []int64 {
	var eff []int64
	for i, s := range list {
		n := intValue(s)
		path := fmt.Sprintf("%s[%d]", ep.sub("ports"), i)
		if n == 0 {
			c.portProblem(nodes[i], path, "port 0 is not a destination port")
			continue
		}
		if slices.Contains(eff, n) {
			c.warnf(nodes[i], path, CodePortRange, "list each port once", "port %d is listed twice", n)
			continue
		}
		eff = append(eff, n)
	}
	return eff
}

// portProblem reports port 0: rejected at load from v0.0.111
// (InvalidEndpointPort/MissingEndpointPort, lib.rs:1502-1521 @ v0.0.111),
// an endpoint that matches nothing before.
func (c *checker) portProblem(n *yaml.Node, path, msg string) {
	if c.supports(openshell.FeatureEndpointTargetRequired) {
		c.errorf(n, path, CodePortRange, "ports are 1..65535", "%s; OpenShell rejects the policy", msg)
		return
	}
	c.trapf(n, path, CodePortRange, "ports are 1..65535", "%s", msg)
}

// missingTarget reports an endpoint without a host or port. OpenShell
// rejects it from v0.0.111 (MissingEndpointHost/MissingEndpointPort,
// lib.rs:1484-1512 @ v0.0.111) and, for protocol mcp, at every release
// with mcp (l7/mod.rs:984-995 @ v0.0.83, :1113-1124 @ v0.0.111); otherwise
// the endpoint loads and matches nothing.
func (c *checker) missingTarget(ep *obj, n *yaml.Node, path, code, hint, msg string) {
	if c.supports(openshell.FeatureEndpointTargetRequired) || ep.str("protocol") == openshell.ProtocolMCP {
		c.errorf(n, path, code, hint, "%s; OpenShell rejects the policy", msg)
		return
	}
	c.trapf(n, path, code, hint, "%s", msg)
}

// checkHost checks an endpoint's host: absent, an IP literal, or a name.
func (c *checker) checkHost(ep *obj, ports []int64) {
	host := ep.str("host")
	hn := ep.pos("host")
	hp := ep.sub("host")
	tcp := strings.EqualFold(ep.str("protocol"), openshell.ProtocolTCP)
	ips, _ := ep.strs("allowed_ips")
	if strings.TrimSpace(host) == "" {
		c.checkNoHost(ep, hn, hp, tcp, ips)
		c.checkControlPlanePorts(ep, ports, true)
		return
	}
	lookup := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if addr, err := netip.ParseAddr(lookup); err == nil && addr.Zone() == "" {
		c.checkIPHost(hn, hp, host, addr, tcp, ips)
		c.checkControlPlanePorts(ep, ports, true)
		return
	}
	c.checkNamedHost(ep, ports, tcp, ips)
}

// checkNamedHost checks a host that is not an IP literal: a DNS name or
// pattern, well-formed and reachable.
func (c *checker) checkNamedHost(ep *obj, ports []int64, tcp bool, ips []string) {
	host, hn, hp := ep.str("host"), ep.pos("host"), ep.sub("host")
	// Explicit tcp hosts are parsed as DNS selectors at load from v0.0.111
	// (validate_tcp_dns_host_selector, lib.rs:1595-1623 @ v0.0.111):
	// whitespace, a trailing dot, braces, empty or over-long labels are
	// refused there; elsewhere a malformed host loads and matches nothing.
	c.hostHard = tcp && c.supports(openshell.FeatureProtocolTCP)
	defer func() { c.hostHard = false }()
	if !c.checkHostName(hn, hp, host) {
		return
	}
	wildcard := strings.Contains(host, "*")
	if wildcard {
		c.checkHostWildcard(hn, hp, host)
	}
	c.checkHostReachable(hn, hp, host, ips)
	exact := !wildcard && c.supports(openshell.FeaturePrivateExactHost)
	c.checkControlPlanePorts(ep, ports, len(ips) > 0 || exact || openshell.IsHostGatewayAlias(host))
}

// checkHostName reports the first way host is not a DNS name (or pattern):
// URL parts, bad labels, too long; false when it reported one.
func (c *checker) checkHostName(hn *yaml.Node, hp, host string) bool {
	if !c.checkHostSyntax(hn, hp, host) || !c.checkHostLabels(hn, hp, host) {
		return false
	}
	if len(host) > 253 {
		c.hostProblem(true, hn, hp, CodeHostSyntax, "DNS names are at most 253 bytes", "host is %d bytes long", len(host))
		return false
	}
	return true
}

// checkNoHost reports an endpoint without a host that needs one.
func (c *checker) checkNoHost(ep *obj, hn *yaml.Node, hp string, tcp bool, ips []string) {
	switch {
	case tcp:
		c.errorf(hn, hp, CodeHostMissing, "name the DNS host, e.g. `host: db.example.com`", "protocol tcp requires a DNS hostname")
	case ep.str("protocol") == openshell.ProtocolMCP:
		c.errorf(hn, hp, CodeHostMissing, "name the MCP server's host", "protocol mcp requires host; OpenShell rejects the policy")
	case len(ips) == 0:
		c.missingTarget(ep, hn, hp, CodeHostMissing, "name the host, e.g. `host: api.github.com` (or give allowed_ips for a host-less CIDR endpoint)",
			"endpoint has no host and no allowed_ips")
	}
}

// checkIPHost checks an IP-literal host: not with protocol tcp, not an
// always-blocked address, and inside allowed_ips when those are given.
func (c *checker) checkIPHost(hn *yaml.Node, hp, host string, addr netip.Addr, tcp bool, ips []string) {
	if tcp {
		c.errorf(hn, hp, CodeTCPHost, "name the DNS host; direct IP connections bypass policy DNS",
			"protocol tcp endpoint %q must use a DNS hostname, not an IP literal", host)
	}
	if openshell.AlwaysBlockedIP(addr) {
		// Loads; refused per connection (implicit_allowed_ips_for_ip_host,
		// proxy.rs:3587-3603 @ v0.0.111).
		c.trapf(hn, hp, CodeHostBlocked, "loopback, link-local (cloud metadata) and unspecified addresses are never reachable from a sandbox",
			"host %s is an always-blocked address", host)
	}
	if len(ips) > 0 && !openshell.AlwaysBlockedIP(addr) && !anyPrefixContains(ips, addr) {
		c.trapf(hn, hp, CodeHostOutsideAllowedIPs, fmt.Sprintf("add %s to allowed_ips, or drop allowed_ips: an IP-literal host is allowed on its own", host),
			"host %s is outside the endpoint's allowed_ips, which replace the implicit allowance for an IP literal: every connection is rejected", host)
	}
}

// checkHostSyntax reports a host that is not a bare name (whitespace, a
// scheme, a path, a port, a trailing dot); false when it reported one.
func (c *checker) checkHostSyntax(hn *yaml.Node, hp, host string) bool {
	switch {
	case host != strings.TrimSpace(host) || strings.ContainsAny(host, " \t\r\n"):
		c.hostProblem(true, hn, hp, CodeHostSyntax, "remove the whitespace", "host %q contains whitespace", host)
	case strings.Contains(host, "://"):
		c.trapf(hn, hp, CodeHostSyntax, "write the bare host name and put the port in port:", "host %q includes a URL scheme", host)
	case strings.ContainsAny(host, "/?#@"):
		c.trapf(hn, hp, CodeHostSyntax, "write the bare host name; match paths with L7 rules", "host %q includes a path or user part", host)
	case strings.Contains(host, ":"):
		c.trapf(hn, hp, CodeHostSyntax, "write the bare host name and put the port in port:", "host %q includes a port", host)
	case strings.HasSuffix(host, "."):
		c.hostProblem(true, hn, hp, CodeHostTrailingDot, "omit the trailing root dot: "+strings.TrimRight(host, "."),
			"host %q ends with a dot; OpenShell matches names without the root dot and such hosts have caused repeated load failures", host)
	default:
		return true
	}
	return false
}

// checkHostLabels reports the first malformed DNS label of host; false when
// it reported one.
func (c *checker) checkHostLabels(hn *yaml.Node, hp, host string) bool {
	for _, label := range strings.Split(host, ".") {
		if label == "" {
			c.hostProblem(true, hn, hp, CodeHostSyntax, "remove the empty label", "host %q has an empty DNS label", host)
			return false
		}
		if len(label) > 63 {
			c.hostProblem(true, hn, hp, CodeHostSyntax, "DNS labels are at most 63 bytes", "host %q has a label longer than 63 bytes", host)
			return false
		}
		if !c.checkHostLabelRunes(hn, hp, host, label) {
			return false
		}
	}
	return true
}

// checkHostLabelRunes reports the first rune of label not valid in a DNS
// name; false when it reported one.
func (c *checker) checkHostLabelRunes(hn *yaml.Node, hp, host, label string) bool {
	for _, r := range label {
		if !isHostLabelRune(r) {
			c.hostProblem(r == '{' || r == '}', hn, hp, CodeHostSyntax, "write internationalized names in punycode (xn--...)",
				"host %q contains %q, which is not valid in a DNS name", host, r)
			return false
		}
	}
	return true
}

// isHostLabelRune reports the runes a host label may hold: ASCII letters,
// digits, '-', '_' and the wildcard '*'.
func isHostLabelRune(r rune) bool {
	return strings.ContainsRune(hostLabelRunes, r)
}

const hostLabelRunes = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_*"

// checkHostReachable reports host names that are never reachable (loopback,
// cloud metadata) or that need allowed_ips in older releases.
func (c *checker) checkHostReachable(hn *yaml.Node, hp, host string, ips []string) {
	lower := strings.ToLower(host)
	switch {
	case lower == "localhost" || strings.HasSuffix(lower, ".localhost"):
		c.trapf(hn, hp, CodeHostBlocked, "loopback is never reachable from a sandbox; expose the service on the host's address and use allowed_ips",
			"host %q resolves to loopback, which is always blocked", host)
	case lower == "metadata.google.internal":
		c.trapf(hn, hp, CodeHostBlocked, "cloud metadata endpoints are never reachable from a sandbox",
			"host %q is a cloud metadata endpoint, which is always blocked", host)
	case !c.supports(openshell.FeaturePrivateExactHost) && len(ips) == 0 && looksInternal(lower):
		c.warnf(hn, hp, CodePrivateNeedsAllow, "add allowed_ips with the host's address, e.g. [\"{{HOST_IP}}/32\"]",
			"host %q looks internal; OpenShell %s blocks private addresses unless allowed_ips covers them (exact hosts are allowed from v0.0.53)", host, c.version)
	}
}

// checkHostWildcard applies OpenShell's host glob rules.
func (c *checker) checkHostWildcard(hn *yaml.Node, hp, host string) {
	labels := strings.Split(host, ".")
	switch first := labels[0]; {
	case host == "*" || host == "**":
		c.errorf(hn, hp, CodeHostWildcard, "name the hosts, or use a subdomain wildcard like *.example.com",
			"host wildcard %q would match every host; OpenShell rejects it", host)
	case strings.Contains(first, "**") && first != "**":
		c.errorf(hn, hp, CodeHostWildcard, "use ** as a whole label: **.example.com",
			"recursive wildcard ** must be the entire first label, got %q", host)
	case slices.ContainsFunc(labels[1:], c.badLaterWildcard):
		hint := "put the wildcard in the first label, e.g. *.example.com"
		if c.supports(openshell.FeatureMiddleLabelWildcard) {
			hint = "a later label may only be a whole * (e.g. api.*.example.com), never ** or a partial glob"
		}
		c.errorf(hn, hp, CodeHostWildcard, hint, "host wildcard in a later label is not allowed in %q", host)
	default:
		c.checkTLDWildcard(hn, hp, host, labels)
	}
}

// badLaterWildcard reports a wildcard OpenShell refuses in a label after
// the first: any, before middle-label wildcards, and from then on anything
// but a whole *.
func (c *checker) badLaterWildcard(l string) bool {
	return strings.Contains(l, "*") && (!c.supports(openshell.FeatureMiddleLabelWildcard) || l != "*")
}

// checkTLDWildcard reports a wildcard host pattern of valid labels that
// reaches the top-level domain.
func (c *checker) checkTLDWildcard(hn *yaml.Node, hp, host string, labels []string) {
	if strings.Contains(labels[len(labels)-1], "*") && len(labels) > 2 {
		c.trapf(hn, hp, CodeTLDWildcard, "name the top-level domain: a wildcard there matches the name under every TLD (example.evil too)",
			"wildcard in the top-level label of %q; OpenShell accepts it, but it is a TLD wildcard", host)
		return
	}
	if len(labels) <= 2 {
		c.errorf(hn, hp, CodeTLDWildcard, "wildcard below a registrable domain, e.g. *.example.com",
			"wildcard host %q covers a top-level domain; OpenShell rejects it (and the proxy would never match it)", host)
	}
}

// checkControlPlanePorts reports a control-plane port. The proxy's
// destination check refuses one per connection, never at load, in every
// mode that checks ports (../decide/ssrf.go's destination, from
// build_validation_plan, proxy/destination.rs:79-106 @ v0.0.111; inline at
// proxy.rs:764-1040 @ v0.0.83): a host-gateway alias, allowed_ips, an
// IP-literal host, and from v0.0.53 an exact declared host. refused says
// the endpoint's connections always take one of those modes; that is a
// trap. Otherwise (a wildcard host, or an exact one before v0.0.53,
// without allowed_ips) the default mode, reject_internal_resolved_addrs
// (proxy.rs:2676 @ v0.0.83, :3864 @ v0.0.111), has no port check: the
// port is reachable on a public address, and the warning says so.
func (c *checker) checkControlPlanePorts(ep *obj, ports []int64, refused bool) {
	for _, p := range ports {
		if !openshell.ControlPlanePort(int(p)) {
			continue
		}
		switch {
		case refused:
			c.trapf(ep.pos("port"), ep.sub("port"), CodeControlPlanePort, "control-plane ports (etcd, Kubernetes API, kubelet) are never reachable from a sandbox",
				"port %d is a blocked control-plane port", p)
		case strings.Contains(ep.str("host"), "*"):
			c.warnf(ep.pos("port"), ep.sub("port"), CodeControlPlanePort, "OpenShell refuses it for exact hosts, allowed_ips and IP literals; a wildcard match that resolves to a public address reaches it",
				"port %d is a control-plane port, open here only where the wildcard resolves to a public address", p)
		default:
			c.warnf(ep.pos("port"), ep.sub("port"), CodeControlPlanePort, "OpenShell v0.0.53 and later block it outright",
				"port %d is a control-plane port, blocked whenever the destination resolves through allowed_ips", p)
		}
	}
}

// looksInternal reports hostnames that resolve only inside a private
// network: single labels and reserved internal suffixes.
func looksInternal(host string) bool {
	if !strings.Contains(strings.Trim(host, "*."), ".") {
		return true
	}
	for _, s := range []string{".internal", ".local", ".lan", ".home.arpa", ".intranet", ".corp", ".svc", ".cluster.local"} {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

func (c *checker) checkAllowedIPs(ep *obj) {
	vals, nodes := ep.strs("allowed_ips")
	// A host-gateway alias with a trusted gateway skips allowed_ips and the
	// SSRF tiers entirely (proxy.rs:776 @ v0.0.83,
	// proxy/destination.rs:86 @ v0.0.111): its link-local address is the
	// point, not a mistake.
	gateway := openshell.IsHostGatewayAlias(ep.str("host"))
	for i, s := range vals {
		path := fmt.Sprintf("%s[%d]", ep.sub("allowed_ips"), i)
		pfx, ok := openshell.ParseAllowedIP(s)
		if !ok {
			hint := "write an address (10.0.0.5) or a CIDR (10.0.0.0/24)"
			if strings.Contains(s, "{{") {
				hint = "placeholders must be substituted before the policy reaches OpenShell"
			}
			// parse_allowed_ips fails per connection (proxy.rs:4122 @
			// v0.0.111), never at load.
			c.trapf(nodes[i], path, CodeAllowedIPSyntax, hint, "allowed_ips entry %q is not an IP address or CIDR", s)
			continue
		}
		if gateway {
			continue
		}
		if openshell.AlwaysBlockedNet(pfx) {
			// Refused per connection by parse_allowed_ips (proxy.rs:4145 @
			// v0.0.111), never at load.
			c.trapf(nodes[i], path, CodeAllowedIPBlocked, "remove the entry; SSRF hardening blocks these destinations regardless of policy",
				"allowed_ips entry %s overlaps an always-blocked range (loopback, link-local, unspecified): every connection through it is refused", s)
			continue
		}
		if pfx.Bits() < minSafePrefixBits {
			c.warnf(nodes[i], path, CodeAllowedIPBroad, "narrow it to the service's addresses, e.g. a /32",
				"allowed_ips entry %s is broader than /%d and may expose control-plane services on the same network", s, minSafePrefixBits)
		}
	}
}

// anyPrefixContains reports whether a well-formed entry of ips contains a.
func anyPrefixContains(ips []string, a netip.Addr) bool {
	for _, s := range ips {
		if p, ok := openshell.ParseAllowedIP(s); ok && p.Masked().Contains(a) {
			return true
		}
	}
	return false
}

// hostProblem reports a malformed host: an error when OpenShell parses the
// host at load (an explicit tcp host from v0.0.111) and refused says the
// parse rejects this problem, a trap otherwise.
func (c *checker) hostProblem(refused bool, n *yaml.Node, path, code, hint, format string, args ...any) {
	if refused && c.hostHard {
		c.errorf(n, path, code, hint, format+"; OpenShell rejects a protocol tcp host like this", args...)
		return
	}
	c.trapf(n, path, code, hint, format, args...)
}
