#!/usr/bin/env bash
# Parse the frontmatter of 10, 100 and 1000 generated agent+skill pairs with
# agentdef.Load (strict: positions, unknown keys, tool rules, sandbox blocks,
# references) and with js-yaml (the YAML parser of the Node agent tooling,
# split + load only, no checks), in the same run, both timed in-process
# over the same files on disk. Prints ms per run and the ratio ours/js-yaml.
#
#   bash bench/load.sh                 # sizes 10 100 1000
#   SIZES="100" bash bench/load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"10 100 1000"}
JSYAML=4.1.0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v node >/dev/null || { echo "node is required for the peer side" >&2; exit 1; }
(cd "$work" && npm install --silent --no-audit --no-fund "js-yaml@$JSYAML" >/dev/null 2>&1) ||
	{ echo "npm install js-yaml@$JSYAML failed" >&2; exit 1; }
cat >"$work/peer.js" <<'JS'
const fs = require('fs'), path = require('path'), yaml = require('js-yaml');
const dir = process.argv[2];
const files = [];
(function walk(d) { for (const e of fs.readdirSync(d, {withFileTypes: true})) {
  const p = path.join(d, e.name); if (e.isDirectory()) walk(p); else if (p.endsWith('.md')) files.push(p); } })(dir);
function once() {
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8');
    const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
    if (!m) throw new Error('no frontmatter: ' + f);
    yaml.load(m[1]);
  }
}
once();
let runs = 0; const t0 = process.hrtime.bigint();
while (process.hrtime.bigint() - t0 < 2000000000n) { once(); runs++; }
console.log(Number(process.hrtime.bigint() - t0) / 1e6 / runs);
JS

gen() {
	local n=$1 dir=$2 i
	mkdir -p "$dir/agents" "$dir/skills"
	for ((i = 0; i < n; i++)); do
		mkdir -p "$dir/skills/skill-$i"
		cat >"$dir/skills/skill-$i/SKILL.md" <<SKILL
---
name: skill-$i
description: Generated skill $i for the load benchmark.
allowed-tools: Read Grep Bash(git:*)
---
Skill body.
SKILL
		cat >"$dir/agents/agent-$i.md" <<AGENT
---
name: agent-$i
description: Generated agent $i for the load benchmark.
model: sonnet
tools: Bash(gh,curl,jq), Read, WebFetch(domain:docs-$i.example.com), Skill
skills: [skill-$i]
sandbox:
  tier: full
  provider: vertex
  endpoints:
    - host: api-$i.example.com
      allowed_ips: ["{{HOST_IP}}"]
      rules:
        - GET /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}
        - POST /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/comments
---
You are agent $i.
AGENT
	done
}

printf '%-6s %14s %14s %8s\n' files ours_ms js-yaml_ms ratio
for n in $SIZES; do
	dir="$work/p$n"
	gen "$n" "$dir"
	ns=$(FULLSEND_BENCH_DIR="$dir" go test ./agentdef -run '^$' -bench '^BenchmarkLoadDir$' -benchtime 2s |
		awk '/^BenchmarkLoadDir/ {print $3}')
	ours=$(awk -v ns="$ns" 'BEGIN {printf "%.2f", ns / 1e6}')
	peer=$(node "$work/peer.js" "$dir")
	printf '%-6s %14s %14.2f %8s\n' "$((2 * n))" "$ours" "$peer" "$(awk -v a="$ours" -v b="$peer" 'BEGIN {printf "%.2fx", a / b}')"
done
