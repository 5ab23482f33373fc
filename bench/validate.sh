#!/usr/bin/env bash
# Validate 1, 10, 100 and 1000 OpenShell policies with `fullsend policy
# validate` (full schema + semantic checks) and `cue vet` the same files
# against the same schema (shape only), in one run. Prints the best wall time
# of RUNS per size, ms per policy, and the ratio cue vet / fullsend.
#
#   bash bench/validate.sh            # sizes 1 10 100 1000
#   SIZES="1 100" RUNS=5 bash bench/validate.sh
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
	bash .ci/install.d/60-cue.sh
fi
schema=policycue/schema/openshell/policy.cue
src=openshell/validate/testdata/valid/v0.0.111.yaml

# gen N DIR: N distinct realistic policies (the v0.0.111 fixture with the
# hosts and policy keys renamed per file).
gen() {
	local n=$1 dir=$2 i
	mkdir -p "$dir"
	for ((i = 0; i < n; i++)); do
		sed -e "s/acme/org$i/g" -e "s/example.com/example$i.com/g" -e "s/^  \([a-z_]*\):$/  \1_$i:/" "$src" >"$dir/policy-$i.yaml"
	done
}

# best CMD...: the fastest of RUNS wall times, in seconds.
best() {
	local b="" t s e
	for ((r = 0; r < RUNS; r++)); do
		s=$(date +%s.%N)
		"$@" >/dev/null
		e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc)
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
	done
	echo "$b"
}

printf '%-9s %12s %14s %12s %8s\n' policies fullsend_s ms_per_policy cue_vet_s ratio
for n in $SIZES; do
	dir="$work/p$n"
	gen "$n" "$dir"
	"$work/fullsend" policy validate "$dir"/*.yaml >/dev/null
	cue vet -c "$schema" "$dir"/*.yaml -d '#Policy' >/dev/null
	fs=$(best "$work/fullsend" policy validate "$dir"/*.yaml)
	cv=$(best cue vet -c "$schema" "$dir"/*.yaml -d '#Policy')
	printf '%-9s %12.3f %14.3f %12.3f %7.1fx\n' "$n" "$fs" "$(echo "$fs * 1000 / $n" | bc -l)" "$cv" "$(echo "$cv / $fs" | bc -l)"
done
echo "ratio = cue vet time / fullsend validate time (higher is better for fullsend);"
echo "fullsend also runs every semantic check, cue vet only the shape."
