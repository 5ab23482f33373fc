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


RAW = re.compile(r'r(#+)"(.*?)"\1', re.S)


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


def as_policy(doc):
    if not isinstance(doc, dict):
        return None
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
