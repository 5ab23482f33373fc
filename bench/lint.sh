#!/usr/bin/env bash
# Lint 1, 10, 100 and 1000 OpenShell policies with `fullsend policy lint`
# (in-process OPA, query prepared once) and with `conftest test` running the
# same embedded rules (lint/rules) on the same files, in one run, and print
# the ratios. Each figure is the best of $RUNS runs, process start included on
# both sides: wall clock, and CPU time (user+sys), which stays meaningful on
# a loaded machine.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
RUNS="${RUNS:-3}"
SIZES="${SIZES:-1 10 100 1000}"
gobin="$(go env GOPATH)/bin"
conftest="$(command -v conftest || echo "$gobin/conftest")"
if [ ! -x "$conftest" ]; then
	bash "$root/.ci/install.d/40-opa.sh"
	conftest="$gobin/conftest"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/fullsend" ./cmd/fullsend)
echo "load average: $(cut -d" " -f1-3 /proc/loadavg)"

# lint/testdata/facts is left out: its findings need the facts the engine
# computes (conftest gets them only from per-policy --write-context files).
mapfile -t corpus < <(ls "$root"/lint/testdata/bad/*.yaml "$root"/lint/testdata/good/*.yaml "$root"/openshell/decide/testdata/policy.yaml)

# best CMD...: "WALL_MS CPU_MS", each the minimum over $RUNS runs (exit status
# ignored: both tools exit 1 when they find something).
best() {
	local bw="" bc="" t w c
	for _ in $(seq "$RUNS"); do
		t=$( { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>&1 || true; } 2>&1 )
		w=$(awk '{printf "%d", $1 * 1000}' <<<"$t")
		c=$(awk '{printf "%d", ($2 + $3) * 1000}' <<<"$t")
		if [ -z "$bw" ] || [ "$w" -lt "$bw" ]; then bw=$w; fi
		if [ -z "$bc" ] || [ "$c" -lt "$bc" ]; then bc=$c; fi
	done
	echo "$bw $bc"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) b = 1; printf "%.1fx", a / b }'; }

printf "%-9s %10s %10s %7s   %10s %10s %7s\n" policies "wall:ours" conftest ratio "cpu:ours" conftest ratio
for n in $SIZES; do
	dir="$work/p$n"
	mkdir -p "$dir"
	for i in $(seq 0 $((n - 1))); do
		cp "${corpus[$((i % ${#corpus[@]}))]}" "$dir/p$(printf %04d "$i").yaml"
	done
	# Sanity: both tools must see the same number of findings.
	ours=$("$work/fullsend" policy lint -o json "$dir" 2>/dev/null | grep -c '"rule_id"' || true)
	theirs=$("$conftest" test --all-namespaces --no-color -o json -p "$root/lint/rules" "$dir" 2>/dev/null | grep -c '"id"' || true)
	if [ "$ours" != "$theirs" ]; then
		echo "findings differ at $n policies: fullsend $ours, conftest $theirs" >&2
		exit 1
	fi
	read -r fw fc < <(best "$work/fullsend" policy lint -o json "$dir")
	read -r cw cc < <(best "$conftest" test --all-namespaces --no-color -o json -p "$root/lint/rules" "$dir")
	printf "%-9s %8sms %8sms %7s   %8sms %8sms %7s\n" "$n" "$fw" "$cw" "$(ratio "$cw" "$fw")" "$fc" "$cc" "$(ratio "$cc" "$fc")"
done
