# METADATA
# title: Network rules
# description: Egress findings on network_policies endpoints and binaries.
package fullsend.rules.network

import rego.v1

import data.fullsend.lib

# A wildcard OpenShell rejects or that matches far more than one service:
# "*", "**", a wildcard outside the first label, or a wildcard over a TLD or
# a registrable domain of two labels or fewer ("*.com", "**.co").
bad_wildcard(h) if h in {"*", "**"}

bad_wildcard(h) if {
	contains(h, "*")
	not regex.match(`^\*\*?\.[^*]+$`, h)
}

bad_wildcard(h) if {
	regex.match(`^\*\*?\.[^*]+$`, h)
	count(split(trim_suffix(h, "."), ".")) <= 2
}

# METADATA
# title: Wildcard or TLD-wildcard host
# description: >-
#   A host of "*", "**", a wildcard outside the first label or a wildcard over
#   a top-level domain opens egress to the whole internet or is rejected by
#   OpenShell. Name the exact host.
# custom:
#   id: FS001
#   severity: deny
deny_wildcard_host contains f if {
	some [key, i, ep] in lib.endpoints
	bad_wildcard(ep.host)
	f := lib.finding(
		rego.metadata.rule(),
		concat("", [lib.ep_path(key, i), ".host"]),
		sprintf("host %q is a wildcard over the internet or a top-level domain", [ep.host]),
	)
}

# inference_only holds for an endpoint whose rules are all model inference
# calls (lib.inference_apis), such as Vertex AI's regional hosts.
inference_only(ep) if {
	not ep.access
	count(object.get(ep, "rules", [])) > 0
	every rule in ep.rules {
		lib.inference_rule(ep, rule)
	}
}

# METADATA
# title: Subdomain wildcard host
# description: >-
#   "*.example.com" or "**.example.com" reaches every current and future
#   subdomain. Prefer exact hosts; keep wildcards for services that shard
#   across hostnames. Endpoints that only allow model inference calls (Vertex
#   AI's regional hosts) are exempt.
# custom:
#   id: FS002
#   severity: warn
warn_subdomain_wildcard contains f if {
	some [key, i, ep] in lib.endpoints
	startswith(ep.host, "*")
	not bad_wildcard(ep.host)
	not inference_only(ep)
	f := lib.finding(
		rego.metadata.rule(),
		concat("", [lib.ep_path(key, i), ".host"]),
		sprintf("host %q matches every subdomain", [ep.host]),
	)
}

# METADATA
# title: L4-only endpoint
# description: >-
#   Without a protocol (or with protocol tcp) OpenShell passes the connection
#   through without inspecting requests: every method and path is allowed.
# custom:
#   id: FS003
#   severity: warn
warn_l4_only contains f if {
	some [key, i, ep] in lib.endpoints
	not lib.l7(ep)
	not l7_fields(ep)
	f := lib.finding(
		rego.metadata.rule(),
		lib.ep_path(key, i),
		sprintf("endpoint %s has no L7 protocol: requests are not inspected", [ep.host]),
	)
}

l7_fields(ep) if ep.access

l7_fields(ep) if count(object.get(ep, "rules", [])) > 0

l7_fields(ep) if count(object.get(ep, "deny_rules", [])) > 0

# METADATA
# title: L7 settings without a protocol
# description: >-
#   access, rules or deny_rules without protocol never reach L7 parsing:
#   OpenShell silently grants full L4 access to the host and port.
# custom:
#   id: FS004
#   severity: deny
deny_l7_without_protocol contains f if {
	some [key, i, ep] in lib.endpoints
	not lib.l7(ep)
	l7_fields(ep)
	f := lib.finding(
		rego.metadata.rule(),
		lib.ep_path(key, i),
		sprintf("endpoint %s sets access or rules without an L7 protocol: this silently grants full L4 access", [ep.host]),
	)
}

# METADATA
# title: Enforcement missing or not enforce
# description: >-
#   OpenShell treats an omitted enforcement, or any value but "enforce", as
#   audit: denied requests are logged and allowed.
# custom:
#   id: FS005
#   severity: deny
deny_enforcement contains f if {
	some [key, i, ep] in lib.endpoints
	lib.l7(ep)
	ep.protocol != "sql"
	object.get(ep, "enforcement", "") != "enforce"
	f := lib.finding(
		rego.metadata.rule(),
		concat("", [lib.ep_path(key, i), ".enforcement"]),
		sprintf("endpoint %s has enforcement %q: OpenShell only audits it", [ep.host, object.get(ep, "enforcement", "")]),
	)
}

# METADATA
# title: Plaintext port 80
# description: Port 80 carries plain HTTP; credentials and content cross the network unencrypted.
# custom:
#   id: FS006
#   severity: warn
warn_plaintext_port contains f if {
	some [key, i, ep] in lib.endpoints
	80 in lib.ports(ep)
	f := lib.finding(
		rego.metadata.rule(),
		lib.ep_path(key, i),
		sprintf("endpoint %s allows plaintext port 80", [ep.host]),
	)
}

# METADATA
# title: tls skip on an L7 endpoint
# description: >-
#   tls: skip turns off TLS termination, so OpenShell cannot read HTTPS
#   requests and its L7 rules are not applied to them.
# custom:
#   id: FS007
#   severity: deny
deny_tls_skip contains f if {
	some [key, i, ep] in lib.endpoints
	lib.l7(ep)
	ep.tls == "skip"
	f := lib.finding(
		rego.metadata.rule(),
		concat("", [lib.ep_path(key, i), ".tls"]),
		sprintf("endpoint %s skips TLS termination: its L7 rules cannot see HTTPS requests", [ep.host]),
	)
}

# METADATA
# title: Deprecated tls mode
# description: tls terminate and passthrough are no-ops since OpenShell v0.0.15; TLS is auto-detected. Remove the field.
# custom:
#   id: FS008
#   severity: warn
warn_tls_deprecated contains f if {
	some [key, i, ep] in lib.endpoints
	ep.tls in {"terminate", "passthrough"}
	f := lib.finding(
		rego.metadata.rule(),
		concat("", [lib.ep_path(key, i), ".tls"]),
		sprintf("endpoint %s sets deprecated tls: %s", [ep.host, ep.tls]),
	)
}

# Ranges OpenShell always blocks (loopback, link-local incl. cloud metadata,
# the unspecified network: is_always_blocked_ip,
# crates/openshell-core/src/net.rs:62 @ v0.0.111, applied to resolved
# addresses in crates/openshell-supervisor-network/src/proxy.rs:3909), plus
# metadata services it does not block because they are not link-local:
# AWS's IPv6 IMDS, Azure's WireServer 168.63.129.16 and Alibaba Cloud's
# 100.100.100.200. Well-known metadata host names too.
blocked_cidrs := [
	"127.0.0.0/8", "169.254.0.0/16", "0.0.0.0/8", "::1/128", "fe80::/10", "::/128", "fd00:ec2::254/128",
	"168.63.129.16/32", "100.100.100.200/32",
]

private_cidrs := ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"]

blocked_names := {"localhost", "metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"}

blocked_host(h) if lib.norm_host(h) in blocked_names

blocked_host(h) if endswith(lib.norm_host(h), ".localhost")

blocked_host(h) if {
	lib.ip_literal(h)
	some c in blocked_cidrs
	net.cidr_intersects(lib.cidr(trim(h, "[]")), c)
}

# Any other spelling of a blocked address: the engine's facts give the
# address a resolver reads in the host (2130706433, 0177.0.0.1, 0x7f.1,
# 127.1, 0, IPv4-mapped, NAT64 64:ff9b::a9fe:a9fe, 6to4; lint.HostAddr).
# OpenShell only treats canonical literals as addresses (proxy.rs:3589 @
# v0.0.111) and its always-blocked check misses NAT64 and 6to4 forms.
blocked_host(h) if {
	a := lib.host_facts(h).ip
	some c in blocked_cidrs
	net.cidr_intersects(lib.cidr(a), c)
}

blocked_ip(a) if {
	some c in blocked_cidrs
	net.cidr_intersects(lib.cidr(a), c)
}

private_addr(a) if {
	some c in private_cidrs
	net.cidr_contains(c, lib.cidr(a))
}

blocked_refs contains [concat("", [lib.ep_path(key, i), ".host"]), sprintf("host %q is a loopback, link-local or metadata address", [ep.host])] if {
	some [key, i, ep] in lib.endpoints
	blocked_host(ep.host)
}

blocked_refs contains [sprintf("%s.allowed_ips[%d]", [lib.ep_path(key, i), j]), sprintf("allowed_ips entry %q overlaps loopback, link-local or metadata ranges", [a])] if {
	some [key, i, ep] in lib.endpoints
	some j, a in object.get(ep, "allowed_ips", [])
	blocked_ip(a)
}

# METADATA
# title: Loopback, link-local or metadata address
# description: >-
#   Loopback, link-local (169.254.0.0/16, cloud metadata) and 0.0.0.0 are
#   always blocked by OpenShell, and allowed_ips overlapping them are rejected;
#   other metadata services (Azure WireServer 168.63.129.16, metadata.goog)
#   are not. Naming any of them, in any spelling (decimal, octal, hex, short
#   IPv4 forms, NAT64 or IPv4-mapped IPv6), is a mistake or an SSRF attempt.
#   It covers OpenShell's prover category link_local_reach (169.254.0.0/16,
#   fe80::/10, metadata.google.internal:
#   crates/openshell-prover/src/queries.rs:45-68 @ v0.0.111), one of its two
#   unconditional categories.
# custom:
#   id: FS009
#   severity: deny
deny_blocked_address contains f if {
	some [path, msg] in blocked_refs
	f := lib.finding(rego.metadata.rule(), path, msg)
}

# METADATA
# title: Private address
# description: >-
#   A private (RFC 1918, CGNAT, ULA) address reaches the internal network the
#   sandbox runs in. Use an exact host name, or a single /32 in allowed_ips.
# custom:
#   id: FS010
#   severity: warn
warn_private_address contains f if {
	some [key, i, ep] in lib.endpoints
	lib.ip_literal(ep.host)
	private_addr(trim(ep.host, "[]"))
	f := lib.finding(
		rego.metadata.rule(),
		concat("", [lib.ep_path(key, i), ".host"]),
		sprintf("host %q is a private address", [ep.host]),
	)
}

# METADATA
# title: allowed_ips broader than /24
# description: >-
#   An allowed_ips prefix wider than /24 (/64 for IPv6) lets the sandbox reach
#   a whole internal network. Name single addresses.
# custom:
#   id: FS011
#   severity: warn
warn_broad_allowed_ips contains f if {
	some [key, i, ep] in lib.endpoints
	some j, a in object.get(ep, "allowed_ips", [])
	broad(a)
	f := lib.finding(
		rego.metadata.rule(),
		sprintf("%s.allowed_ips[%d]", [lib.ep_path(key, i), j]),
		sprintf("allowed_ips entry %q is broader than /24", [a]),
	)
}

broad(a) if {
	not contains(a, ":")
	to_number(split(a, "/")[1]) < 24
}

broad(a) if {
	contains(a, ":")
	to_number(split(a, "/")[1]) < 64
}

# METADATA
# title: access full
# description: access full allows every method, DELETE included. Use read-only, read-write or explicit rules.
# custom:
#   id: FS012
#   severity: deny
deny_access_full contains f if {
	some [key, i, ep] in lib.endpoints
	ep.access == "full"
	f := lib.finding(
		rego.metadata.rule(),
		concat("", [lib.ep_path(key, i), ".access"]),
		sprintf("endpoint %s allows every method (access: full)", [ep.host]),
	)
}

# METADATA
# title: DELETE allowed
# description: A rule allows DELETE (or every method). Agents rarely need to delete; scope it to exact paths if they do.
# custom:
#   id: FS013
#   severity: warn
warn_delete contains f if {
	some [key, i, ep] in lib.endpoints
	some j, r in object.get(ep, "rules", [])
	upper(r.allow.method) in {"DELETE", "*"}
	f := lib.finding(
		rego.metadata.rule(),
		sprintf("%s.rules[%d]", [lib.ep_path(key, i), j]),
		sprintf("endpoint %s allows %s %s", [ep.host, r.allow.method, r.allow.path]),
	)
}

# METADATA
# title: Catch-all path on a write method
# description: A write method on "**" lets the agent change anything the credential can reach. Name the paths.
# custom:
#   id: FS015
#   severity: deny
deny_catch_all_write contains f if {
	some [key, i, ep] in lib.endpoints
	some j, r in object.get(ep, "rules", [])
	lib.write_method(r.allow.method)
	r.allow.path in {"**", "/**", "*", "/*"}
	f := lib.finding(
		rego.metadata.rule(),
		sprintf("%s.rules[%d]", [lib.ep_path(key, i), j]),
		sprintf("endpoint %s allows %s on every path", [ep.host, r.allow.method]),
	)
}

interpreter(p) if contains(p, "*")

# Interpreters, and wrappers that run any program or bytes they are given:
# shells, language runtimes, busybox/toybox applets, env, xargs, find,
# timeout and friends, awk (system(), gawk's /inet), openssl s_client,
# socat and nc. OpenShell grants a connection when the binary or any of
# its ancestors is listed (binary_allowed over exec.ancestors,
# crates/openshell-supervisor-network/data/sandbox-policy.rego:154-172 @
# v0.0.111), so everything a forking wrapper starts inherits its grant, and
# a symlinked env or nc that resolves to busybox grants every applet.
interpreter_re := concat("", [
	`^(bash|sh|dash|ash|zsh|ksh|mksh|csh|tcsh|fish|busybox|toybox|env|xargs|find|timeout|nice|nohup|stdbuf|setsid|`,
	`sudo|doas|su|chroot|flock|strace|expect|awk|gawk|mawk|nawk|busybox|openssl|socat|nc|ncat|netcat|nc\.openbsd|`,
	`nc\.traditional|python[0-9.]*|node|nodejs|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|tclsh[0-9.]*|`,
	`pwsh|deno|bun)$`,
])

interpreter(p) if regex.match(interpreter_re, lib.basename(lib.canonical_path(p)))

# METADATA
# title: Wildcard binary or interpreter can write
# description: >-
#   A binary glob, a general-purpose interpreter (bash, sh, python, node...)
#   or a wrapper that runs other programs or raw bytes (env, xargs, busybox,
#   awk, openssl, socat, nc...) runs any code, so whatever it may send, the
#   agent can send unreviewed; with OpenShell's ancestor matching, so can
#   everything it starts. Grant write endpoints to the specific tool (gh,
#   glab, git).
# custom:
#   id: FS016
#   severity: deny
deny_interpreter_writes contains f if {
	some key, np in input.network_policies
	some i, b in np.binaries
	interpreter(b.path)
	some ep in np.endpoints
	lib.writes_beyond_named_tools(ep)
	f := lib.finding(
		rego.metadata.rule(),
		lib.bin_path(key, i),
		sprintf("binary %s may write to %s", [b.path, ep.host]),
	)
}

# Hosts that receive the credentials the runner injects. Override with
# data.fullsend.credentialed_hosts (a list of host globs).
default credentialed_hosts := ["api.github.com", "github.com", "uploads.github.com", "gitlab.com", "api.anthropic.com", "*.googleapis.com", "host.docker.internal", "host.openshell.internal"]

credentialed_hosts := data.fullsend.credentialed_hosts

credentialed(h) if {
	some g in credentialed_hosts
	glob.match(g, ["."], lib.norm_host(h))
}

# A wildcard endpoint host reaches every credentialed host it covers: OpenShell's
# prover matches credential target hosts and policy hosts in both directions
# (host_patterns_overlap, crates/openshell-prover/src/credentials.rs:173-180 @
# v0.0.111), so "*.github.com" is credentialed because api.github.com is.
credentialed(h) if {
	contains(h, "*")
	some g in credentialed_hosts
	not contains(g, "*")
	glob.match(lib.norm_host(h), ["."], lib.norm_host(g))
}

raw_tool(p) if lib.basename(lib.canonical_path(p)) in {"ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet", "openssl"}

raw_tools := {"ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet", "openssl", "git"}

raw_tool_reaches(p, _) if raw_tool(p)

# git only counts where requests are not inspected: over an inspected L7
# endpoint git's HTTPS traffic is held to the method and path rules.
raw_tool_reaches(p, ep) if {
	lib.basename(lib.canonical_path(p)) == "git"
	not lib.l7(ep)
}

# METADATA
# title: git, ssh or nc reaching a credentialed host
# description: >-
#   ssh, nc, socat and friends (and git over an uninspected connection) carry
#   arbitrary bytes to a host that holds the agent's credentials, bypassing
#   L7 method and path rules. OpenShell's prover reports this as
#   l7_bypass_credentialed (crates/openshell-prover/src/queries.rs:121-138 @
#   v0.0.111), one of its two unconditional categories; its registry also
#   counts git on an inspected endpoint, which fullsend's L7 rules bound.
# custom:
#   id: FS017
#   severity: deny
deny_raw_tool_credentialed contains f if {
	some key, np in input.network_policies
	some i, b in np.binaries
	lib.basename(lib.canonical_path(b.path)) in raw_tools
	some ep in np.endpoints
	raw_tool_reaches(b.path, ep)
	credentialed(ep.host)
	f := lib.finding(
		rego.metadata.rule(),
		lib.bin_path(key, i),
		sprintf("%s can reach credentialed host %s without L7 inspection", [b.path, ep.host]),
	)
}

# by_hostport groups endpoints by [host, port], so duplicate and conflict
# checks compare only endpoints that share both.
by_hostport[[lib.norm_host(ep.host), port]] contains [key, i] if {
	some [key, i, ep] in lib.endpoints
	some port in lib.ports(ep)
}

settings(ep) := [object.get(ep, "protocol", ""), object.get(ep, "enforcement", ""), object.get(ep, "tls", "")]

# ep_route is an endpoint's path selector: OpenShell routes each request to
# the endpoint with the most specific matching path, and compares request
# settings only between selectors of equal specificity
# (crates/openshell-policy/src/ambiguity.rs:92-97 @ v0.0.111), so a graphql
# endpoint at /graphql beside REST rules on the same host does not conflict.
ep_route(ep) := object.get(ep, "path", "")

ep_at(key, i) := input.network_policies[key].endpoints[i]

# METADATA
# title: Duplicate endpoint
# description: The same host and port appear twice in one network policy; merge them.
# custom:
#   id: FS025
#   severity: warn
warn_duplicate_endpoint contains f if {
	some [host, port], group in by_hostport
	count(group) > 1
	some [key, i] in group
	some [key2, j] in group
	key == key2
	i < j
	ep_route(ep_at(key, i)) == ep_route(ep_at(key, j))
	settings(ep_at(key, i)) == settings(ep_at(key, j))
	f := lib.finding(
		rego.metadata.rule(),
		lib.ep_path(key, j),
		sprintf("%s:%d repeats %s", [host, port, lib.ep_path(key, i)]),
	)
}

# METADATA
# title: Conflicting endpoints
# description: >-
#   Two endpoints for the same host and port disagree on protocol, enforcement
#   or tls. OpenShell (v0.0.97+) rejects the policy as ambiguous.
# custom:
#   id: FS026
#   severity: deny
deny_conflicting_endpoint contains f if {
	some [host, port], group in by_hostport
	count(group) > 1
	some [key, i] in group
	some [key2, j] in group
	[key, i] < [key2, j]
	ep_route(ep_at(key, i)) == ep_route(ep_at(key2, j))
	settings(ep_at(key, i)) != settings(ep_at(key2, j))
	f := lib.finding(
		rego.metadata.rule(),
		lib.ep_path(key2, j),
		sprintf("%s:%d conflicts with %s (protocol, enforcement or tls differ)", [host, port, lib.ep_path(key, i)]),
	)
}

# METADATA
# title: Wildcard binary on a read-only endpoint
# description: >-
#   A binary glob ("/**", "/usr/bin/*") lets every program it matches, and
#   with OpenShell's ancestor matching everything they start, use the
#   endpoints. On write endpoints it is FS016 (deny); elsewhere a warning.
#   Name the binaries.
# custom:
#   id: FS028
#   severity: warn
warn_wildcard_binary contains f if {
	some key, np in input.network_policies
	some i, b in np.binaries
	contains(b.path, "*")
	count(np.endpoints) > 0
	not policy_writes(np)
	f := lib.finding(
		rego.metadata.rule(),
		lib.bin_path(key, i),
		sprintf("binary glob %s may reach %s", [b.path, concat(", ", sort({ep.host | some ep in np.endpoints}))]),
	)
}

policy_writes(np) if {
	some ep in np.endpoints
	lib.writes(ep)
}

# Names of the Docker host from inside a container: OpenShell's docker and
# kubernetes drivers map host.openshell.internal and host.docker.internal to
# the host gateway (crates/openshell-driver-docker/src/lib.rs:81-82,
# crates/openshell-driver-kubernetes/src/driver.rs:3734 @ v0.0.111), and the
# runner's {{HOST_IP}} placeholder is its address. The proxy trusts the
# gateway alias's address past its SSRF checks (detect_trusted_host_gateway
# and resolve_and_check_trusted_gateway,
# crates/openshell-supervisor-network/src/proxy.rs:3643,3707 @ v0.0.111), so
# the policy's port is the only thing between the agent and every service
# listening on the host.
host_gateway(h) if lib.norm_host(h) in {"host.docker.internal", "host.openshell.internal", "gateway.docker.internal"}

host_gateway(h) if regex.match(`^\{\{\s*HOST_IP\s*\}\}$`, h)

# Ports of the host services agents may use: fullsend's forge proxy (8081)
# and spawn service (8082). Override with data.fullsend.host_ports.
default host_ports := [8081, 8082]

host_ports := data.fullsend.host_ports

docker_api(port) := " (the Docker Engine API: root on the host)" if port in {2375, 2376}

docker_api(port) := "" if not port in {2375, 2376}

# METADATA
# title: Host gateway on an undeclared port
# description: >-
#   host.docker.internal, host.openshell.internal and {{HOST_IP}} reach the
#   machine the sandbox runs on, where OpenShell's SSRF checks do not apply to
#   what listens. Only the ports of declared host services
#   (data.fullsend.host_ports, default the forge proxy 8081 and the spawn
#   service 8082) belong there; 2375/2376 is the Docker Engine API.
# custom:
#   id: FS029
#   severity: deny
deny_host_gateway_port contains f if {
	some [key, i, ep] in lib.endpoints
	host_gateway(ep.host)
	some port in lib.ports(ep)
	not port in host_ports
	f := lib.finding(
		rego.metadata.rule(),
		lib.ep_path(key, i),
		sprintf("%s:%d is a host port no host service declares%s", [ep.host, port, docker_api(port)]),
	)
}

# Forge hosts: git smart HTTP (a POST to .../git-receive-pack pushes) and
# the REST APIs whose contents and git-data endpoints write commits.
# Override with data.fullsend.forge_git_hosts / forge_api_hosts. The
# {{FORGE_HOST}} placeholder (the job's GitLab host, filled in at run time)
# is a forge host whatever the lists say.
default forge_git_hosts := ["github.com", "gitlab.com"]

forge_git_hosts := data.fullsend.forge_git_hosts

default forge_api_hosts := ["api.github.com", "gitlab.com"]

forge_api_hosts := data.fullsend.forge_api_hosts

forge_placeholder(host) if lib.norm_host(host) == "{{forge_host}}"

forge_git_host(host) if lib.norm_host(host) in forge_git_hosts

forge_git_host(host) if forge_placeholder(host)

forge_api_host(host) if lib.norm_host(host) in forge_api_hosts

forge_api_host(host) if forge_placeholder(host)

push_samples := ["/o/r.git/git-receive-pack", "/o/r/git-receive-pack"]

contents_samples := [
	"/repos/o/r/contents/f", "/repos/o/r/git/refs/heads/b", "/repos/o/r/git/commits", "/repos/o/r/git/trees",
	"/repos/o/r/git/blobs", "/api/v4/projects/1/repository/files/f", "/api/v4/projects/1/repository/commits",
]

contents_re := `(/contents(/|$)|/git/(refs|commits|trees|blobs|tags)|/repository/(files|commits|branches))`

pushes(ep, _) if not lib.l7(ep)

pushes(ep, _) if ep.access in {"read-write", "full"}

pushes(ep, samples) if {
	some r in object.get(ep, "rules", [])
	lib.write_method(r.allow.method)
	writes_path(r.allow.path, samples)
}

writes_path(path, _) if contains(path, "receive-pack")

writes_path(path, samples) if {
	some sample in samples
	glob.match(path, ["/"], sample)
}

writes_path(path, samples) if {
	samples == contents_samples
	regex.match(contents_re, path)
}

git_push(ep) if {
	forge_git_host(ep.host)
	pushes(ep, push_samples)
}

# On any host, a write rule aimed at git-receive-pack is a push: the path
# names it, or matches it with a last segment that is more than a bare
# wildcard ("/**/git-*" does, "/**" does not). Git smart HTTP is the same
# protocol on every forge, self-hosted or behind a placeholder.
git_push(ep) if {
	lib.l7(ep)
	some r in object.get(ep, "rules", [])
	lib.write_method(r.allow.method)
	names_receive_pack(object.get(r.allow, "path", ""))
}

names_receive_pack(path) if contains(path, "receive-pack")

names_receive_pack(path) if {
	segments := split(path, "/")
	not segments[count(segments) - 1] in {"", "*", "**"}
	some sample in push_samples
	glob.match(path, ["/"], sample)
}

forge_push(ep) := "git push (git-receive-pack)" if git_push(ep)

forge_push(ep) := "contents or git-data writes" if {
	not git_push(ep)
	forge_api_host(ep.host)
	pushes(ep, contents_samples)
}

# METADATA
# title: Push to the forge
# description: >-
#   An endpoint on the forge lets the sandbox push: git smart HTTP's
#   git-receive-pack on github.com, gitlab.com or {{FORGE_HOST}} (L4,
#   read-write or a write rule on its path), a write rule naming
#   git-receive-pack on any host, or the REST API's contents and git-data writes
#   (/repos/*/*/contents, /git/refs|commits|trees|blobs, GitLab's
#   /repository/files|commits). Code changes leave the sandbox through the
#   runner's reviewed path, not the agent's own credentials.
# custom:
#   id: FS030
#   severity: deny
deny_forge_push contains f if {
	some [key, i, ep] in lib.endpoints
	what := forge_push(ep)
	f := lib.finding(
		rego.metadata.rule(),
		lib.ep_path(key, i),
		sprintf("endpoint %s allows %s", [ep.host, what]),
	)
}

# Private-section suffixes whose names only their operator creates (the list
# has them for cookie isolation): Google's API hosts. Override with
# data.fullsend.multi_tenant_exempt.
default multi_tenant_exempt := ["googleapis.com"]

multi_tenant_exempt := data.fullsend.multi_tenant_exempt

multi_tenant_suffix(ep) := suffix if {
	suffix := lib.host_facts(ep.host).multi_tenant_suffix
	not suffix in multi_tenant_exempt
}

multi_tenant_msg := "host %q covers every tenant of %s (a public suffix list private domain anyone can register a name under)%s"

# METADATA
# title: Write to a multi-tenant domain
# description: >-
#   A wildcard at a public suffix list private-section suffix
#   ("*.s3.amazonaws.com", "**.workers.dev", "*.ngrok-free.app",
#   "*.github.io") reaches names anyone can register: an attacker's bucket or
#   worker receives whatever the agent sends. Needs the engine's facts
#   (lint.Facts; conftest and opa get them from --write-context files).
# custom:
#   id: FS031
#   severity: deny
deny_multi_tenant_write contains f if {
	some [key, i, ep] in lib.endpoints
	suffix := multi_tenant_suffix(ep)
	lib.writes(ep)
	f := lib.finding(
		rego.metadata.rule(),
		concat("", [lib.ep_path(key, i), ".host"]),
		sprintf(multi_tenant_msg, [ep.host, suffix, ", with write methods"]),
	)
}

# METADATA
# title: Read from a multi-tenant domain
# description: >-
#   As FS031 for read-only endpoints: what the agent reads there may be
#   written by anyone (prompt injection), and reads leak data in URLs.
# custom:
#   id: FS032
#   severity: warn
warn_multi_tenant_read contains f if {
	some [key, i, ep] in lib.endpoints
	suffix := multi_tenant_suffix(ep)
	not lib.writes(ep)
	f := lib.finding(
		rego.metadata.rule(),
		concat("", [lib.ep_path(key, i), ".host"]),
		sprintf(multi_tenant_msg, [ep.host, suffix, ""]),
	)
}
