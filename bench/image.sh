#!/usr/bin/env bash
# bench/image.sh: `fullsend image build --push` against `crane append` of the
# SAME layer tarballs onto the same (empty) base, into the same loopback
# registry (Debian docker-registry), in the same run. Prints medians and
# ratios for one and two platforms, plus a warm rebuild with nothing changed.
#
# Needs: go, crane, docker-registry (.ci/install.d/20-registry.sh).
# Usage: bench/image.sh [RUNS]   (default 5 runs per case, median reported)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
export PATH="$(go env GOPATH)/bin:$PATH"
for tool in go crane docker-registry python3; do
	command -v "$tool" >/dev/null || { echo "bench/image.sh: $tool not found (run .ci/install.d/20-registry.sh)" >&2; exit 1; }
done

work="$(mktemp -d)"
reg_pid=""
cleanup() {
	[ -n "$reg_pid" ] && kill "$reg_pid" 2>/dev/null && wait "$reg_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# --- inputs (not timed) -------------------------------------------------------
echo "building fullsend (the tool, and the payload binaries for amd64 and arm64)..." >&2
go build -o "$work/fullsend" ./cmd/fullsend
for arch in amd64 arm64; do
	CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -ldflags '-s -w -buildid=' -o "$work/payload-$arch" ./cmd/fullsend
done
project=image/testdata/project
export SOURCE_DATE_EPOCH=1700000000

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
reg="127.0.0.1:$port"
cat >"$work/registry.yml" <<EOF
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $work/storage}}
http: {addr: $reg, secret: bench}
EOF
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
reg_pid=$!
for _ in $(seq 100); do curl -fsS "http://$reg/v2/" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS "http://$reg/v2/" >/dev/null

ours() { # ours REPO CACHE PLATFORMS...
	local repo=$1 cache=$2; shift 2
	local plats=() bins=()
	for a in "$@"; do plats+=("linux/$a"); bins+=(--binary "linux/$a=$work/payload-$a"); done
	"$work/fullsend" image build --base scratch --dir "$project" --platform "$(IFS=,; echo "${plats[*]}")" \
		"${bins[@]}" --version bench --revision 0123456789abcdef0123456789abcdef01234567 \
		--cache-dir "$cache" --tag "$reg/$repo:v1" --push --sha-tag=false >/dev/null 2>&1
}

# The exact layer tarballs of our image, uncompressed, for crane append.
ours layers "$work/cache-layers" amd64 arm64
python3 - "$reg" "$work" <<'EOF'
import gzip, json, sys, urllib.request
reg, work = sys.argv[1], sys.argv[2]
def get(path, accept):
    req = urllib.request.Request(f"http://{reg}/v2/layers/{path}", headers={"Accept": accept})
    return urllib.request.urlopen(req).read()
idx = json.loads(get("manifests/v1", "application/vnd.oci.image.index.v1+json"))
for m in idx["manifests"]:
    arch = m["platform"]["architecture"]
    man = json.loads(get("manifests/" + m["digest"], "application/vnd.oci.image.manifest.v1+json"))
    for i, l in enumerate(man["layers"]):
        open(f"{work}/layer-{arch}-{i}.tar", "wb").write(gzip.decompress(get("blobs/" + l["digest"], "*/*")))
EOF

crane_append() { # crane_append REPO PLATFORMS...
	local repo=$1; shift
	local refs=()
	for a in "$@"; do
		crane append --oci-empty-base -f "$work/layer-$a-0.tar" -f "$work/layer-$a-1.tar" -f "$work/layer-$a-2.tar" \
			-t "$reg/$repo:$a" >/dev/null 2>&1
		refs+=(-m "$reg/$repo:$a")
	done
	if [ $# -gt 1 ]; then crane index append "${refs[@]}" -t "$reg/$repo:v1" >/dev/null 2>&1; fi
}

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

bytes="$(du -cb "$work"/layer-amd64-*.tar | tail -1 | cut -f1)"
printf 'payload per platform: %.1f MiB uncompressed (binary %s + content + policies layers)\n' \
	"$(echo "$bytes / 1048576" | bc -l)" "$(du -h "$work/payload-amd64" | cut -f1)"
printf '%-34s %10s %10s %8s\n' case fullsend crane ratio

for plats in "amd64" "amd64 arm64"; do
	n=$(echo $plats | wc -w)
	: >"$work/t-ours"; : >"$work/t-crane"
	for i in $(seq "$runs"); do
		# Fresh repository and cache: every blob is compressed and uploaded.
		t0=$(now); ours "ours-$n-$i" "$work/cache-$n-$i" $plats; t1=$(now)
		crane_append "crane-$n-$i" $plats; t2=$(now)
		echo "$t1 - $t0" | bc -l >>"$work/t-ours"
		echo "$t2 - $t1" | bc -l >>"$work/t-crane"
	done
	o=$(median <"$work/t-ours"); c=$(median <"$work/t-crane")
	printf '%-34s %9.3fs %9.3fs %7.2fx\n' "cold build+push, $n platform(s)" "$o" "$c" "$(echo "$o / $c" | bc -l)"

	# Warm: same cache, same repository, nothing changed.
	: >"$work/t-warm"
	for i in $(seq "$runs"); do
		t0=$(now); ours "ours-$n-1" "$work/cache-$n-1" $plats; t1=$(now)
		echo "$t1 - $t0" | bc -l >>"$work/t-warm"
	done
	printf '%-34s %9.3fs %10s %8s\n' "warm rebuild+push, $n platform(s)" "$(median <"$work/t-warm")" "-" "-"
done
echo "targets: cold ratio <= 1.2x; warm rebuild < 0.3 s" >&2
