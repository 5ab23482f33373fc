#!/usr/bin/env bash
# Compile 1, 10, 100 and 1000 generated agents with fullsend, and `cue vet`
# the same emitted policies against the same OpenShell schema, in one run.
# Prints wall and CPU time per size, ms of CPU per agent, the ratio to cue
# vet, and the per-stage split of one compile of the largest size.
#
# What is timed: `fullsend policy compile DIR`, which loads, compiles,
# validates (the offline OpenShell validator), lints (the OPA rules), runs
# the expectations and writes the bundle, all in one process. Until
# 2026-11 the script also timed a separate `fullsend policy validate` of the
# output, which validated every policy a second time; SEPARATE_VALIDATE=1
# adds it back for comparison with those numbers.
#
#   bash bench/compile.sh            # sizes 1 10 100 1000
#   SIZES="1 100" RUNS=5 bash bench/compile.sh
#   SEPARATE_VALIDATE=1 bash bench/compile.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"1 10 100 1000"}
RUNS=${RUNS:-3}
SEPARATE_VALIDATE=${SEPARATE_VALIDATE:-0}
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

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# ratio A B: A / B to two decimals, or "-" when either is under /usr/bin/time's
# 10 ms resolution (cue vet of one small file).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a < 0.01 || b < 0.01) print "-"; else printf "%.2f", a / b }'; }

# timed FILE CMD...: run CMD, append "wall cpu" seconds to FILE. CPU time
# (user+sys) is printed beside wall time because a shared 2-core machine
# makes wall time noisy; both use the same clock for both tools.
timed() {
	local f=$1
	shift
	/usr/bin/time -f '%e %U %S' -o "$work/t" "$@" >/dev/null
	awk '{printf "%s %s\n", $1, $2 + $3}' "$work/t" >>"$f"
}

printf '%-6s %10s %10s %12s %10s %10s %10s %10s\n' agents ours_wall ours_cpu ms_cpu/agent cue_wall cue_cpu ratio_wall ratio_cpu
for n in $SIZES; do
	dir="$work/p$n"
	gen "$n" "$dir"
	: >"$work/ours" && : >"$work/cue"
	for ((r = 0; r < RUNS; r++)); do
		timed "$work/ours.c" "$work/fullsend" policy compile "$dir"
		if [ "$SEPARATE_VALIDATE" = 1 ]; then
			timed "$work/ours.v" "$work/fullsend" policy validate "$dir"/policies/*.yaml
		else
			echo "0 0" >>"$work/ours.v"
		fi
		timed "$work/cue" cue vet -c "$schema" "$dir"/policies/agent-*.yaml -d '#Policy'
	done
	paste -d' ' "$work/ours.c" "$work/ours.v" | awk '{print $1 + $3, $2 + $4}' >"$work/ours"
	rm -f "$work/ours.c" "$work/ours.v"
	ow=$(cut -d' ' -f1 "$work/ours" | median)
	oc=$(cut -d' ' -f2 "$work/ours" | median)
	cw=$(cut -d' ' -f1 "$work/cue" | median)
	cc=$(cut -d' ' -f2 "$work/cue" | median)
	printf '%-6s %10.3f %10.3f %12.2f %10.3f %10.3f %10s %10s\n' "$n" "$ow" "$oc" \
		"$(echo "$oc * 1000 / $n" | bc -l)" "$cw" "$cc" "$(ratio "$cw" "$ow")" "$(ratio "$cc" "$oc")"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$SEPARATE_VALIDATE" = 1 ]; then
	echo "ours = policy compile (load, compile, validate, lint, expectations, write) + a separate policy validate"
else
	echo "ours = policy compile (load, compile, validate, lint, expectations, write)"
fi
echo "ratio = cue vet / ours; cue vet checks only the schema"
# The split of one more compile of the largest size: stages overlap (the
# lint rules compile while the project loads; validate, lint and the
# expectations run at once), so start and end matter more than the sum.
echo
echo "stages of one compile of $n agents (policy compile --timings):"
"$work/fullsend" policy compile --timings "$dir" 2>&1 >/dev/null | sed 's/^/  /'
