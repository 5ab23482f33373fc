#!/usr/bin/env bash
# Runner overhead: `fullsend run` end to end against the openshell FAKE,
# compared with the time spent in the fake's calls alone (the peer here: a
# real OpenShell cannot run on this machine). Prints per-run figures and the
# ratio overhead / openshell. Target: overhead under 100 ms per agent run.
#
#   bench/runner.sh [RUNS]   (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "--- building fullsend and the openshell fake"
go build -o "$work/bin/fullsend" ./cmd/fullsend
go build -o "$work/bin/openshell" ./testdata/openshell-fake
for n in openshell-gateway podman ssh; do ln "$work/bin/openshell" "$work/bin/$n"; done
cp runner/testdata/runtime-stub.sh "$work/bin/claude"
chmod +x "$work/bin/claude"
cp -R runner/testdata/bench-project "$work/project"
mkdir -p "$work/ws"

echo "--- go test -bench (in-process runner, $runs runs)"
go test -run '^$' -bench '^BenchmarkRun$' -benchtime "${runs}x" ./runner | grep -E '^Benchmark'

echo "--- fullsend run CLI ($runs runs, process start included); load: $(cut -d' ' -f1-3 /proc/loadavg)"
export PATH="$work/bin:$PATH" OPENSHELL_FAKE_GATEWAY=up
export FULLSEND_SANDBOX_IMAGE="ghcr.io/fullsend-ai/agent-sandbox@sha256:$(printf '1%.0s' $(seq 64))"
export FULLSEND_SUPERVISOR_IMAGE="ghcr.io/nvidia/openshell/supervisor@sha256:$(printf '2%.0s' $(seq 64))"
total_ns=0 in_ns=0 wall_ns=0
for i in $(seq "$runs"); do
	export OPENSHELL_FAKE_STATE="$work/state-$i"
	start=$(date +%s%N)
	fullsend run triage --dir "$work/project" --workspace "$work/ws" --prompt bench \
		--set OWNER=acme --set REPO_NAME=widgets --set ISSUE_NUMBER=1 --set FORGE_HOST=api.github.com --set HOST_IP=10.0.0.1 \
		--diag-dir "$work/diag" --result "$work/result.json" >/dev/null 2>"$work/log"
	end=$(date +%s%N)
	d=$(sed -n 's/.*"duration_ns": \([0-9]*\).*/\1/p' "$work/result.json")
	o=$(sed -n 's/.*"in_openshell_ns": \([0-9]*\).*/\1/p' "$work/result.json")
	total_ns=$((total_ns + d)) in_ns=$((in_ns + o)) wall_ns=$((wall_ns + end - start))
done
# Process start of the (shared) fullsend binary alone: Go runtime and
# package init of everything linked in.
start=$(date +%s%N)
for i in $(seq "$runs"); do fullsend version >/dev/null; done
end=$(date +%s%N)
boot_ns=$((end - start))
awk -v t="$total_ns" -v o="$in_ns" -v w="$wall_ns" -v b="$boot_ns" -v n="$runs" 'BEGIN {
	printf "fake calls alone:             %8.2f ms/run\n", o / n / 1e6
	printf "runner overhead (in process): %8.2f ms/run   ratio overhead/openshell %.3f\n", (t - o) / n / 1e6, (t - o) / o
	printf "whole CLI process:            %8.2f ms/run   ratio process/openshell  %.3f\n", w / n / 1e6, w / o
	printf "fullsend process start alone: %8.2f ms/run   (fullsend version)\n", b / n / 1e6
	printf "overhead incl. process start: %8.2f ms/run   (target < 100 ms)\n", (w - o) / n / 1e6
}'

# Mode (b): no gateway registered; each run starts the Podman API service
# (the fake's) and openshell-gateway (the fake's: it checks its flags and
# listens on its port), polls status and registers it, then stops both.
echo "--- mode (b) bring-up ($runs runs, --gateway start against the fake)"
unset OPENSHELL_FAKE_GATEWAY
pre_a=0 pre_b=0 wall_b=0
for i in $(seq "$runs"); do
	for mode in existing start; do
		export OPENSHELL_FAKE_STATE="$work/b-$mode-$i"
		[ "$mode" = existing ] && export OPENSHELL_FAKE_GATEWAY=up || unset OPENSHELL_FAKE_GATEWAY
		start=$(date +%s%N)
		fullsend run triage --dir "$work/project" --workspace "$work/ws" --prompt bench --gateway "$mode" --gateway-port 0 \
			--set OWNER=acme --set REPO_NAME=widgets --set ISSUE_NUMBER=1 --set FORGE_HOST=api.github.com --set HOST_IP=10.0.0.1 \
			--diag-dir "$work/diag" --result "$work/result.json" >/dev/null 2>"$work/log" || { cat "$work/log"; exit 1; }
		end=$(date +%s%N)
		ms=$(grep -A1 '"name": "openshell preflight"' "$work/result.json" | sed -n 's/.*"ms": \([0-9.]*\).*/\1/p')
		if [ "$mode" = existing ]; then pre_a=$(awk -v a="$pre_a" -v m="$ms" 'BEGIN{print a+m}')
		else pre_b=$(awk -v a="$pre_b" -v m="$ms" 'BEGIN{print a+m}'); wall_b=$((wall_b + end - start)); fi
	done
done
awk -v a="$pre_a" -v b="$pre_b" -v w="$wall_b" -v n="$runs" 'BEGIN {
	printf "preflight, gateway registered (a): %8.2f ms/run\n", a / n
	printf "preflight, gateway started (b):    %8.2f ms/run   bring-up overhead %.2f ms/run (ratio b/a %.1f)\n", b / n, (b - a) / n, b / a
	printf "whole CLI process, mode (b):       %8.2f ms/run\n", w / n / 1e6
}'
