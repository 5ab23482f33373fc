# METADATA
# title: fullsend lint helpers
# description: |
#   Shared helpers for the fullsend OpenShell policy rules. The input is one
#   OpenShell policy document, exactly as conftest sees the YAML file. The
#   fullsend context (agent, tier, spawns, provenance, all agents) is read from
#   data.fullsend.context; rules that need it do not fire without it.
package fullsend.lib

import rego.v1

# context is the fullsend context of the policy under test, or {} without one.
default context := {}

context := data.fullsend.context

# facts are what fullsend's engine computes in Go for the policy under test
# (lint.Facts): literal_secrets (the secret scan, FS018), strings (those
# holding "${" or "{{", for FS019/FS023, as [path, string]) and, per endpoint
# host as written, its address in any spelling (ip) and the public-suffix-list
# private suffix it reaches (multi_tenant_suffix); with a context, the agents
# the agent can start through Agent() (reachable_agents, for FS027). Under
# conftest or opa they are absent unless passed with --data
# (lint.FactsDocument): FS018 then runs its Rego scan, FS019/FS023 walk the
# document, host spellings fall back to the literal, FS027 builds the spawn
# graph, and the multi-tenant check does not run.
default facts := {}

facts := data.fullsend.facts

# host_facts returns the facts of one endpoint host, or {}.
host_facts(h) := object.get(object.get(facts, "hosts", {}), h, {})

# finding builds a conftest-compatible structured message: conftest prints
# msg and keeps the other keys as metadata. meta is rego.metadata.rule().
finding(meta, path, msg) := {
	"msg": msg,
	"id": meta.custom.id,
	"severity": meta.custom.severity,
	"title": meta.title,
	"path": path,
}

# endpoints enumerates every endpoint as [policy key, index, endpoint].
endpoints contains [key, i, ep] if {
	some key, np in input.network_policies
	some i, ep in np.endpoints
}

# binaries enumerates every binary as [policy key, index, binary path].
binaries contains [key, i, b.path] if {
	some key, np in input.network_policies
	some i, b in np.binaries
}

ep_path(key, i) := sprintf("network_policies.%s.endpoints[%d]", [key, i])

bin_path(key, i) := sprintf("network_policies.%s.binaries[%d]", [key, i])

# ports lists the ports an endpoint names (port or ports).
ports(ep) := [ep.port] if ep.port

ports(ep) := ep.ports if not ep.port

# l7 holds for endpoints whose protocol makes OpenShell parse requests.
l7(ep) if {
	ep.protocol
	ep.protocol != ""
	ep.protocol != "tcp"
}

read_methods := {"GET", "HEAD", "OPTIONS"}

# write_method holds for methods that change state; "*" matches them all.
write_method(m) if not upper(m) in read_methods

# Model inference APIs: POSTs there send prompts, they change no state the
# agent could abuse, so they do not make an endpoint "write". Entries are
# globs over the policy's own host and rule path text (a rule broader than
# the API, such as "/v1/**", does not match). Override with
# data.fullsend.inference_apis.
default inference_apis := [
	{"host": "*.googleapis.com", "path": "/v1/projects/*/locations/*/publishers/*/models/**"},
	{"host": "*.googleapis.com", "path": "/v1/projects/*/locations/*/publishers/*/models/*"},
	{"host": "*.googleapis.com", "path": "/token"},
	{"host": "oauth2.googleapis.com", "path": "/token"},
	{"host": "api.anthropic.com", "path": "/v1/messages"},
	{"host": "api.anthropic.com", "path": "/v1/messages/**"},
	{"host": "api.openai.com", "path": "/v1/responses"},
	{"host": "api.openai.com", "path": "/v1/chat/completions"},
	{"host": "sts.googleapis.com", "path": "/v1/token"},
	{"host": "iamcredentials.googleapis.com", "path": "/v1/projects/-/serviceAccounts/*"},
	{"host": "bedrock-runtime.*.amazonaws.com", "path": "/model/*/invoke"},
	{"host": "bedrock-runtime.*.amazonaws.com", "path": "/model/*/invoke-with-response-stream"},
	{"host": "bedrock-runtime.*.amazonaws.com", "path": "/model/*/converse"},
	{"host": "bedrock-runtime.*.amazonaws.com", "path": "/model/*/converse-stream"},
]

inference_apis := data.fullsend.inference_apis

inference_rule(ep, rule) if {
	upper(rule.allow.method) == "POST"
	some api in inference_apis
	glob.match(api.host, ["."], norm_host(ep.host))
	glob.match(api.path, ["/"], rule.allow.path)
}

# writes holds when an endpoint lets a request change state: any L4-only
# endpoint (no request inspection), access read-write or full, or a rule
# with a write method other than a model inference call.
writes(ep) if not l7(ep)

writes(ep) if {
	l7(ep)
	ep.access in {"read-write", "full"}
}

writes(ep) if {
	l7(ep)
	not ep.access
	some rule in object.get(ep, "rules", [])
	not rule.allow.operation_type
	write_method(object.get(rule.allow, "method", ""))
	not inference_rule(ep, rule)
	not mcp_read(ep, rule)
}

# On an mcp endpoint a rule's method is a JSON-RPC method, not an HTTP one
# (every call is a POST; OpenShell matches the body's method,
# crates/openshell-supervisor-network/src/l7/jsonrpc.rs @ v0.0.111). These
# MCP methods change nothing on the server; tools/call may, whatever tool.
mcp_read_methods := {
	"initialize", "notifications/initialized", "ping",
	"tools/list", "resources/list", "resources/templates/list", "resources/read",
	"prompts/list", "prompts/get",
}

mcp(ep) if lower(object.get(ep, "protocol", "")) == "mcp"

mcp_read(ep, rule) if {
	mcp(ep)
	object.get(rule.allow, "method", "") in mcp_read_methods
}

# mcp_named_tool_call holds for a tools/call rule narrowed to tools named
# exactly (a name, or {any: [names]}), none of them a glob.
mcp_named_tool_call(ep, rule) if {
	mcp(ep)
	rule.allow.method == "tools/call"
	named_tools(rule.allow.tool)
}

named_tools(t) if {
	is_string(t)
	not regex.match(`[*?\[{]`, t)
}

# The model's JSON spells a single name {"glob": NAME}.
named_tools(t) if {
	is_object(t)
	not t.any
	is_string(t.glob)
	not regex.match(`[*?\[{]`, t.glob)
}

named_tools(t) if {
	is_object(t)
	count(object.get(t, "any", [])) > 0
	every n in t.any {
		not regex.match(`[*?\[{]`, n)
	}
}

# writes_beyond_named_tools is writes, except that an mcp endpoint whose only
# state-changing rules call tools named exactly does not count: those calls
# are the agent's declared MCP tools, reachable through its runtime anyway.
writes_beyond_named_tools(ep) if {
	writes(ep)
	not mcp(ep)
}

writes_beyond_named_tools(ep) if {
	mcp(ep)
	ep.access in {"read-write", "full"}
}

writes_beyond_named_tools(ep) if {
	mcp(ep)
	not ep.access
	some rule in object.get(ep, "rules", [])
	not mcp_read(ep, rule)
	not mcp_named_tool_call(ep, rule)
}

# canonical_path spells a path the way the kernel resolves it, so rules see
# "//etc", "/etc//", "/etc/." and "///root" as "/etc" and "/root": repeated
# slashes and "." components collapse, a trailing slash goes. ".." is left
# alone (FS022 rejects it).
canonical_path(p) := p if {
	regex.match(`^(/[^/.][^/]*)+$`, p) # already canonical: the common case
} else := fix_root(trim_suffix(regex.replace(concat("", [p, "/"]), `/(\.?/)+`, "/"), "/"))

fix_root(c) := "/" if c == ""

fix_root(c) := c if c != ""

# A GraphQL rule writes unless it allows queries only: a mutation (or any
# operation type, "*") changes state whatever the HTTP method.
writes(ep) if {
	l7(ep)
	not ep.access
	some rule in object.get(ep, "rules", [])
	rule.allow.operation_type
	lower(rule.allow.operation_type) != "query"
}

# basename returns the last path element.
basename(p) := parts[count(parts) - 1] if parts := split(p, "/")

# hosts_equal compares hosts the way DNS does: case-insensitively, ignoring a trailing dot.
norm_host(h) := trim_suffix(lower(h), ".")

# cidr turns an IP literal or CIDR into a CIDR (a bare address is a /32 or /128).
cidr(s) := s if contains(s, "/")

cidr(s) := concat("", [s, "/32"]) if {
	not contains(s, "/")
	not contains(s, ":")
}

cidr(s) := concat("", [s, "/128"]) if {
	not contains(s, "/")
	contains(s, ":")
}

# ip_literal holds for hosts that are IPv4 or IPv6 literals.
ip_literal(h) if regex.match(`^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$`, h)

ip_literal(h) if {
	contains(h, ":")
	regex.match(`^\[?[0-9a-fA-F:.]+\]?$`, h)
}

# strings_matching enumerates the strings of the document that match a regex
# as [path, value], the path rendered the way findings name policy elements
# (only matches pay for rendering).
strings_matching(pattern) := {[render_path(p), v] |
	walk(input, [p, v])
	is_string(v)
	regex.match(pattern, v)
}

render_path(p) := concat("", [render_elem(i, e) | some i, e in p])

render_elem(_, e) := sprintf("[%d]", [e]) if is_number(e)

render_elem(i, e) := e if {
	is_string(e)
	i == 0
}

render_elem(i, e) := concat("", [".", e]) if {
	is_string(e)
	i > 0
}
