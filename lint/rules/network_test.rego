package fullsend.rules.network_test

import rego.v1

import data.fullsend.rules.network as net
import data.fullsend.test as t

test_fs001_wildcard_host if {
	t.ids(net.deny_wildcard_host) == {"FS001"} with input as t.policy([t.ep({"host": "*"})], ["/usr/bin/gh"])
	t.ids(net.deny_wildcard_host) == {"FS001"} with input as t.policy([t.ep({"host": "**.com"})], ["/usr/bin/gh"])
	t.ids(net.deny_wildcard_host) == {"FS001"} with input as t.policy([t.ep({"host": "api.*.com"})], ["/usr/bin/gh"])
}

test_fs001_exact_and_subdomain_ok if {
	count(net.deny_wildcard_host) == 0 with input as t.clean
	count(net.deny_wildcard_host) == 0 with input as t.policy([t.ep({"host": "*.googleapis.com"})], ["/usr/bin/gh"])
}

test_fs002_subdomain_wildcard if {
	t.ids(net.warn_subdomain_wildcard) == {"FS002"} with input as t.policy([t.ep({"host": "*.googleapis.com"})], ["/usr/bin/gh"])
}

test_fs002_exact_or_inference_only_ok if {
	count(net.warn_subdomain_wildcard) == 0 with input as t.clean
	vertex := t.without(t.ep({"host": "*.googleapis.com", "rules": [{"allow": {"method": "POST", "path": "/v1/projects/*/locations/*/publishers/anthropic/models/**"}}]}), {"access"})
	count(net.warn_subdomain_wildcard) == 0 with input as t.policy([vertex], ["/usr/local/bin/claude"])
}

test_fs003_l4_only if {
	e := t.without(t.ep({}), {"protocol", "access", "enforcement"})
	t.ids(net.warn_l4_only) == {"FS003"} with input as t.policy([e], ["/usr/bin/gh"])
}

test_fs003_l7_ok if {
	count(net.warn_l4_only) == 0 with input as t.clean
}

test_fs004_access_without_protocol if {
	e := t.without(t.ep({}), {"protocol"})
	t.ids(net.deny_l7_without_protocol) == {"FS004"} with input as t.policy([e], ["/usr/bin/gh"])
}

test_fs004_with_protocol_ok if {
	count(net.deny_l7_without_protocol) == 0 with input as t.clean
}

test_fs005_enforcement if {
	t.ids(net.deny_enforcement) == {"FS005"} with input as t.policy([t.without(t.ep({}), {"enforcement"})], ["/usr/bin/gh"])
	t.ids(net.deny_enforcement) == {"FS005"} with input as t.policy([t.ep({"enforcement": "audit"})], ["/usr/bin/gh"])
}

test_fs005_enforce_ok if {
	count(net.deny_enforcement) == 0 with input as t.clean
}

test_fs006_port_80 if {
	t.ids(net.warn_plaintext_port) == {"FS006"} with input as t.policy([t.ep({"port": 80})], ["/usr/bin/gh"])
	t.ids(net.warn_plaintext_port) == {"FS006"} with input as t.policy([t.without(t.ep({"ports": [443, 80]}), {"port"})], ["/usr/bin/gh"])
}

test_fs006_port_443_ok if {
	count(net.warn_plaintext_port) == 0 with input as t.clean
}

test_fs007_tls_skip if {
	t.ids(net.deny_tls_skip) == {"FS007"} with input as t.policy([t.ep({"tls": "skip"})], ["/usr/bin/gh"])
}

test_fs007_no_tls_ok if {
	count(net.deny_tls_skip) == 0 with input as t.clean
}

test_fs008_tls_deprecated if {
	t.ids(net.warn_tls_deprecated) == {"FS008"} with input as t.policy([t.ep({"tls": "terminate"})], ["/usr/bin/gh"])
	t.ids(net.warn_tls_deprecated) == {"FS008"} with input as t.policy([t.ep({"tls": "passthrough"})], ["/usr/bin/gh"])
}

test_fs008_skip_is_not_deprecated if {
	count(net.warn_tls_deprecated) == 0 with input as t.policy([t.ep({"tls": "skip"})], ["/usr/bin/gh"])
}

test_fs009_blocked_address if {
	t.ids(net.deny_blocked_address) == {"FS009"} with input as t.policy([t.ep({"host": "169.254.169.254"})], ["/usr/bin/gh"])
	t.ids(net.deny_blocked_address) == {"FS009"} with input as t.policy([t.ep({"host": "LOCALHOST."})], ["/usr/bin/gh"])
	t.ids(net.deny_blocked_address) == {"FS009"} with input as t.policy([t.ep({"host": "[::1]"})], ["/usr/bin/gh"])
	t.ids(net.deny_blocked_address) == {"FS009"} with input as t.policy([t.ep({"allowed_ips": ["127.0.0.1"]})], ["/usr/bin/gh"])
	t.ids(net.deny_blocked_address) == {"FS009"} with input as t.policy([t.ep({"allowed_ips": ["0.0.0.0/0"]})], ["/usr/bin/gh"])
}

test_fs009_public_ok if {
	count(net.deny_blocked_address) == 0 with input as t.policy([t.ep({"host": "140.82.112.3", "allowed_ips": ["10.0.0.5/32"]})], ["/usr/bin/gh"])
}

test_fs010_private_address if {
	t.ids(net.warn_private_address) == {"FS010"} with input as t.policy([t.ep({"host": "192.168.1.10"})], ["/usr/bin/gh"])
}

test_fs010_public_ok if {
	count(net.warn_private_address) == 0 with input as t.policy([t.ep({"host": "140.82.112.3"})], ["/usr/bin/gh"])
}

test_fs011_broad_allowed_ips if {
	t.ids(net.warn_broad_allowed_ips) == {"FS011"} with input as t.policy([t.ep({"allowed_ips": ["10.0.0.0/16"]})], ["/usr/bin/gh"])
	t.ids(net.warn_broad_allowed_ips) == {"FS011"} with input as t.policy([t.ep({"allowed_ips": ["fd00::/48"]})], ["/usr/bin/gh"])
}

test_fs011_narrow_ok if {
	count(net.warn_broad_allowed_ips) == 0 with input as t.policy([t.ep({"allowed_ips": ["10.0.0.5/32", "10.1.0.0/24", "fd00::1"]})], ["/usr/bin/gh"])
}

test_fs012_access_full if {
	t.ids(net.deny_access_full) == {"FS012"} with input as t.policy([t.ep({"access": "full"})], ["/usr/bin/gh"])
}

test_fs012_read_write_ok if {
	count(net.deny_access_full) == 0 with input as t.policy([t.ep({"access": "read-write"})], ["/usr/bin/gh"])
}

test_fs013_delete if {
	e := t.without(t.ep({"rules": [{"allow": {"method": "delete", "path": "/repos/o/r/labels/x"}}]}), {"access"})
	t.ids(net.warn_delete) == {"FS013"} with input as t.policy([e], ["/usr/bin/gh"])
}

test_fs013_post_ok if {
	e := t.without(t.ep({"rules": [{"allow": {"method": "POST", "path": "/repos/o/r/issues"}}]}), {"access"})
	count(net.warn_delete) == 0 with input as t.policy([e], ["/usr/bin/gh"])
}

test_fs015_catch_all_write if {
	e := t.without(t.ep({"rules": [{"allow": {"method": "POST", "path": "/**"}}]}), {"access"})
	t.ids(net.deny_catch_all_write) == {"FS015"} with input as t.policy([e], ["/usr/bin/gh"])
}

test_fs015_catch_all_read_ok if {
	e := t.without(t.ep({"rules": [{"allow": {"method": "GET", "path": "/**"}}, {"allow": {"method": "POST", "path": "/repos/o/r/issues"}}]}), {"access"})
	count(net.deny_catch_all_write) == 0 with input as t.policy([e], ["/usr/bin/gh"])
}

test_fs016_interpreter_writes if {
	t.ids(net.deny_interpreter_writes) == {"FS016"} with input as t.policy([t.ep({"access": "read-write"})], ["/bin/bash"])
	t.ids(net.deny_interpreter_writes) == {"FS016"} with input as t.policy([t.ep({"access": "read-write"})], ["/usr/bin/python3.12"])
	t.ids(net.deny_interpreter_writes) == {"FS016"} with input as t.policy([t.without(t.ep({}), {"protocol", "access", "enforcement"})], ["/usr/bin/*"])
}

test_fs016_interpreter_reads_ok if {
	count(net.deny_interpreter_writes) == 0 with input as t.policy([t.ep({})], ["/usr/bin/node"])
	count(net.deny_interpreter_writes) == 0 with input as t.policy([t.ep({"access": "read-write"})], ["/usr/bin/gh"])
}

# An interpreter (node, running Claude Code) may reach an mcp endpoint whose
# state-changing rules call named tools only; a tool glob, any other method
# or no tool narrowing is still a write it may not have.
test_fs016_mcp_named_tools_ok if {
	handshake := [
		{"allow": {"method": "initialize"}}, {"allow": {"method": "notifications/initialized"}},
		{"allow": {"method": "tools/list"}},
	]
	named := t.ep({"protocol": "mcp", "rules": array.concat(handshake, [{"allow": {"method": "tools/call", "tool": "get_issue"}}])})
	count(net.deny_interpreter_writes) == 0 with input as t.policy([t.without(named, {"access"})], ["/usr/bin/node"])
	any_of := t.ep({"protocol": "mcp", "rules": [{"allow": {"method": "tools/call", "tool": {"any": ["get_issue", "list_issues"]}}}]})
	count(net.deny_interpreter_writes) == 0 with input as t.policy([t.without(any_of, {"access"})], ["/usr/bin/node"])
}

test_fs016_mcp_tool_glob_writes if {
	glob := t.ep({"protocol": "mcp", "rules": [{"allow": {"method": "tools/call", "tool": "*"}}]})
	t.ids(net.deny_interpreter_writes) == {"FS016"} with input as t.policy([t.without(glob, {"access"})], ["/usr/bin/node"])
	bare := t.ep({"protocol": "mcp", "rules": [{"allow": {"method": "tools/call"}}]})
	t.ids(net.deny_interpreter_writes) == {"FS016"} with input as t.policy([t.without(bare, {"access"})], ["/usr/bin/node"])
	other := t.ep({"protocol": "mcp", "rules": [{"allow": {"method": "resources/subscribe"}}]})
	t.ids(net.deny_interpreter_writes) == {"FS016"} with input as t.policy([t.without(other, {"access"})], ["/usr/bin/node"])
}

# The endpoint policy compile emits for mcp__server (every tool of the
# server, compile/mcp.go): the handshake, tools/list and tools/call without
# a tool. Claude Code's native executable may reach it; node (an npm
# install) may not, with or without the other runtime binaries beside it:
# no exemption for whole-server grants.
test_fs016_mcp_whole_server_compile_shape if {
	whole := t.without(t.ep({"protocol": "mcp", "rules": [
		{"allow": {"method": "initialize"}}, {"allow": {"method": "notifications/initialized"}},
		{"allow": {"method": "tools/list"}}, {"allow": {"method": "tools/call"}},
	]}), {"access"})
	count(net.deny_interpreter_writes) == 0 with input as t.policy([whole], ["/usr/local/bin/claude"])
	t.ids(net.deny_interpreter_writes) == {"FS016"} with input as t.policy([whole], ["/usr/bin/node"])
	t.ids(net.deny_interpreter_writes) == {"FS016"} with input as t.policy([whole], ["/usr/local/bin/claude", "/usr/local/bin/node"])
	starred := json.patch(whole, [{"op": "add", "path": "/rules/3/allow/tool", "value": "*"}])
	t.ids(net.deny_interpreter_writes) == {"FS016"} with input as t.policy([starred], ["/usr/bin/node"])

	# access presets on an mcp endpoint are whole-server grants too.
	preset := t.ep({"protocol": "mcp", "access": "full"})
	t.ids(net.deny_interpreter_writes) == {"FS016"} with input as t.policy([preset], ["/usr/bin/node"])
}

test_fs017_raw_tool_credentialed if {
	t.ids(net.deny_raw_tool_credentialed) == {"FS017"} with input as t.policy([t.ep({"host": "api.github.com"})], ["/usr/bin/ssh"])
	l4 := t.without(t.ep({"host": "github.com"}), {"protocol", "access", "enforcement"})
	t.ids(net.deny_raw_tool_credentialed) == {"FS017"} with input as t.policy([l4], ["/usr/bin/git"])
}

test_fs017_inspected_git_ok if {
	count(net.deny_raw_tool_credentialed) == 0 with input as t.policy([t.ep({"host": "github.com"})], ["/usr/bin/git"])
	count(net.deny_raw_tool_credentialed) == 0 with input as t.policy([t.ep({})], ["/usr/bin/nc"])
}

test_fs017_wildcard_host_covers_credentialed if {
	t.ids(net.deny_raw_tool_credentialed) == {"FS017"} with input as t.policy([t.ep({"host": "*.github.com"})], ["/usr/bin/nc"])
	t.ids(net.deny_raw_tool_credentialed) == {"FS017"} with input as t.policy([t.ep({"host": "**.github.com"})], ["/usr/bin/ssh"])
	count(net.deny_raw_tool_credentialed) == 0 with input as t.policy([t.ep({"host": "*.example.org"})], ["/usr/bin/nc"])
}

test_fs017_credentialed_hosts_from_data if {
	count(net.deny_raw_tool_credentialed) == 1 with input as t.policy([t.ep({})], ["/usr/bin/nc"])
		with data.fullsend.credentialed_hosts as ["*.example.com"]
}

test_fs025_duplicate_endpoint if {
	t.ids(net.warn_duplicate_endpoint) == {"FS025"} with input as t.policy([t.ep({}), t.ep({"host": "API.example.com"})], ["/usr/bin/gh"])
}

test_fs025_distinct_ok if {
	count(net.warn_duplicate_endpoint) == 0 with input as t.policy([t.ep({}), t.ep({"port": 8443})], ["/usr/bin/gh"])
}

test_fs026_conflicting_endpoint if {
	doc := {"version": 1, "network_policies": {
		"a": {"name": "a", "endpoints": [t.ep({})], "binaries": [{"path": "/usr/bin/gh"}]},
		"b": {"name": "b", "endpoints": [t.ep({"enforcement": "audit"})], "binaries": [{"path": "/usr/bin/curl"}]},
	}}
	t.ids(net.deny_conflicting_endpoint) == {"FS026"} with input as doc
}

test_fs026_same_settings_ok if {
	doc := {"version": 1, "network_policies": {
		"a": {"name": "a", "endpoints": [t.ep({})], "binaries": [{"path": "/usr/bin/gh"}]},
		"b": {"name": "b", "endpoints": [t.ep({"access": "read-write"})], "binaries": [{"path": "/usr/bin/curl"}]},
	}}
	count(net.deny_conflicting_endpoint) == 0 with input as doc
}

# Red-team regressions: blocked destinations in every spelling. Canonical
# literals and names are caught in Rego alone; other spellings through the
# address the engine's facts give (lint.HostAddr, TestHostAddr).
test_fs009_metadata_names_and_wireserver if {
	every h in ["metadata.goog", "METADATA.GOOG.", "168.63.129.16", "100.100.100.200", "[fd00:ec2::254]"] {
		t.ids(net.deny_blocked_address) == {"FS009"} with input as t.policy([t.ep({"host": h})], ["/usr/bin/gh"])
	}
	t.ids(net.deny_blocked_address) == {"FS009"} with input as t.policy([t.ep({"allowed_ips": ["168.63.129.16/32"]})], ["/usr/bin/gh"])
}

test_fs009_every_spelling_via_facts if {
	every h, ip in {
		"2130706433": "127.0.0.1", "0177.0.0.1": "127.0.0.1", "0x7f.1": "127.0.0.1", "127.1": "127.0.0.1",
		"0": "0.0.0.0", "2852039166": "169.254.169.254", "0xa9.0xfe.0xa9.0xfe": "169.254.169.254",
		"[64:ff9b::a9fe:a9fe]": "169.254.169.254", "::ffff:a9fe:a9fe": "169.254.169.254",
	} {
		t.ids(net.deny_blocked_address) == {"FS009"} with input as t.policy([t.ep({"host": h})], ["/usr/bin/gh"])
			with data.fullsend.facts as {"hosts": {h: {"ip": ip}}}
	}
}

test_fs009_public_spelling_ok if {
	count(net.deny_blocked_address) == 0 with input as t.policy([t.ep({"host": "134744072"})], ["/usr/bin/gh"])
		with data.fullsend.facts as {"hosts": {"134744072": {"ip": "8.8.8.8"}}}
}

# Red-team regressions: wrappers that run other programs or bytes.
test_fs016_wrappers_write if {
	every b in [
		"/bin/busybox", "/usr/bin/env", "/usr/bin/xargs", "/usr/bin/awk", "/usr/bin/gawk", "/usr/bin/mawk",
		"/usr/bin/openssl", "/usr/bin/socat", "/usr/bin/nc", "/bin/nc.openbsd", "/usr/bin/ncat", "/usr/bin/netcat",
		"/usr/bin/timeout", "/usr/bin//env", "/usr/bin/perl5.36",
	] {
		t.ids(net.deny_interpreter_writes) == {"FS016"} with input as t.policy([t.ep({"access": "read-write"})], [b])
	}
	t.ids(net.deny_interpreter_writes) == {"FS016"} with input as t.policy([t.ep({"access": "read-write"})], ["/**"])
}

test_fs016_wrapper_lookalikes_ok if {
	every b in ["/usr/bin/envsubst", "/usr/bin/gh", "/usr/local/bin/claude", "/usr/bin/awkward"] {
		count(net.deny_interpreter_writes) == 0 with input as t.policy([t.ep({"access": "read-write"})], [b])
	}
}

test_fs028_wildcard_binary_read if {
	t.ids(net.warn_wildcard_binary) == {"FS028"} with input as t.policy([t.ep({})], ["/**"])
	t.ids(net.warn_wildcard_binary) == {"FS028"} with input as t.policy([t.ep({})], ["/usr/bin/*"])
}

test_fs028_write_is_fs016_not_fs028 if {
	count(net.warn_wildcard_binary) == 0 with input as t.policy([t.ep({"access": "read-write"})], ["/usr/bin/*"])
	count(net.warn_wildcard_binary) == 0 with input as t.clean
}

test_fs029_host_gateway_port if {
	every h in ["host.docker.internal", "host.openshell.internal", "HOST.DOCKER.INTERNAL.", "{{HOST_IP}}"] {
		every port in [2375, 2376, 22, 5432] {
			t.ids(net.deny_host_gateway_port) == {"FS029"} with input as t.policy([t.ep({"host": h, "port": port})], ["/usr/bin/gh"])
		}
	}
	[f.msg | some f in net.deny_host_gateway_port][0] == "host.docker.internal:2375 is a host port no host service declares (the Docker Engine API: root on the host)" with input as t.policy([t.ep({"host": "host.docker.internal", "port": 2375})], ["/usr/bin/gh"])
}

test_fs029_declared_ports_ok if {
	count(net.deny_host_gateway_port) == 0 with input as t.policy([t.ep({"host": "host.docker.internal", "port": 8081})], ["/usr/bin/gh"])
	count(net.deny_host_gateway_port) == 0 with input as t.policy([t.ep({"host": "host.openshell.internal", "port": 8082})], ["/usr/bin/gh"])
	count(net.deny_host_gateway_port) == 0 with input as t.policy([t.ep({"host": "host.docker.internal", "port": 9000})], ["/usr/bin/gh"])
		with data.fullsend.host_ports as [9000]
}

test_fs030_forge_push if {
	rp := t.without(t.ep({"host": "github.com", "rules": [{"allow": {"method": "POST", "path": "/*/*/git-receive-pack"}}]}), {"access"})
	t.ids(net.deny_forge_push) == {"FS030"} with input as t.policy([rp], ["/usr/bin/git"])
	all := t.without(t.ep({"host": "github.com", "rules": [{"allow": {"method": "POST", "path": "/**"}}]}), {"access"})
	t.ids(net.deny_forge_push) == {"FS030"} with input as t.policy([all], ["/usr/bin/git"])
	t.ids(net.deny_forge_push) == {"FS030"} with input as t.policy([t.ep({"host": "github.com", "access": "read-write"})], ["/usr/bin/git"])
	t.ids(net.deny_forge_push) == {"FS030"} with input as t.policy([t.without(t.ep({"host": "gitlab.com"}), {"protocol", "access", "enforcement"})], ["/usr/bin/git"])
	every path in ["/repos/o/r/contents/**", "/repos/*/*/contents/*", "/repos/{{OWNER}}/{{REPO}}/contents/src/x.go", "/repos/o/r/git/refs/**", "/repos/**"] {
		e := t.without(t.ep({"host": "api.github.com", "rules": [{"allow": {"method": "PUT", "path": path}}]}), {"access"})
		t.ids(net.deny_forge_push) == {"FS030"} with input as t.policy([e], ["/usr/bin/gh"])
	}
	gl := t.without(t.ep({"host": "gitlab.com", "rules": [{"allow": {"method": "POST", "path": "/api/v4/projects/*/repository/commits"}}]}), {"access"})
	t.ids(net.deny_forge_push) == {"FS030"} with input as t.policy([gl], ["/usr/bin/glab"])
}

# git-receive-pack is a push on any host: the {{FORGE_HOST}} placeholder is a
# forge host (L4, presets and write rules), and elsewhere a write rule that
# names git-receive-pack, or matches it with more than a bare wildcard, pushes.
test_fs030_push_on_any_host if {
	every host in ["{{FORGE_HOST}}", "{{forge_host}}", "git.example.com", "host.docker.internal"] {
		every path in ["/{{OWNER}}/{{REPO_NAME}}.git/git-receive-pack", "/**/git-receive-pack", "/*/*/git-*", "/o/r.git/*-pack"] {
			e := t.without(t.ep({"host": host, "rules": [{"allow": {"method": "POST", "path": path}}]}), {"access"})
			t.ids(net.deny_forge_push) == {"FS030"} with input as t.policy([e], ["/usr/bin/git"])
		}
	}
	[f.msg | some f in net.deny_forge_push][0] == "endpoint {{FORGE_HOST}} allows git push (git-receive-pack)" with input as t.policy([t.without(t.ep({"host": "{{FORGE_HOST}}", "rules": [{"allow": {"method": "POST", "path": "/o/r.git/git-receive-pack"}}]}), {"access"})], ["/usr/bin/git"])
	t.ids(net.deny_forge_push) == {"FS030"} with input as t.policy([t.ep({"host": "{{FORGE_HOST}}", "access": "read-write"})], ["/usr/bin/git"])
	t.ids(net.deny_forge_push) == {"FS030"} with input as t.policy([t.without(t.ep({"host": "{{FORGE_HOST}}"}), {"protocol", "access", "enforcement"})], ["/usr/bin/git"])
	gl := t.without(t.ep({"host": "{{FORGE_HOST}}", "rules": [{"allow": {"method": "POST", "path": "/api/v4/projects/*/repository/commits"}}]}), {"access"})
	t.ids(net.deny_forge_push) == {"FS030"} with input as t.policy([gl], ["/usr/bin/glab"])
}

# Elsewhere a broad write rule, a fetch or a preset is not a push: the host
# may not serve git at all. The catalog's GitLab profiles on {{FORGE_HOST}}
# (notes, issue labels, merge requests) are not pushes either.
test_fs030_not_a_push_elsewhere if {
	every path in ["/**", "/*/*/*", "/o/r.git/*", "/*/*/git-upload-pack"] {
		e := t.without(t.ep({"host": "git.example.com", "rules": [{"allow": {"method": "POST", "path": path}}]}), {"access"})
		count(net.deny_forge_push) == 0 with input as t.policy([e], ["/usr/bin/git"])
	}
	count(net.deny_forge_push) == 0 with input as t.policy([t.ep({"host": "git.example.com", "access": "read-write"})], ["/usr/bin/git"])
	read := t.without(t.ep({"host": "git.example.com", "rules": [{"allow": {"method": "GET", "path": "/o/r.git/info/refs?service=git-receive-pack"}}]}), {"access"})
	count(net.deny_forge_push) == 0 with input as t.policy([read], ["/usr/bin/git"])
	catalog := t.without(
		t.ep({"host": "{{FORGE_HOST}}", "rules": [
			{"allow": {"method": "POST", "path": "/api/v4/projects/{{OWNER}}%2F{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/notes"}},
			{"allow": {"method": "PUT", "path": "/api/v4/projects/{{OWNER}}%2F{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}"}},
			{"allow": {"method": "POST", "path": "/api/v4/projects/{{OWNER}}%2F{{REPO_NAME}}/merge_requests"}},
			{"allow": {"method": "GET", "path": "/api/v4/projects/{{OWNER}}%2F{{REPO_NAME}}/**"}},
		]}),
		{"access"},
	)
	count(net.deny_forge_push) == 0 with input as t.policy([catalog], ["/usr/bin/glab"])
}

test_fs030_fetch_and_issue_writes_ok if {
	fetch := t.without(t.ep({"host": "github.com", "rules": [{"allow": {"method": "POST", "path": "/*/*/git-upload-pack"}}, {"allow": {"method": "GET", "path": "/*/*/info/refs"}}]}), {"access"})
	count(net.deny_forge_push) == 0 with input as t.policy([fetch], ["/usr/bin/git"])
	issues := t.without(t.ep({"host": "api.github.com", "rules": [{"allow": {"method": "POST", "path": "/repos/o/r/issues/*/comments"}}, {"allow": {"method": "GET", "path": "/repos/o/r/contents/**"}}]}), {"access"})
	count(net.deny_forge_push) == 0 with input as t.policy([issues], ["/usr/bin/gh"])
	count(net.deny_forge_push) == 0 with input as t.policy([t.ep({"host": "github.com"})], ["/usr/bin/git"])
}

mt_facts := {"hosts": {"*.s3.amazonaws.com": {"multi_tenant_suffix": "s3.amazonaws.com"}}}

test_fs031_multi_tenant_write_via_facts if {
	facts := mt_facts
	w := t.ep({"host": "*.s3.amazonaws.com", "access": "read-write"})
	t.ids(net.deny_multi_tenant_write) == {"FS031"} with input as t.policy([w], ["/usr/bin/aws"]) with data.fullsend.facts as facts
	count(net.warn_multi_tenant_read) == 0 with input as t.policy([w], ["/usr/bin/aws"]) with data.fullsend.facts as facts
}

test_fs032_multi_tenant_read_via_facts if {
	facts := mt_facts
	r := t.ep({"host": "*.s3.amazonaws.com"})
	t.ids(net.warn_multi_tenant_read) == {"FS032"} with input as t.policy([r], ["/usr/bin/aws"]) with data.fullsend.facts as facts
	count(net.deny_multi_tenant_write) == 0 with input as t.policy([r], ["/usr/bin/aws"]) with data.fullsend.facts as facts
}

test_fs032_exempt_and_exact_ok if {
	facts := {"hosts": {"*.googleapis.com": {"multi_tenant_suffix": "googleapis.com"}}}
	count(net.warn_multi_tenant_read) == 0 with input as t.policy([t.ep({"host": "*.googleapis.com"})], ["/usr/bin/gh"]) with data.fullsend.facts as facts
	count(net.warn_multi_tenant_read) == 0 with input as t.policy([t.ep({"host": "myorg.github.io"})], ["/usr/bin/gh"])
}

test_fs031_without_facts_silent if {
	count(net.deny_multi_tenant_write) == 0 with input as t.policy([t.ep({"host": "*.s3.amazonaws.com", "access": "read-write"})], ["/usr/bin/aws"])
}

test_fs017_host_gateway_alias_is_credentialed if {
	t.ids(net.deny_raw_tool_credentialed) == {"FS017"} with input as t.policy([t.ep({"host": "host.openshell.internal", "port": 8081})], ["/usr/bin/nc"])
}
