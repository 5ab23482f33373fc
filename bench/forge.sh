#!/usr/bin/env bash
# Load benchmark of the forge proxy: builds fullsend and a loopback fake
# forge API, starts `fullsend serve forge` in front of it, drives both with
# wrk (same connections, threads and duration) and prints throughput and
# latency percentiles for each, and the proxy/direct ratios.
#
# Two phases per target: "paced" holds about RATE requests/s (default 500,
# the proxy's service-level target: p99 under 20 ms) with wrk's Lua delay();
# "max" drives as fast as CONNS connections can go, for the throughput ratio.
#
#   bench/forge.sh                      # defaults: 10s per run, 2 threads, 8 connections, 500 req/s
#   DURATION=30s CONNS=16 RATE=1000 bench/forge.sh
#
# Needs: go, wrk (.ci/install.d/50-wrk.sh). Listens on 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-8}
RATE=${RATE:-500}
PACED_CONNS=10
command -v wrk >/dev/null || { echo "bench/forge.sh: wrk is missing (bash .ci/install.d/50-wrk.sh)" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

echo "--- building fullsend and the fake forge API"
go build -o "$work/fullsend" ./cmd/fullsend
mkdir -p "$work/fake"
cat >"$work/fake/main.go" <<'GO'
// A loopback stand-in for the GitHub API: fixed JSON answers, no work.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	issue := []byte(`{"number":7,"title":"crash on start","state":"open","body":"steps to reproduce: run it","labels":[{"name":"bug"}],"user":{"login":"octocat"}}`)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(ln.Addr().String())
	os.Stdout.Close()
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(issue)
	}))
}
GO
(cd "$work/fake" && printf 'module fakeforge\n\ngo 1.26\n' >go.mod && go build -o "$work/fakeforge" .)

"$work/fakeforge" >"$work/fake.addr" &
pids+=($!)
for _ in $(seq 50); do [ -s "$work/fake.addr" ] && break; sleep 0.1; done
upstream="http://$(cat "$work/fake.addr")"

# A free loopback port for the proxy.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
BENCH_FORGE_TOKEN="ghs_benchFakeToken$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
	"$work/fullsend" serve forge --token-env BENCH_FORGE_TOKEN --upstream "$upstream" \
	--repo acme/widgets --issue 42 --listen "127.0.0.1:$port" --audit "$work/audit.jsonl" \
	--mint bench:read="$work/agent.token" >"$work/proxy.out" 2>"$work/proxy.err" &
pids+=($!)
for _ in $(seq 50); do [ -s "$work/proxy.out" ] && break; sleep 0.1; done
[ -s "$work/agent.token" ] || { echo "proxy did not start:" >&2; cat "$work/proxy.err" >&2; exit 1; }

cat >"$work/bench.lua" <<'LUA'
-- Adds the agent's bearer token and prints latency percentiles in one line.
local token = os.getenv("FORGE_BENCH_TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end
wrk.method = "GET"
wrk.path = os.getenv("FORGE_BENCH_PATH") or "/"

-- Paced mode: each connection waits so that all of them together send
-- about FORGE_BENCH_RATE requests per second.
local pause = tonumber(os.getenv("FORGE_BENCH_DELAY_MS") or "0")
if pause > 0 then
  delay = function() return pause end
end

done = function(summary, latency, requests)
  local secs = summary.duration / 1e6
  local errs = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("RESULT rps=%.0f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f requests=%d errors=%d non2xx=%d\n",
    summary.requests / secs, latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, summary.requests, errs, summary.errors.status))
end
LUA

run() { # name url token path connections delay_ms
	FORGE_BENCH_TOKEN="$3" FORGE_BENCH_PATH="$4" FORGE_BENCH_DELAY_MS="$6" \
		wrk -t"$THREADS" -c"$5" -d"$DURATION" -s "$work/bench.lua" "$2" | grep '^RESULT' | sed "s/^RESULT/$1/"
}
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

path=/repos/acme/widgets/issues/7
token=$(cat "$work/agent.token")
# Aim 10% above RATE: each request's own latency lengthens a connection's cycle.
delay=$((PACED_CONNS * 1000 * 10 / (RATE * 11)))
echo "--- GET $path, $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg), $DURATION per run"
echo "paced: wrk -t$THREADS -c$PACED_CONNS, each connection waits ${delay} ms between requests (~$RATE req/s)"
pdirect=$(run "paced-direct" "$upstream" "" "$path" "$PACED_CONNS" "$delay")
pproxy=$(run "paced-proxy " "http://127.0.0.1:$port" "$token" "$path" "$PACED_CONNS" "$delay")
echo "$pdirect"
echo "$pproxy"
echo "max:   wrk -t$THREADS -c$CONNS, no pacing"
direct=$(run "max-direct  " "$upstream" "" "$path" "$CONNS" 0)
proxy=$(run "max-proxy   " "http://127.0.0.1:$port" "$token" "$path" "$CONNS" 0)
echo "$direct"
echo "$proxy"
awk -v pr="$(field "$proxy" rps)" -v dr="$(field "$direct" rps)" \
	-v pp99="$(field "$pproxy" p99_ms)" -v pd99="$(field "$pdirect" p99_ms)" -v prps="$(field "$pproxy" rps)" 'BEGIN {
	printf "ratio proxy/direct: max throughput %.2f; paced p99 %.2f ms vs %.2f ms (x%.2f)\n", pr/dr, pp99, pd99, pp99/pd99
	ok = (prps >= 0.95 * '"$RATE"' && pp99 < 20)
	printf "target (%d req/s sustained, p99 < 20 ms): %s (%.0f req/s, p99 %.2f ms)\n", '"$RATE"', ok ? "met" : "NOT met", prps, pp99
}'
for r in "$pdirect" "$pproxy" "$direct" "$proxy"; do
	[ "$(field "$r" non2xx)" = 0 ] && [ "$(field "$r" errors)" = 0 ] || { echo "bench/forge.sh: non-2xx responses or socket errors: $r" >&2; exit 1; }
done
echo "audit entries written: $(wc -l <"$work/audit.jsonl")"
