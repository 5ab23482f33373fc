#!/usr/bin/env bash
# Compile + validate 1, 10, 100 and 1000 generated agents with fullsend, and
# `cue vet` the same emitted policies against the same OpenShell schema, in
# one run. Prints wall time per size, ms per agent, and the ratio to cue vet.
#
#   bash bench/compile.sh            # sizes 1 10 100 1000
#   SIZES="1 100" RUNS=5 bash bench/compile.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"1 10 100 1000"}
RUNS=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$(go env GOPATH)/bin:$PATH"

go build -o "$work/fullsend" ./cmd/fullsend
if ! command -v cue >/dev/null; then
	echo "installing the cue CLI (the peer tool)..." >&2
	go install cuelang.org/go/cmd/cue@v0.17.1
fi
schema=policycue/schema/openshell/policy.cue

# gen N DIR: N agents in four shapes (read-only, gh reader, web reader,
# proxy writer), each with its own skill.
gen() {
	local n=$1 dir=$2 i
	mkdir -p "$dir/agents" "$dir/skills"
	for ((i = 0; i < n; i++)); do
		mkdir -p "$dir/skills/skill-$i"
		cat >"$dir/skills/skill-$i/SKILL.md" <<SKILL
---
name: skill-$i
description: Generated skill $i for the compile benchmark.
allowed-tools: Read Grep
---
Skill body.
SKILL
		case $((i % 4)) in
		0) tools="Read, Grep, Bash(grep *), Bash(cat *)"; extra="" ;;
		1) tools="Bash(gh,jq), Read"; extra="" ;;
		2) tools="WebFetch(domain:docs-$i.example.com), Read"; extra="" ;;
		3) tools="Bash(curl *)"; extra="sandbox:
  tier: full
  endpoints:
    - host: api-$i.example.com
      rules:
        - GET /v1/items/**
        - POST /v1/items/{{ISSUE_NUMBER}}/notes" ;;
		esac
		cat >"$dir/agents/agent-$i.md" <<AGENT
---
name: agent-$i
description: Generated agent $i for the compile benchmark.
tools: $tools
skills: [skill-$i]
$extra
---
Agent body.
AGENT
	done
}

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '%-6s %12s %12s %12s %10s\n' agents fullsend_s ms_per_agent cue_vet_s ratio
for n in $SIZES; do
	dir="$work/p$n"
	gen "$n" "$dir"
	ours=() theirs=()
	for ((r = 0; r < RUNS; r++)); do
		t0=$(now)
		"$work/fullsend" policy compile "$dir" >/dev/null
		"$work/fullsend" policy validate "$dir"/policies/*.yaml >/dev/null
		t1=$(now)
		cue vet -c "$schema" "$dir"/policies/agent-*.yaml -d '#Policy' >/dev/null
		t2=$(now)
		ours+=("$(echo "$t1 - $t0" | bc -l)")
		theirs+=("$(echo "$t2 - $t1" | bc -l)")
	done
	o=$(printf '%s\n' "${ours[@]}" | median)
	c=$(printf '%s\n' "${theirs[@]}" | median)
	printf '%-6s %12.3f %12.2f %12.3f %10.2f\n' "$n" "$o" "$(echo "$o * 1000 / $n" | bc -l)" "$c" "$(echo "$c / $o" | bc -l)"
done
echo "ratio = cue vet time / fullsend compile+validate time (higher is better for fullsend)"
