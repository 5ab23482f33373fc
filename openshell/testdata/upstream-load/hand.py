#!/usr/bin/env python3
"""Hand transcriptions of OpenShell tests that build their policy in Rust
(restrictive_default_policy() plus edits, ambiguity.rs's policy_with), written
out as the policy YAML a user would write. Writes cases-hand.yaml.

Where a test checks one validator in isolation (find_endpoint_ambiguities),
the transcription adds the fields the rest of the load needs (access: full
on a bare rest endpoint, a rule on graphql/json-rpc/mcp) and says so in the
reason, so that the case exercises only what the test checks.
"""
import sys

import yaml


def _literal(dumper, data):
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


yaml.SafeDumper.add_representer(str, _literal)

LIB = "crates/openshell-policy/src/lib.rs"
AMB = "crates/openshell-policy/src/ambiguity.rs"

# restrictive_default_policy() (lib.rs @ both tags), spelt out.
HEAD = {
    "version": 1,
    "filesystem_policy": {"include_workdir": True, "read_only": ["/usr", "/lib", "/etc"], "read_write": ["/sandbox", "/tmp"]},
    "landlock": {"compatibility": "best_effort"},
    "process": {"run_as_user": "sandbox", "run_as_group": "sandbox"},
}

cases = []


def add(name, tag, line, f, expect, doc, reason=""):
    c = {"name": name, "tag": tag, "cite": f"{f}:{line}@{tag}", "expect": expect, "source": "hand"}
    if reason:
        c["reason"] = reason
    c["policy"] = yaml.safe_dump(doc, sort_keys=False, width=10000)
    cases.append(c)


def pol(**over):
    d = {k: (dict(v) if isinstance(v, dict) else v) for k, v in HEAD.items()}
    for k, v in over.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    return d


def one(ep, key="bad"):
    return pol(network_policies={key: {"name": key, "endpoints": [ep], "binaries": [{"path": "/usr/bin/curl"}]}})


def fs(ro, rw):
    return {"include_workdir": True, "read_only": ro, "read_write": rw}


# --- lib.rs validate_sandbox_policy tests (line @ v0.0.83, line @ v0.0.111) ---
lib = [
    ("validate_rejects_root_run_as_user", 1645, 2155, "refused", pol(process={"run_as_user": "root", "run_as_group": "sandbox"})),
    ("validate_rejects_uid_zero", 1662, 2172, "refused", pol(process={"run_as_user": "0", "run_as_group": "0"})),
    ("validate_rejects_non_sandbox_user", 1673, 2470, "refused", pol(process={"run_as_user": "nobody", "run_as_group": "nogroup"})),
    ("validate_accepts_sandbox_identity", None, None, "ok", pol()),
    ("validate_rejects_path_traversal", 1695, 2492, "refused", pol(filesystem_policy=fs(["/usr/../etc/shadow"], ["/tmp"]))),
    ("validate_rejects_relative_paths", 1711, 2508, "refused", pol(filesystem_policy=fs(["usr/lib"], ["/tmp"]))),
    ("validate_rejects_overly_broad_read_write_path", 1727, 2524, "refused", pol(filesystem_policy=fs(["/usr"], ["/"]))),
    ("validate_rejects_too_many_paths", 1772, 2784, "refused", pol(filesystem_policy=fs([f"/path/{i}" for i in range(300)], ["/tmp"]))),
    ("validate_rejects_path_too_long", 1789, 2801, "refused", pol(filesystem_policy=fs(["/" + "a" * 5000], ["/tmp"]))),
    ("validate_rejects_tld_wildcard", 1806, 2818, "refused", one({"host": "*.com", "port": 443})),
    ("validate_rejects_double_star_tld_wildcard", 1829, 2841, "refused", one({"host": "**.com", "port": 443})),
    ("validate_accepts_subdomain_wildcard", 1852, 2891, "ok", one({"host": "*.example.com", "port": 443})),
    ("validate_rejects_credential_signing_without_signing_service", 1888, 2968, "refused", one({"host": "bedrock-runtime.us-east-1.amazonaws.com", "port": 443, "credential_signing": "sigv4"})),
    ("validate_rejects_unknown_credential_signing", 1998, 3078, "refused", one({"host": "example.amazonaws.com", "port": 443, "credential_signing": "sigv4_typo", "signing_service": "bedrock"})),
    ("validate_rejects_credential_signing_with_body_rewrite", 2023, 3103, "refused", one({"host": "bedrock-runtime.us-east-1.amazonaws.com", "port": 443, "credential_signing": "sigv4", "signing_service": "bedrock", "request_body_credential_rewrite": True})),
]
for name, l83, l111, expect, doc in lib:
    for tag, line in (("v0.0.83", l83), ("v0.0.111", l111)):
        if line is None:
            line = {"v0.0.83": 1689, "v0.0.111": 2486}[tag] if name == "validate_accepts_sandbox_identity" else 0
        add(name, tag, line, LIB, expect, doc)

# lib.rs tests present only at v0.0.111.
only111 = [
    ("validate_rejects_all_host_star_wildcards#1", 2864, "refused", one({"host": "*", "port": 443})),
    ("validate_rejects_all_host_star_wildcards#2", 2864, "refused", one({"host": "**", "port": 443})),
    ("validate_accepts_middle_label_star_wildcard", 2909, "ok", one({"host": "api.*.example.com", "port": 443})),
    ("validate_rejects_partial_middle_label_wildcard", 2927, "refused", one({"host": "api.foo*.example.com", "port": 443})),
    ("validate_accepts_credential_signing_with_signing_service", 2993, "ok", one({"host": "bedrock-runtime.us-east-1.amazonaws.com", "port": 443, "credential_signing": "sigv4", "signing_service": "bedrock"})),
    ("validate_accepts_sigv4_body_with_signing_service", 3013, "ok", one({"host": "bedrock-runtime.us-east-1.amazonaws.com", "port": 443, "credential_signing": "sigv4:body", "signing_service": "bedrock"})),
    ("validate_accepts_sigv4_no_body_with_signing_service", 3033, "ok", one({"host": "s3.us-east-1.amazonaws.com", "port": 443, "credential_signing": "sigv4:no_body", "signing_service": "s3"})),
    ("validate_rejects_sigv4_no_body_without_signing_service", 3053, "refused", one({"host": "s3.us-east-1.amazonaws.com", "port": 443, "credential_signing": "sigv4:no_body"})),
    ("validate_rejects_ip_literal_hosts_for_explicit_tcp#1", 2623, "refused", one({"host": "192.0.2.10", "port": 6379, "protocol": "tcp"}, "native-tcp")),
    ("validate_rejects_ip_literal_hosts_for_explicit_tcp#2", 2623, "refused", one({"host": "2001:db8::10", "port": 6379, "protocol": "tcp"}, "native-tcp")),
    ("validate_rejects_raw_endpoint_zero_and_out_of_range_ports", 2698, "refused", one({"host": "database.example.com", "ports": [0, 65536], "protocol": "tcp"}, "invalid")),
    ("validate_rejects_raw_endpoint_without_effective_port", 2726, "refused", one({"host": "database.example.com"}, "invalid")),
    ("validate_accepts_empty_process", 2749, "ok", {"version": 1}),
    ("validate_accepts_omitted_process_fields#1", 2762, "ok", pol(process={})),
    ("validate_accepts_omitted_process_fields#2", 2762, "ok", pol(process={"run_as_user": "sandbox"})),
    ("validate_accepts_omitted_process_fields#3", 2762, "ok", pol(process={"run_as_group": "1234"})),
]
for i, h in enumerate([" db.example.com", "db.example.com.", "db..example.com", "bad name.example.com", "a" * 64 + ".example.com"]):
    only111.append((f"validate_rejects_malformed_dns_selectors_for_explicit_tcp#{i+1}", 2656, "refused", one({"host": h, "port": 6379, "protocol": "tcp"}, "native-tcp")))
for name, line, expect, doc in only111:
    add(name, "v0.0.111", line, LIB, expect, doc)


# --- ambiguity.rs find_endpoint_ambiguities tests (v0.0.111; absent at v0.0.83) ---
def pair(left, right):
    return pol(network_policies={
        "left": {"name": "left", "endpoints": [left], "binaries": [{"path": "/usr/bin/curl"}]},
        "right": {"name": "right", "endpoints": [right], "binaries": [{"path": "/usr/bin/bash"}]},
    })


def ep(host="api.example.com", port=443, **kw):
    d = {"host": host, "port": port}
    d.update(kw)
    return d


FULL = "added access: full / a minimal rule so the rest of the load accepts the endpoint"
GQL = [{"allow": {"operation_type": "query"}}]
amb = [
    # name, line@111, verdict@111, verdict@83 (no ambiguity check before v0.0.97), left, right, note
    ("disjoint_ports_do_not_overlap", 771, "ok", "ok", ep(tls="skip"), ep(port=8443), ""),
    ("compatible_request_rules_may_overlap", 779, "ok", "ok", ep(protocol="rest", tls="skip", access="read-only"), ep(protocol="rest", tls="skip", access="read-write"), ""),
    ("plain_l4_endpoint_does_not_compete_with_l7_endpoint_metadata", 791, "ok", "ok", ep(), ep(protocol="rest", enforcement="enforce", access="full"), FULL),
    ("disjoint_path_specific_protocols_may_overlap", 801, "ok", "n/a", ep(path="/graphql", protocol="graphql", rules=GQL), ep(path="/repos/**", protocol="rest", access="full"), FULL),
    ("question_mark_path_overlap_is_detected", 813, "refused", "n/a", ep(path="/v?", protocol="rest", access="full"), ep(path="/v1", protocol="graphql", rules=GQL), FULL),
    ("overlapping_character_class_paths_are_detected", 832, "refused", "n/a", ep(path="/v[12]", protocol="rest", access="full"), ep(path="/v[23]", protocol="graphql", rules=GQL), FULL),
    ("disjoint_character_class_paths_may_overlap_by_host_and_port", 847, "ok", "n/a", ep(path="/v[12]", protocol="rest", access="full"), ep(path="/v[34]", protocol="graphql", rules=GQL), FULL),
    ("more_specific_path_may_override_request_pipeline_metadata", 865, "ok", "n/a", ep(protocol="rest", enforcement="enforce", access="full"), ep(path="/graphql", protocol="graphql", enforcement="enforce", rules=GQL), FULL),
    ("exact_wildcard_tls_conflict_is_rejected", 878, "refused", "ok", ep(host="*.example.com", tls="skip"), ep(), ""),
    ("allowed_ip_conflict_is_rejected_regardless_of_order#1", 891, "ok", "ok", ep(allowed_ips=["10.0.1.0/24", "10.0.0.0/24"]), ep(allowed_ips=["10.0.0.0/24", "10.0.1.0/24"]), ""),
    ("allowed_ip_conflict_is_rejected_regardless_of_order#2", 891, "refused", "ok", ep(allowed_ips=["10.0.1.0/24", "10.0.0.0/24"]), ep(allowed_ips=["10.0.2.0/24"]), ""),
    ("credential_and_parser_conflicts_are_rejected_on_same_path", 910, "refused", "ok", ep(protocol="rest", access="full", credential_signing="sigv4", signing_service="execute-api"), ep(protocol="rest", access="full", credential_signing="sigv4", signing_service="bedrock", allow_encoded_slash=True), FULL),
    ("credential_binding_conflicts_are_rejected_on_same_endpoint", 935, "refused", "refused", ep(credential_binding={"provider": "provider-a"}), ep(credential_binding={"provider": "provider-b"}), "v0.0.83 has no credential_binding field (deny_unknown_fields)"),
    ("json_rpc_body_limit_is_compared_only_within_the_same_protocol#1", 956, "refused", "ok", ep(protocol="json-rpc", json_rpc={"max_body_bytes": 1024}, rules=[{"allow": {"method": "*"}}]), ep(protocol="mcp", mcp={"max_body_bytes": 2048}, rules=[{"allow": {"method": "tools/call"}}]), FULL),
    ("json_rpc_body_limit_is_compared_only_within_the_same_protocol#2", 956, "refused", "ok", ep(protocol="mcp", mcp={"max_body_bytes": 2048}, rules=[{"allow": {"method": "tools/call"}}]), ep(protocol="mcp", mcp={"max_body_bytes": 4096}, rules=[{"allow": {"method": "tools/call"}}]), FULL),
    ("different_binary_lists_do_not_hide_endpoint_ambiguity", 1038, "refused", "ok", ep(tls="skip"), ep(), ""),
    ("explicit_tcp_and_omitted_protocol_are_ambiguous_for_native_tcp_eligibility", 1050, "refused", "refused", ep(protocol="tcp", tls="skip"), ep(tls="skip"), "v0.0.83 does not know protocol tcp"),
]
for name, line, v111, v83, left, right, note in amb:
    add(name, "v0.0.111", line, AMB, v111, pair(left, right), note)
    if v83 != "n/a":
        r = "ambiguity.rs does not exist at v0.0.83 (find_endpoint_ambiguities from v0.0.97)"
        add(name, "v0.0.83", line, AMB, v83, pair(left, right), r + ("; " + note if note else ""))


# --- lib.rs middleware tests (v0.0.111); network_middlewares is unknown at v0.0.83 ---
def mw(implementation="openshell/regex", **kw):
    d = {"middleware": implementation, "endpoints": {"include": ["api.example.com"]}}
    d.update(kw)
    return d


def with_mw(mws, policies=None):
    d = pol(network_middlewares=mws)
    if policies:
        d["network_policies"] = policies
    return d


def skip_api(host="api.example.com"):
    return {"api": {"name": "api", "endpoints": [{"host": host, "port": 443, "tls": "skip"}], "binaries": []}}


mwcases = [
    ("validate_rejects_invalid_middleware_control_fields#1", 2183, "refused", with_mw({"": mw()})),
    ("validate_rejects_invalid_middleware_control_fields#2", 2183, "refused", with_mw({"redactor": mw("")})),
    ("validate_rejects_invalid_middleware_control_fields#3", 2183, "refused", with_mw({"redactor": mw(on_error="maybe")})),
    ("validate_rejects_invalid_middleware_control_fields#4", 2183, "refused", with_mw({"redactor": {"middleware": "openshell/regex"}})),
    ("validate_rejects_invalid_middleware_control_fields#5", 2183, "refused", with_mw({"redactor": mw(endpoints={"include": []})})),
    ("validate_rejects_duplicate_middleware_orders", 2241, "refused", with_mw({"alpha": mw(order=10), "beta": mw(order=10)})),
    ("validate_accepts_maximum_middleware_configs", 2262, "ok", with_mw({f"middleware-{i}": mw(order=i) for i in range(10)})),
    ("validate_rejects_middleware_config_over_capacity", 2275, "refused", with_mw({f"middleware-{i}": mw(order=i) for i in range(11)})),
    ("validate_accepts_maximum_middleware_selector_patterns", 2293, "ok", with_mw({"redactor": mw(endpoints={"include": ["api.example.com"], "exclude": ["excluded.example.com"] * 31})})),
    ("validate_rejects_middleware_selector_patterns_over_capacity", 2307, "refused", with_mw({"redactor": mw(endpoints={"include": ["api.example.com"], "exclude": ["excluded.example.com"] * 32})})),
    ("validate_rejects_malformed_middleware_selector_patterns", 2329, "refused", with_mw({"redactor": mw(endpoints={"include": ["api[.example.com"]})})),
    ("validate_rejects_middleware_selector_matching_tls_skip_endpoint", 2354, "refused", with_mw({"redactor": mw()}, skip_api())),
    ("validate_accepts_fail_open_middleware_selector_matching_tls_skip_endpoint", 2387, "ok", with_mw({"redactor": mw(on_error="fail_open")}, skip_api())),
    ("validate_rejects_explicit_fail_closed_middleware_on_tls_skip_endpoint", 2411, "refused", with_mw({"redactor": mw(on_error="fail_closed")}, skip_api())),
    ("validate_rejects_concrete_selector_overlapping_tls_skip_wildcard", 2439, "refused", with_mw({"redactor": mw()}, skip_api("*.example.com"))),
]
for name, line, expect, doc in mwcases:
    add(name, "v0.0.111", line, LIB, expect, doc)
# The accepted ones are refused at v0.0.83: PolicyFile has no network_middlewares
# field there and denies unknown fields (lib.rs @ v0.0.83).
for name, line, expect, doc in mwcases:
    if expect == "ok":
        add(name, "v0.0.83", line, LIB, "refused", doc, "network_middlewares does not exist at v0.0.83 (unknown field; first in v0.0.86)")


# --- l7_validate.rs validate_l7_endpoint_semantics tests (v0.0.111): the
# L7EndpointFields summary written out as an endpoint (host/port added) ---
L7V = "crates/openshell-policy/src/l7_validate.rs"


def e(**kw):
    d = {"host": "api.example.com", "port": 443}
    d.update(kw)
    return d


l7v = [
    ("valid_endpoint_produces_no_errors", 210, "ok", e(protocol="rest", access="read-only")),
    ("rejects_unknown_protocol", 216, "refused", e(protocol="ftp")),
    ("rejects_rules_and_access_together", 230, "refused", e(protocol="rest", access="full", rules=[{"allow": {"method": "GET", "path": "/**"}}])),
    ("rejects_jsonrpc_with_access_presets", 244, "refused", e(protocol="json-rpc", access="full")),
    ("rejects_mcp_with_access_presets", 262, "refused", e(protocol="mcp", access="full")),
    ("rejects_jsonrpc_without_rules", 280, "refused", e(protocol="json-rpc")),
    ("rejects_protocol_without_rules_or_access", 294, "refused", e(protocol="rest")),
    ("rejects_mcp_without_rules_when_allow_all_false", 312, "refused", e(protocol="mcp")),
    ("accepts_mcp_with_allow_all_true", 326, "ok", e(protocol="mcp", mcp={"allow_all_known_mcp_methods": True})),
    ("rejects_rules_that_deny_all", 340, "refused", e(protocol="rest", rules=[{"allow": {}}])),
    ("mcp_allow_all_with_empty_allow_not_rejected", 354, "ok", e(protocol="mcp", mcp={"allow_all_known_mcp_methods": True}, rules=[{"allow": {}}])),
    ("rejects_deny_rules_without_protocol", 371, "refused", e(deny_rules=[{"method": "POST"}])),
    ("rejects_deny_rules_without_allow_base", 389, "refused", e(protocol="rest", deny_rules=[{"method": "POST"}])),
    ("no_protocol_no_errors", 407, "ok", e()),
    ("explicit_tcp_is_valid_without_l7_fields", 421, "ok", e(host="db.example.com", port=5432, protocol="tcp")),
    ("explicit_tcp_rejects_l7_fields", 437, "refused", e(host="db.example.com", port=5432, protocol="tcp", access="full")),
    ("explicit_tcp_rejects_additional_l7_fields", 456, "refused", e(host="db.example.com", port=5432, protocol="tcp", enforcement="enforce", credential_signing="sigv4", signing_service="rds")),
]
for name, line, expect, ep_ in l7v:
    add(name, "v0.0.111", line, L7V, expect, one(ep_, "test"))

yaml.safe_dump(cases, sys.stdout, sort_keys=False, width=10000)
