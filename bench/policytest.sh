#!/usr/bin/env bash
# Decide 10,000 requests against one policy with `fullsend policy test
# --requests` (parse, canonicalise, decide, JSON Lines out) and with the
# peer `opa eval` running a Rego decision of our own (binary, host and port,
# then the endpoint's REST deny and allow rules through glob.match; OpenShell
# decides in its own Rego, which this does not copy) over the same requests,
# pre-parsed to JSON input. Prints the best wall time of RUNS and
# the ratio opa / fullsend. Target: fullsend under 0.5 s for 10,000.
#
#   bash bench/policytest.sh
#   N=100000 RUNS=5 bash bench/policytest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-10000}
RUNS=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$(go env GOPATH)/bin:$PATH"

go build -o "$work/fullsend" ./cmd/fullsend
if ! command -v opa >/dev/null; then
	echo "installing opa (the peer tool)..." >&2
	bash .ci/install.d/40-opa.sh
fi

cat >"$work/policy.yaml" <<'YAML'
version: 1
network_policies:
  github:
    name: github
    endpoints:
      - host: api.github.com
        ports: [443]
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: "/repos/acme/widgets/issues/**"}
          - allow: {method: POST, path: "/repos/acme/widgets/issues/5/comments"}
          - allow: {method: GET, path: "/search/issues", query: {q: "repo:acme/widgets *"}}
          - allow: {method: "*", path: "/repos/acme/widgets/git/refs/heads/fullsend/*"}
        deny_rules:
          - {method: "*", path: "/repos/acme/widgets/issues/5/lock"}
    binaries:
      - path: /usr/bin/gh
  readers:
    name: readers
    endpoints:
      - host: "*.googleapis.com"
        ports: [443]
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: GET, path: "**"}
    binaries:
      - path: "/usr/local/bin/*"
YAML

# The same requests as policy-test lines and as OpenShell-style Rego input.
python3 - "$N" "$work" <<'PY'
import json, sys
n, work = int(sys.argv[1]), sys.argv[2]
base = [
    ("GET", "api.github.com", "/repos/acme/widgets/issues/{i}", {}, "/usr/bin/gh"),
    ("POST", "api.github.com", "/repos/acme/widgets/issues/{i}/comments", {}, "/usr/bin/gh"),
    ("GET", "api.github.com", "/search/issues", {"q": ["repo:acme/widgets is{i}"]}, "/usr/bin/gh"),
    ("DELETE", "api.github.com", "/repos/acme/widgets/git/refs/heads/fullsend/fix-{i}", {}, "/usr/bin/gh"),
    ("GET", "x{i}.googleapis.com", "/v1/models", {}, "/usr/local/bin/claude"),
    ("GET", "evil{i}.example.com", "/", {}, "/usr/bin/curl"),
]
lines, inputs = [], []
for i in range(n):
    m, h, p, q, b = base[i % len(base)]
    h, p = h.format(i=i), p.format(i=i)
    q = {k: [v.format(i=i) for v in vs] for k, vs in q.items()}
    qs = "&".join(f"{k}={v.replace(' ', '+')}" for k, vs in q.items() for v in vs)
    lines.append(f"{m} https://{h}{p}{'?' + qs if qs else ''} from {b}")
    inputs.append({"network": {"host": h, "port": 443}, "exec": {"path": b, "ancestors": []},
                   "request": {"method": m, "path": p, "query_params": q}})
open(f"{work}/requests.txt", "w").write("\n".join(lines) + "\n")
json.dump({"requests": inputs}, open(f"{work}/requests.json", "w"))
PY
cat >"$work/bench.rego" <<'REGO'
package bench

# Our own decision for the benchmark, not OpenShell's Rego: a request is
# allowed when some policy lists its binary and names its host and port, an
# allow rule of that endpoint fits it, and no deny rule of such an endpoint
# does. Globs go through OPA's glob.match ("." between host labels, "/"
# between path segments), which is not OpenShell's globset.

# fits_glob: a host or path pattern and the value it must match.
fits_glob(pat, seps, val) := glob.match(pat, seps, val)

# open_to: the endpoints the request's process may reach at all.
open_to(inp) := {ep |
	some pol in data.network_policies
	count([b | some b in pol.binaries; fits_glob(b.path, ["/"], inp.exec.path)]) > 0
	some ep in pol.endpoints
	inp.network.port in ep.ports
	fits_glob(lower(ep.host), ["."], lower(inp.network.host))
}

# fits: a rule's method, path and query parameters fit the request. Every
# parameter the rule names must be present, each of its values matching.
fits(req, r) if {
	upper(r.method) in {"*", upper(req.method)}
	fits_glob(r.path, ["/"], req.path)
	every key, pat in object.get(r, "query", {}) {
		vals := object.get(req.query_params, key, [])
		count(vals) > 0
		count([v | some v in vals; not fits_glob(pat, [], v)]) == 0
	}
}

verdict(inp) := "deny" if {
	some ep in open_to(inp)
	some r in object.get(ep, "deny_rules", [])
	fits(inp.request, r)
} else := "allow" if {
	some ep in open_to(inp)
	some r in object.get(ep, "rules", [])
	fits(inp.request, r.allow)
} else := "deny"

results := [verdict(inp) | some inp in data.requests]
REGO

best() {
	local b="" t s e
	for ((r = 0; r < RUNS; r++)); do
		s=$(date +%s.%N)
		"$@" >/dev/null || true
		e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc)
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
	done
	echo "$b"
}

fs=$(best "$work/fullsend" policy test --policy "$work/policy.yaml" --requests "$work/requests.txt")
op=$(best opa eval --format json -d "$work/bench.rego" -d "$work/policy.yaml" -d "$work/requests.json" 'data.bench.results')
allow_fs=$("$work/fullsend" policy test --policy "$work/policy.yaml" --requests "$work/requests.txt" | grep -c '"verdict":"allow"' || true)
allow_op=$(opa eval --format json -d "$work/bench.rego" -d "$work/policy.yaml" -d "$work/requests.json" 'data.bench.results' | grep -o '"allow"' | wc -l)
printf '%-9s %12s %12s %8s\n' requests fullsend_s opa_eval_s ratio
printf '%-9s %12.3f %12.3f %7.1fx\n' "$N" "$fs" "$op" "$(echo "$op / $fs" | bc -l)"
echo "allowed: fullsend $allow_fs, opa $allow_op (opa runs gobwas globs, not OpenShell's globset: counts may differ)"
echo "ratio = opa eval time / fullsend policy test time (higher is better for fullsend);"
echo "fullsend also parses the request lines and canonicalises paths; opa gets pre-parsed JSON input."
