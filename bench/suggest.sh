#!/usr/bin/env bash
# `fullsend policy suggest` on a 100,000-line OpenShell log, as a sandbox
# log file (shorthand) and as OCSF JSONL, against the floor a shell user
# has: `grep -c DENIED` over the shorthand file and `jq` selecting the
# denied events of the JSONL file, in one run. Prints wall and CPU time
# (user+sys; the machine is shared, CPU is the steadier clock) and the
# ratios ours / peer. Target: policy suggest under 1 s of CPU.
#
# What is timed: the whole command: compile the agent (testdata/triage),
# read and classify every line, group the denials, plan, patch, recompile
# the patched project and check every suggestion with the decision engine.
# grep and jq only count or select; they classify, de-duplicate and check
# nothing.
#
#   bash bench/suggest.sh
#   RUNS=5 bash bench/suggest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/fullsend" ./cmd/fullsend
command -v jq >/dev/null || { echo "jq is needed (the peer tool): apt-get install jq" >&2; exit 1; }
# The log: allowed connections, L7 decisions and tracing lines, one denial
# in ten over 30 distinct requests (suggest/bench_test.go benchLog).
SUGGEST_BENCH_LOG="$work/sandbox.log" SUGGEST_BENCH_JSONL="$work/openshell-ocsf.log" \
	go test ./suggest/ -run '^TestWriteBenchLog$' -count=1 >/dev/null

median() { sort -n | awk '{a[NR] = $1} END { print a[int((NR + 1) / 2)] }'; }
# ratio A B prints A/B, or - when a side is under time's 10 ms resolution.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a < 0.01 || b < 0.01) print "-"; else printf "%.1f", a / b }'; }
# timed FILE CMD...: run CMD RUNS times, append "wall cpu" seconds to FILE.
timed() {
	local f=$1 r
	shift
	: >"$f"
	for ((r = 0; r < RUNS; r++)); do
		/usr/bin/time -f '%e %U %S' -o "$work/t" "$@" >/dev/null || true
		awk '{printf "%s %s\n", $1, $2 + $3}' "$work/t" >>"$f"
	done
}
suggest() {
	"$work/fullsend" policy suggest duplicate-detector testdata/triage \
		--set OWNER=acme --set REPO_NAME=widgets --set ISSUE_NUMBER=7 -o json --logs "$1"
}
export -f suggest
export work

timed "$work/ours.sh" bash -c 'suggest "$work/sandbox.log"'
timed "$work/ours.js" bash -c 'suggest "$work/openshell-ocsf.log"'
timed "$work/grep" grep -c DENIED "$work/sandbox.log"
timed "$work/jq" bash -c 'jq -c "select(.action_id == 2)" "$work/openshell-ocsf.log" | wc -l'

lines=$(wc -l <"$work/sandbox.log")
denials=$(grep -c DENIED "$work/sandbox.log" || true)
printf '%-26s %8s %8s\n' "" wall_s cpu_s
for x in ours.sh:"policy suggest (shorthand)" ours.js:"policy suggest (JSONL)" grep:"grep -c DENIED" jq:"jq select(.action_id==2)"; do
	f=${x%%:*}
	printf '%-26s %8.3f %8.3f\n' "${x#*:}" "$(cut -d' ' -f1 "$work/$f" | median)" "$(cut -d' ' -f2 "$work/$f" | median)"
done
oc=$(cut -d' ' -f2 "$work/ours.sh" | median)
ojc=$(cut -d' ' -f2 "$work/ours.js" | median)
gc=$(cut -d' ' -f2 "$work/grep" | median)
jc=$(cut -d' ' -f2 "$work/jq" | median)
echo "ratio cpu: suggest(shorthand)/grep $(ratio "$oc" "$gc"), suggest(JSONL)/jq $(ratio "$ojc" "$jc")"
echo "log: $lines lines, $denials denials; target: policy suggest under 1 s of CPU"
suggest "$work/sandbox.log" | jq -r '"suggest: \(.suggestions | length) suggestions, \(.refused | length) refused, \(.manual | length) manual from \(.denials | length) denial groups"'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
