#!/usr/bin/env python3
"""Mine OpenShell's own load/validation test inputs into upstream-load cases.

Usage: mine.py GIT_DIR TAG > mined-TAG.yaml

Reads OpenShell at TAG from its bare git mirror and writes one YAML list of
cases: {name, tag, cite, expect: ok|refused, source, policy}. The policy is
the test's input document re-serialized as a full policy (version: 1 added
when the test input is OPA data without it); the expectation is read from the
test's own assertion (is_err / errors non-empty = refused; unwrap / expect /
errors.is_empty() = ok). The output is reviewed by hand; overrides.yaml holds
the corrections (skips, real-load verdicts) and wins over the mined verdict.
"""
import json
import re
import subprocess
import sys

import yaml

GIT, TAG = sys.argv[1], sys.argv[2]


def _literal(dumper, data):
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


yaml.SafeDumper.add_representer(str, _literal)

RUST_FILES = [
    "crates/openshell-policy/src/lib.rs",
    "crates/openshell-policy/src/l7_validate.rs",
    "crates/openshell-policy/src/middleware.rs",
    "crates/openshell-policy/src/ambiguity.rs",
    "crates/openshell-supervisor-network/src/l7/mod.rs",
    "crates/openshell-supervisor-network/src/opa.rs",
]


def show(path):
    r = subprocess.run(["git", "--git-dir", GIT, "show", f"{TAG}:{path}"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def tests_of(src):
    """Yield (name, start_line, body_text, body_start_offset) per #[test] fn."""
    lines = src.split("\n")
    starts = [i for i, l in enumerate(lines) if l.strip() == "#[test]"]
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else len(lines)
        m = None
        for j in range(s, min(s + 3, e)):
            m = re.search(r"fn (\w+)\s*\(", lines[j])
            if m:
                break
        if not m:
            continue
        yield m.group(1), s + 1, lines[s:e]


RAW = re.compile(r'(?<![A-Za-z0-9_])r(#*)"(.*?)"\1', re.S)


def json_blocks(text):
    """Yield (offset, json_text) for each serde_json::json!( ... ) block."""
    for m in re.finditer(r"json!\s*\(", text):
        i = m.end()
        depth = 1
        j = i
        instr = False
        while j < len(text) and depth:
            c = text[j]
            if instr:
                if c == "\\":
                    j += 1
                elif c == '"':
                    instr = False
            elif c == '"':
                instr = True
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            j += 1
        yield m.start(), text[i:j - 1]


def rust_json(t):
    t = re.sub(r",(\s*[}\]])", r"\1", t)
    return json.loads(t)


def verdict_after(text, off, name):
    """Guess the expectation from the assertions that follow offset off."""
    rest = text[off:]
    # stop at the next input block
    nxt = [p for p in (rest.find("json!", 10), rest.find('r#"', 10)) if p > 0]
    if nxt:
        rest = rest[: min(nxt)]
    if re.search(r"is_err\(\)|unwrap_err|expect_err|!errors\.is_empty\(\)|errors\.iter\(\)\.any|errors\[0\]|errors\.len\(\)\s*[>=]=?\s*[1-9]|\.any\(\|e\||violations", rest):
        if re.search(r"assert!\(\s*errors\.is_empty\(\)", rest):
            return None
        return "refused"
    if re.search(r"assert!\(\s*errors\.is_empty\(\)|is_ok\(\)|\.unwrap\(\)|\.expect\(\"", rest):
        return "ok"
    return None


def opa_endpoint_to_yaml(ep):
    """Undo proto_to_opa_data_json's flattening of the nested endpoint
    options (opa.rs:1987-1997 @ v0.0.111), so an OPA-data test input reads as
    the policy YAML a user would write."""
    if not isinstance(ep, dict):
        return ep
    ep = dict(ep)
    mcp = {}
    for k, yk in (("mcp_strict_tool_names", "strict_tool_names"), ("mcp_allow_all_known_mcp_methods", "allow_all_known_mcp_methods")):
        if k in ep:
            mcp[yk] = ep.pop(k)
    if "json_rpc_max_body_bytes" in ep:
        v = ep.pop("json_rpc_max_body_bytes")
        if ep.get("protocol") == "mcp":
            mcp["max_body_bytes"] = v
        else:
            ep["json_rpc"] = {"max_body_bytes": v}
    if mcp:
        ep["mcp"] = mcp
    for key in ("rules", "deny_rules"):
        for r in ep.get(key) or []:
            body = r.get("allow") if key == "rules" and isinstance(r, dict) else r
            if not isinstance(body, dict):
                continue
            for mk in ("query", "params"):
                m = body.get(mk)
                if isinstance(m, dict):
                    body[mk] = {k: unglob(v) for k, v in m.items()}
    return ep


def unglob(v):
    """OPA data spells a glob matcher {glob: g} (l7_matchers_to_json); the
    policy YAML spells it as the bare string g."""
    if isinstance(v, dict) and set(v) == {"glob"}:
        return v["glob"]
    return v


def as_policy(doc):
    if not isinstance(doc, dict):
        return None
    for pol in (doc.get("network_policies") or {}).values() if isinstance(doc.get("network_policies"), dict) else []:
        if isinstance(pol, dict) and isinstance(pol.get("endpoints"), list):
            pol["endpoints"] = [opa_endpoint_to_yaml(e) for e in pol["endpoints"]]
    keys = set(doc)
    if not keys & {"network_policies", "filesystem_policy", "version", "process", "landlock", "network_middlewares"}:
        return None
    if "version" not in doc:
        doc = {"version": 1, **doc}
    return doc


def emit(cases, name, cite, expect, source, doc):
    cases.append({"name": name, "tag": TAG, "cite": cite, "expect": expect, "source": source,
                  "policy": yaml.safe_dump(doc, sort_keys=False, width=1000)})


def main():
    cases = []
    for f in RUST_FILES:
        src = show(f)
        if src is None:
            continue
        for name, line, body in tests_of(src):
            text = "\n".join(body)
            n = 0
            for m in RAW.finditer(text):
                try:
                    doc = yaml.safe_load(m.group(2))
                except Exception:
                    continue
                doc = as_policy(doc)
                if doc is None:
                    continue
                ln = line + text[: m.start()].count("\n")
                cm = re.search(r"const (\w+): &str =\s*$", text[: m.start()])
                if cm:
                    # A shared fixture between tests: it loads if some test
                    # builds an engine from it with from_strings and unwraps.
                    cname = cm.group(1)
                    used = re.search(r"from_strings\w*\(\s*TEST_POLICY,\s*" + cname + r"\b[^;]*?\)\s*\.(unwrap|expect)\(", src, re.S)
                    emit(cases, f"const:{cname}", f"{f}:{ln}@{TAG}", "ok" if used else "review", "rust-raw", doc)
                    continue
                v = verdict_after(text, m.end(), name)
                n += 1
                emit(cases, f"{name}#{n}", f"{f}:{ln}@{TAG}", v or "review", "rust-raw", doc)
            for off, jt in json_blocks(text):
                try:
                    doc = rust_json(jt)
                except Exception:
                    continue
                doc = as_policy(doc)
                if doc is None:
                    continue
                ln = line + text[:off].count("\n")
                v = verdict_after(text, off, name)
                n += 1
                emit(cases, f"{name}#{n}", f"{f}:{ln}@{TAG}", v or "review", "rust-json", doc)
    yaml.safe_dump(cases, sys.stdout, sort_keys=False, width=1000)


main()
