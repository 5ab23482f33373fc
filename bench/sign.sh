#!/usr/bin/env bash
# Sign and verify: fullsend vs the cosign CLI on the same registry, the same
# key and equivalent images, in the same run. Prints per-operation medians
# and the ratios fullsend/cosign (below 1.0 = fullsend faster).
#
#   bench/sign.sh [ITERATIONS]    (default 10)
#   FULLSEND_BIN=path/to/fullsend bench/sign.sh    (use a prebuilt binary)
#
# Needs: go, crane and cosign (.ci/install.d/20-registry.sh, 30-cosign.sh).
# Everything stays on loopback: a throwaway `crane registry serve`, no
# transparency log (cosign --tlog-upload=false / --insecure-ignore-tlog).
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-10}"
gobin="$(go env GOPATH)/bin"
export PATH="$gobin:$PATH"
for tool in crane cosign; do
	command -v "$tool" >/dev/null || { echo "bench/sign.sh: $tool missing (run .ci/install.d/*.sh)" >&2; exit 1; }
done

work="$(mktemp -d)"
reg_pid=""
cleanup() { [ -n "$reg_pid" ] && kill "$reg_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

if [ -n "${FULLSEND_BIN:-}" ]; then
	cp "$FULLSEND_BIN" "$work/fullsend"
else
	echo "building fullsend..."
	go build -o "$work/fullsend" ./cmd/fullsend
fi

port=$(( 20000 + RANDOM % 20000 ))
crane registry serve --address "127.0.0.1:$port" >"$work/registry.log" 2>&1 &
reg_pid=$!
for _ in $(seq 50); do curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null 2>&1 && break; sleep 0.1; done
reg="127.0.0.1:$port"

export COSIGN_PASSWORD="bench-password"
export HOME="$work/home" TUF_ROOT="$work/tuf"
mkdir -p "$HOME"
(cd "$work" && "$work/fullsend" image keygen --output-prefix key >/dev/null)

# Two equivalent images (same size, different content), one per tool, so
# neither tool finds the other's signatures.
head -c 4194304 /dev/urandom >"$work/blob-a"
head -c 4194304 /dev/urandom >"$work/blob-b"
tar -C "$work" -cf "$work/a.tar" blob-a
tar -C "$work" -cf "$work/b.tar" blob-b
ref_f=$(crane append -f "$work/a.tar" -t "$reg/bench/fullsend:v1" 2>/dev/null)
ref_c=$(crane append -f "$work/b.tar" -t "$reg/bench/cosign:v1" 2>/dev/null)

# time_ms CMD...: run CMD quietly, print its wall time in milliseconds.
time_ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>"$work/err" || { echo "FAILED: $*" >&2; cat "$work/err" >&2; exit 1; }
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 ))
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }

declare -A res
# pair NAME: run fs_NAME and co_NAME alternately, n times each, so both
# tools see the same machine load; keep each one's median.
pair() {
	local name="$1" xf=() xc=()
	for _ in $(seq "$n"); do
		xf+=("$(time_ms "fs_$name")")
		xc+=("$(time_ms "co_$name")")
	done
	res[fs_$name]=$(printf '%s\n' "${xf[@]}" | median)
	res[co_$name]=$(printf '%s\n' "${xc[@]}" | median)
}

fs="$work/fullsend"
printf '{"buildDefinition":{"buildType":"b","externalParameters":{}},"runDetails":{"builder":{"id":"https://bench"}}}' >"$work/prov.json"
fs_sign()   { "$fs" image sign --key "$work/key.key" --sbom=false --provenance=false "$ref_f"; }
co_sign()   { cosign sign --key "$work/key.key" --tlog-upload=false --yes "$ref_c"; }
fs_verify() { "$fs" verify --key "$work/key.pub" "$ref_f"; }
co_verify() { cosign verify --key "$work/key.pub" --insecure-ignore-tlog=true "$ref_c"; }
fs_attest() { "$fs" image sign --key "$work/key.key" --sbom=false --provenance=true --builder-id https://bench "$ref_f"; }
co_attest() {
	cosign sign --key "$work/key.key" --tlog-upload=false --yes "$ref_c" &&
		cosign attest --key "$work/key.key" --tlog-upload=false --yes --type slsaprovenance1 --predicate "$work/prov.json" "$ref_c"
}
fs_vatt() { "$fs" verify --key "$work/key.pub" --require-provenance "$ref_f"; }
co_vatt() {
	cosign verify --key "$work/key.pub" --insecure-ignore-tlog=true "$ref_c" &&
		cosign verify-attestation --key "$work/key.pub" --insecure-ignore-tlog=true --type slsaprovenance1 "$ref_c"
}
for op in sign verify attest vatt; do pair "$op"; done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }
echo
echo "median wall time over $n runs (ms), loopback registry, keyed, no tlog"
printf '%-34s %10s %10s %8s\n' operation fullsend cosign ratio
printf '%-34s %10s %10s %8s\n' "sign" "${res[fs_sign]}" "${res[co_sign]}" "$(ratio "${res[fs_sign]}" "${res[co_sign]}")"
printf '%-34s %10s %10s %8s\n' "verify" "${res[fs_verify]}" "${res[co_verify]}" "$(ratio "${res[fs_verify]}" "${res[co_verify]}")"
s_f=$(( res[fs_sign] + res[fs_verify] )); s_c=$(( res[co_sign] + res[co_verify] ))
printf '%-34s %10s %10s %8s\n' "sign+verify" "$s_f" "$s_c" "$(ratio "$s_f" "$s_c")"
printf '%-34s %10s %10s %8s\n' "sign+provenance (cosign: 2 calls)" "${res[fs_attest]}" "${res[co_attest]}" "$(ratio "${res[fs_attest]}" "${res[co_attest]}")"
printf '%-34s %10s %10s %8s\n' "verify sig+provenance" "${res[fs_vatt]}" "${res[co_vatt]}" "$(ratio "${res[fs_vatt]}" "${res[co_vatt]}")"
