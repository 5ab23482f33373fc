package suggest

import (
	"fmt"
	"net/netip"
	"path"
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
	for _, p := range []string{"python", "node", "bash", "sh", "zsh", "dash", "curl", "wget", "nc", "ncat", "netcat", "ssh", "git-remote-http", "perl", "ruby", "socat", "telnet"} {
		if b == p || strings.HasPrefix(b, p) && (p == "python" || p == "node" || p == "git-remote-http") {
			return true
		}
	}
	return false
}

// validHost accepts a DNS name (letters, digits, '-', '_', dots) or an IP
// literal.
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Zone() == ""
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// validPath accepts an absolute request path of URL path characters, with
// nothing OpenShell's globs or fullsend's placeholders would read as syntax
// (* ? [ ] { } \).
func validPath(s string) bool {
	if !strings.HasPrefix(s, "/") || len(s) > 2048 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("/-._~!$&'()+,;=:@%", rune(c)) {
			return false
		}
	}
	return !strings.Contains(s, "/../") && !strings.HasSuffix(s, "/..")
}

// validBinary accepts an absolute executable path without spaces, glob or
// control characters.
func validBinary(s string) bool {
	if !strings.HasPrefix(s, "/") || len(s) > 1024 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/-._+@", c) >= 0) {
			return false
		}
	}
	return true
}

func validMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return true
	}
	return false
}

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
