#!/usr/bin/env python3
"""Mine the policy documents in OpenShell's repository at a tag.

Usage: mine_files.py GIT_DIR TAG > cases-files-TAG.yaml

Every tracked *.yaml/*.yml whose top level is a policy (network_policies,
filesystem_policy or version beside one of them), and every ```yaml block
in docs (*.md, *.mdx) that is a whole policy (has a top-level version), is
a case expected to load: OpenShell ships them as loadable examples. A file
with a template placeholder ({{...}}, ${...}) is recorded with expect: skip.
overrides.yaml corrects individual verdicts.
"""
import re
import subprocess
import sys

import yaml

GIT, TAG = sys.argv[1], sys.argv[2]


def _literal(dumper, data):
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


yaml.SafeDumper.add_representer(str, _literal)


def git(*a):
    return subprocess.run(["git", "--git-dir", GIT, *a], capture_output=True, text=True).stdout


def is_policy(doc, need_version):
    if not isinstance(doc, dict):
        return False
    if need_version and "version" not in doc:
        return False
    return bool(set(doc) & {"network_policies", "filesystem_policy"}) or ("version" in doc and set(doc) <= {"version", "landlock", "process", "network_middlewares"})


def templated(text):
    return re.search(r"\{\{|\$\{", text) is not None


cases = []
files = git("ls-tree", "-r", "--name-only", TAG).split("\n")
for f in files:
    if f.endswith((".yaml", ".yml")) and not f.startswith((".github/", "deploy/", "nix/", "sdk/")):
        text = git("show", f"{TAG}:{f}")
        try:
            doc = yaml.safe_load(text)
        except Exception:
            continue
        if not is_policy(doc, False):
            continue
        c = {"name": "file:" + f, "tag": TAG, "cite": f"{f}:1@{TAG}", "expect": "ok", "source": "repo-file"}
        if templated(text):
            c["expect"], c["reason"] = "skip", "template with placeholders, substituted before load"
        c["policy"] = text
        cases.append(c)
    elif f.endswith((".md", ".mdx")) and (f.startswith(("docs/", "fern/", "examples/")) or "/" not in f):
        text = git("show", f"{TAG}:{f}")
        for m in re.finditer(r"^([ \t]*)```ya?ml[^\n]*\n(.*?)^\1```", text, re.S | re.M):
            body = m.group(2)
            if m.group(1):
                body = "\n".join(l[len(m.group(1)):] if l.startswith(m.group(1)) else l for l in body.split("\n"))
            try:
                doc = yaml.safe_load(body)
            except Exception:
                continue
            if not is_policy(doc, True):
                if isinstance(doc, dict) and "network_policies" in doc and "version" not in doc and set(doc) <= {"network_policies", "filesystem_policy", "landlock", "process", "network_middlewares"} and not templated(body):
                    # A fragment: as written OpenShell refuses it (PolicyFile.version
                    # has no default, lib.rs:58 @ v0.0.111); with version: 1 added
                    # it is what the docs mean a reader to load.
                    ln = text[: m.start()].count("\n") + 2
                    cases.append({"name": f"docfrag:{f}:{ln}", "tag": TAG, "cite": f"{f}:{ln}@{TAG}", "expect": "refused",
                                  "source": "doc-fragment", "reason": "no version: serde refuses a PolicyFile without it", "policy": body})
                    cases.append({"name": f"docfrag+v1:{f}:{ln}", "tag": TAG, "cite": f"{f}:{ln}@{TAG}", "expect": "ok",
                                  "source": "doc-fragment", "reason": "the fragment with version: 1 prepended", "policy": "version: 1\n" + body})
                continue
            ln = text[: m.start()].count("\n") + 2
            c = {"name": f"doc:{f}:{ln}", "tag": TAG, "cite": f"{f}:{ln}@{TAG}", "expect": "ok", "source": "doc-block"}
            if templated(body):
                c["expect"], c["reason"] = "skip", "template with placeholders, substituted before load"
            c["policy"] = body
            cases.append(c)
# Policies the end-to-end tests create sandboxes with (e2e/rust/tests): a
# raw string that is a whole policy and no format! template.
for f in files:
    if not (f.startswith("e2e/rust/tests/") and f.endswith(".rs")):
        continue
    src = git("show", f"{TAG}:{f}")
    for m in re.finditer(r'(?<![A-Za-z0-9_])r(#*)"(.*?)"\1', src, re.S):
        body = m.group(2)
        if re.search(r"\{[A-Za-z_0-9]*\}", body) or "{{" in body:
            continue
        try:
            doc = yaml.safe_load(body)
        except Exception:
            continue
        if not is_policy(doc, False):
            continue
        ln = src[: m.start()].count("\n") + 1
        cases.append({"name": f"e2e:{f}:{ln}", "tag": TAG, "cite": f"{f}:{ln}@{TAG}", "expect": "ok", "source": "e2e", "policy": body})
yaml.safe_dump(cases, sys.stdout, sort_keys=False, width=1000)
