#!/usr/bin/env bash
# bench/pages/run.sh — `make bench-pages`: the 503 page served by stackdome and
# by nginx, under the same load, A/B/A/B in one run, on loopback only.
#
# Fairness on a 2-core machine: each server gets one core's worth of
# parallelism (stackdome with GOMAXPROCS=1, nginx with one worker process) and
# the load generator the other (GOMAXPROCS=1). PIN=1 also pins them to CPUs
# with taskset; on a machine shared with other work that makes a server share
# its one CPU with whatever else landed there, so it is off by default. nginx serves
# the exact bytes stackdome serves for Accept: text/html on /_errors/503 (as
# its error_page, from open_file_cache, the usual way nginx serves a branded
# error page), with the same headers as far as nginx can.
#
# Knobs: CONNS (16), DURATION (5s), WARMUP (1s), ROUNDS (2 → A/B/A/B), PIN (0),
# SERVER (auto | pageserver).
set -euo pipefail

CONNS=${CONNS:-16}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
ROUNDS=${ROUNDS:-2}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
PIN=${PIN:-0} # 1: pin servers to SERVER_CPU and the client to CLIENT_CPU (quiet machines only)
SERVER=${SERVER:-auto} # auto: the stackdome binary if main.go has --error-pages-listen; pageserver: force the stand-in

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
. bench/nginx.sh
command -v nginx >/dev/null || { echo "bench-pages: nginx missing (apt-get install -y nginx)" >&2; exit 1; }
command -v curl >/dev/null || { echo "bench-pages: curl missing" >&2; exit 1; }
can_pin() { [ "$PIN" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; }
pin() { if can_pin; then taskset -c "$1" "${@:2}"; else "${@:2}"; fi; }
# spawn CPU LOG CMD...: start CMD in the background on CPU, output to LOG, and
# remember its pid (taskset execs CMD, so $! is CMD's own pid).
spawn() {
	local cpu=$1 log=$2
	shift 2
	if can_pin; then taskset -c "$cpu" "$@" >"$log" 2>&1 </dev/null & else "$@" >"$log" 2>&1 </dev/null & fi
	pids+=($!)
}

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/loadgen" ./bench/pages/loadgen
port() { "$tmp/loadgen" -free-port; }

# wait_http URL: poll until the server answers (a start-up wait in a script,
# not a test).
wait_http() {
	for _ in $(seq 100); do
		curl -s -o /dev/null "$1" && return 0
		sleep 0.1
	done
	echo "bench-pages: nothing answers $1" >&2
	tail -n 20 "$tmp"/*.log "$tmp"/nginx/*.log >&2 2>/dev/null || true
	return 1
}

# --- stackdome: the real binary when main.go has the flag, else pageserver.
sd_port=$(port)
if [ "$SERVER" != pageserver ] && grep -qs 'error-pages-listen' main.go flags.go; then
	go build -o "$tmp/stackdome" .
	sd_kind="stackdome binary (serve --error-pages-listen)"
	GOMAXPROCS=1 spawn "$SERVER_CPU" "$tmp/stackdome.log" "$tmp/stackdome" serve --listen 127.0.0.1:0 \
		--error-pages-listen "127.0.0.1:$sd_port" --metrics-listen 127.0.0.1:0
else
	go build -o "$tmp/pageserver" ./bench/pages/pageserver
	sd_kind="bench/pages/pageserver (errorpages.New + http.Server; main.go has no --error-pages-listen yet)"
	GOMAXPROCS=1 spawn "$SERVER_CPU" "$tmp/stackdome.log" "$tmp/pageserver" -listen "127.0.0.1:$sd_port"
fi
sd_url="http://127.0.0.1:$sd_port/_errors/503"
wait_http "$sd_url"

# --- the exact bytes and headers stackdome sends.
curl -s -H 'Accept: text/html' -D "$tmp/sd.headers" -o "$tmp/503.html" "$sd_url"

# --- nginx: one worker, loopback, everything under $tmp, as the current user.
ng_port=$(port)
nginx_conf "$tmp/nginx" "127.0.0.1:$ng_port" 503 "$tmp/503.html" "$tmp/sd.headers"
spawn "$SERVER_CPU" "$tmp/nginx/stderr.log" nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log"
ng_url="http://127.0.0.1:$ng_port/_errors/503"
wait_http "$ng_url"

curl -s -H 'Accept: text/html' -o "$tmp/ng.html" "$ng_url"
if ! cmp -s "$tmp/503.html" "$tmp/ng.html"; then
	echo "bench-pages: nginx does not serve the same bytes as stackdome" >&2
	exit 1
fi

echo "stackdome side: $sd_kind"
echo "nginx side:     $(nginx -v 2>&1 | cut -d/ -f2), 1 worker, error_page 503 from open_file_cache"
echo "load:           $CONNS keep-alive connections, ${WARMUP} warm-up + ${DURATION} per run, GET $(wc -c <"$tmp/503.html") B page, A/B x $ROUNDS"
echo

load() { GOMAXPROCS=1 pin "$CLIENT_CPU" "$tmp/loadgen" -url "$1" -c "$CONNS" -d "$DURATION" -warmup "$WARMUP" -accept text/html -status 503 -label "$2"; }
: >"$tmp/results"
for r in $(seq "$ROUNDS"); do
	load "$sd_url" "stackdome#$r" | tee -a "$tmp/results"
	load "$ng_url" "nginx#$r" | tee -a "$tmp/results"
done

echo
awk '
	{ name = $1; sub(/#.*/, "", name)
	  for (i = 2; i <= NF; i++) { split($i, kv, "="); v[name, kv[1]] += kv[2] }
	  n[name]++ }
	END {
		for (s in n) {
			rps[s] = v[s, "rps"] / n[s]; p99[s] = v[s, "p99_us"] / n[s]
			printf "%-9s mean req/s %8.0f   mean p99 %6.0f us\n", s, rps[s], p99[s]
		}
		printf "ratio     stackdome/nginx req/s = %.2fx   p99 stackdome/nginx = %.2fx\n", rps["stackdome"] / rps["nginx"], p99["stackdome"] / p99["nginx"]
	}' "$tmp/results"
