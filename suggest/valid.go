package suggest

import (
	"fmt"
	"net/netip"
	"path"
	"slices"
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
