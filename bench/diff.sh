#!/usr/bin/env bash
# Time `fullsend policy diff` of two generated 1000-agent projects (both
# compiled, in parallel) against one `fullsend policy compile` of one of
# them, in one run, and print the ratio. The target (issue 23): diff within
# 1.2x of the compile.
#
# What is timed: `policy compile DIR` (load, compile, validate, lint,
# expectations, write) and `policy diff DIR DIR2` (both sides loaded,
# compiled and validated concurrently, then compared; lint and policy tests
# are the compile gate's job and do not run). DIR2 is DIR with one agent in
# twenty edited (a narrowed path), so the diff has changes to render.
#
#   bash bench/diff.sh                # 1000 agents, 3 runs
#   SIZE=100 RUNS=5 bash bench/diff.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${SIZE:-1000}
RUNS=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/fullsend" ./cmd/fullsend

# The generator of bench/compile.sh: four agent shapes, one skill each.
eval "$(sed -n '/^gen() {/,/^}/p' bench/compile.sh)"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a < 0.01 || b < 0.01) print "-"; else printf "%.2f", a / b }'; }
timed() {
	local f=$1
	shift
	/usr/bin/time -f '%e %U %S' -o "$work/t" "$@" >/dev/null
	awk '{printf "%s %s\n", $1, $2 + $3}' "$work/t" >>"$f"
}

gen "$SIZE" "$work/base"
cp -r "$work/base" "$work/head"
for ((i = 3; i < SIZE; i += 10)); do
	# agents with i%4 == 3 declare GET /v1/items/**; those with i%20 == 3 narrow it.
	[ $((i % 4)) = 3 ] && sed -i 's#GET /v1/items/\*\*#GET /v1/items/*#' "$work/head/agents/agent-$i.md"
done
: >"$work/compile" && : >"$work/diff"
for ((r = 0; r < RUNS; r++)); do
	timed "$work/compile" "$work/fullsend" policy compile "$work/base"
	timed "$work/diff" "$work/fullsend" policy diff "$work/base" "$work/head"
done
cw=$(cut -d' ' -f1 "$work/compile" | median)
cc=$(cut -d' ' -f2 "$work/compile" | median)
dw=$(cut -d' ' -f1 "$work/diff" | median)
dc=$(cut -d' ' -f2 "$work/diff" | median)
printf '%-8s %12s %12s %10s %10s %10s %10s\n' agents compile_wall compile_cpu diff_wall diff_cpu ratio_wall ratio_cpu
printf '%-8s %12.3f %12.3f %10.3f %10.3f %10s %10s\n' "$SIZE" "$cw" "$cc" "$dw" "$dc" "$(ratio "$dw" "$cw")" "$(ratio "$dc" "$cc")"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ratio = diff / compile (target: at most 1.20)"
"$work/fullsend" policy diff "$work/base" "$work/head" | tail -3 | head -1
