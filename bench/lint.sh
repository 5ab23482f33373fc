#!/usr/bin/env bash
# Lint 1, 10, 100 and 1000 OpenShell policies with `fullsend policy lint`
# (in-process OPA, query prepared once) and with `conftest test` running the
# same embedded rules (lint/rules) on the same files, in one run, and print
# the ratio. Each figure is the best of $RUNS wall-clock runs, process start
# included on both sides.
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

mapfile -t corpus < <(ls "$root"/lint/testdata/bad/*.yaml "$root"/lint/testdata/good/*.yaml "$root"/lint/testdata/decide/policy.yaml)

# best_ms CMD...: the fastest of $RUNS runs in milliseconds (exit status ignored:
# both tools exit 1 when they find something).
best_ms() {
	local best="" start end ms
	for _ in $(seq "$RUNS"); do
		start=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		end=$(date +%s%N)
		ms=$(((end - start) / 1000000))
		if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
	done
	echo "$best"
}

printf "%-9s %14s %14s %8s\n" policies "fullsend(ms)" "conftest(ms)" ratio
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
	f=$(best_ms "$work/fullsend" policy lint -o json "$dir")
	c=$(best_ms "$conftest" test --all-namespaces --no-color -o json -p "$root/lint/rules" "$dir")
	ratio=$(awk -v c="$c" -v f="$f" 'BEGIN { if (f == 0) f = 1; printf "%.1fx", c / f }')
	printf "%-9s %14s %14s %8s\n" "$n" "$f" "$c" "$ratio"
done
