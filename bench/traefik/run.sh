#!/usr/bin/env bash
# bench/traefik/run.sh — `make bench-traefik`: the catch-all page through a
# real Traefik v3.7.13, served by stackdome's page server and by nginx (one
# worker) on the same test-host address, A/B/A/B in one run.
#
# What it measures is what a visitor of an unknown host costs the machine:
# Traefik (its default GOMAXPROCS), the page server and the load generator
# (GOMAXPROCS=1, 16 keep-alive connections to Traefik on loopback) share the
# cores, so every cycle the page server spends per request is taken from
# Traefik. Both backends serve the same bytes (stackdome's 404 page for
# Accept: text/html) with the same headers, behind the same router shape
# (PathPrefix(`/`) → replacePath /_errors/404 → one server), one router per
# backend picked by Host.
#
# Traefik's file provider instead of the kubernetesCRD provider: the data
# path (entry point → router → middleware → load balancer → backend) is the
# same code whichever provider built it, and the file provider needs no
# control plane, whose processes would take CPU from the two cores being
# measured. The backends live on a test host in a network namespace (as in
# the e2e suite), reached through a veth pair, like a pod behind Traefik.
#
# Needs root (the network namespace), nginx, and the Traefik binary the e2e
# suite builds (e2e/traefik/build.sh; STACKDOME_TRAEFIK=<dir> to use another).
# BUILD_TRAEFIK=1 builds it when missing (about 5 minutes on 2 quiet cores).
#
# Knobs: CONNS (16), DURATION (5s), WARMUP (1s), ROUNDS (2 → A/B/A/B),
# SD_ENV (the page server's environment; default GOMAXPROCS=1, as the chart
# runs stackdome: one P per requested CPU, rounded up, from its 50m request —
# and one worker's worth of parallelism, like nginx's one worker. SD_ENV=
# (empty) runs it with Go's default, a P per CPU).
set -euo pipefail

CONNS=${CONNS:-16}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
ROUNDS=${ROUNDS:-2}
SD_ENV=${SD_ENV-GOMAXPROCS=1}

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
. bench/nginx.sh
need() { echo "bench-traefik: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || need "needs root for the test host's network namespace"
command -v nginx >/dev/null || need "nginx missing (apt-get install -y nginx)"
command -v ip >/dev/null && command -v nsenter >/dev/null || need "ip and nsenter missing (iproute2, util-linux)"
command -v curl >/dev/null || need "curl missing"

traefik_dir=${STACKDOME_TRAEFIK:-}
if [ -z "$traefik_dir" ]; then
	hash=$(cd e2e/traefik && cat go.mod go.sum build.sh | sha256sum | cut -c1-16)
	traefik_dir="${STACKDOME_E2E_CACHE:-$HOME/.cache/stackdome-e2e}/traefik-$hash"
	if [ ! -x "$traefik_dir/traefik" ]; then
		[ "${BUILD_TRAEFIK:-0}" = 1 ] || need "no Traefik binary in $traefik_dir (make e2e builds it; BUILD_TRAEFIK=1 builds it here)"
		traefik_dir=$(bash e2e/traefik/build.sh)
	fi
fi

tmp=$(mktemp -d /tmp/stackdome-bench-traefik.XXXXXX)
pids=()
holder=""
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	# The namespace, the veth pair and its route go with their last process.
	[ -n "$holder" ] && kill -KILL "$holder" 2>/dev/null || true # unshare outlives a TERM; its child dies with it (--kill-child)
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# --- The test host: a namespace held by one process, a veth pair, a /24 of
# 10.213.0.0/16 that no route on the machine overlaps.
net=""
for i in $(seq 200 254); do
	if ! ip -4 route show table all | grep -q "^[a-z ]*10\.213\.$i\."; then net=$i; break; fi
done
[ -n "$net" ] || need "no free /24 in 10.213.0.0/16"
host_ip=10.213.$net.1
guest_ip=10.213.$net.2
unshare --net --kill-child sleep infinity &
holder=$!
for _ in $(seq 50); do [ "$(readlink /proc/$holder/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.05; done
ns="--net=/proc/$holder/ns/net"
hl=sbh$$ gl=sbg$$
ip link add "$hl" type veth peer name "$gl" netns "$holder"
ip addr add "$host_ip/24" dev "$hl"
ip link set "$hl" up
nsenter "$ns" ip addr add "$guest_ip/24" dev "$gl"
nsenter "$ns" ip link set "$gl" up
nsenter "$ns" ip link set lo up

# spawn LOG CMD...: start CMD in the background, output to LOG.
spawn() { local log=$1; shift; "$@" >"$log" 2>&1 </dev/null & pids+=($!); }
wait_http() { # URL [Host]
	for _ in $(seq 100); do
		curl -s -o /dev/null ${2:+-H "Host: $2"} "$1" && return 0
		sleep 0.1
	done
	echo "bench-traefik: nothing answers $1" >&2
	tail -n 20 "$tmp"/*.log "$tmp"/nginx/*.log >&2 2>/dev/null || true
	return 1
}

go build -o "$tmp/loadgen" ./bench/pages/loadgen
go build -o "$tmp/stackdome" .

# --- stackdome's page server on the test host.
sd_port=8082
spawn "$tmp/stackdome.log" env $SD_ENV nsenter "$ns" "$tmp/stackdome" serve --listen "$guest_ip:8080" \
	--error-pages-listen "$guest_ip:$sd_port" --metrics-listen "$guest_ip:8081" --log-format text
wait_http "http://$guest_ip:$sd_port/_errors/404"
curl -s -H 'Accept: text/html' -D "$tmp/sd.headers" -o "$tmp/404.html" "http://$guest_ip:$sd_port/_errors/404"

# --- nginx, one worker, same address, the same bytes and headers.
ng_port=8083
nginx_conf "$tmp/nginx" "$guest_ip:$ng_port" 404 "$tmp/404.html" "$tmp/sd.headers"
spawn "$tmp/nginx/stderr.log" nsenter "$ns" nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log"
wait_http "http://$guest_ip:$ng_port/_errors/404"
curl -s -H 'Accept: text/html' -o "$tmp/ng.html" "http://$guest_ip:$ng_port/_errors/404"
cmp -s "$tmp/404.html" "$tmp/ng.html" || need "nginx does not serve the same bytes as stackdome"

# --- Traefik, file provider, loopback entry point.
tr_port=$("$tmp/loadgen" -free-port)
cat >"$tmp/dynamic.yaml" <<EOF
http:
  routers:
    stackdome:
      rule: Host(\`stackdome.bench\`) && PathPrefix(\`/\`)
      entryPoints: [web]
      middlewares: [catch-all]
      service: stackdome
    nginx:
      rule: Host(\`nginx.bench\`) && PathPrefix(\`/\`)
      entryPoints: [web]
      middlewares: [catch-all]
      service: nginx
  middlewares:
    catch-all:
      replacePath:
        path: /_errors/404
  services:
    stackdome:
      loadBalancer:
        servers: [{url: "http://$guest_ip:$sd_port"}]
    nginx:
      loadBalancer:
        servers: [{url: "http://$guest_ip:$ng_port"}]
EOF
cat >"$tmp/traefik.yaml" <<EOF
entryPoints:
  web:
    address: "127.0.0.1:$tr_port"
providers:
  file:
    filename: $tmp/dynamic.yaml
log:
  level: ERROR
global:
  checkNewVersion: false
  sendAnonymousUsage: false
EOF
spawn "$tmp/traefik.log" env -u KUBECONFIG -u KUBERNETES_SERVICE_HOST "$traefik_dir/traefik" --configFile="$tmp/traefik.yaml"
wait_http "http://127.0.0.1:$tr_port/x" stackdome.bench
# Traefik answers before its file provider's routers are in: poll until each
# router passes its backend's page through unchanged.
for h in stackdome.bench nginx.bench; do
	for i in $(seq 100); do
		curl -s -H "Host: $h" -H 'Accept: text/html' -o "$tmp/via-$h.html" "http://127.0.0.1:$tr_port/some/unknown/path"
		cmp -s "$tmp/404.html" "$tmp/via-$h.html" && break
		[ "$i" -lt 100 ] || need "Traefik does not pass $h's page through unchanged: $(head -c 200 "$tmp/via-$h.html")"
		sleep 0.1
	done
done

echo "traefik:   $("$traefik_dir/traefik" version 2>/dev/null | awk '/Version:/ {print $2; exit}'), file provider, GOMAXPROCS default ($(nproc) CPUs)"
echo "stackdome: page server (stackdome serve) on $guest_ip:$sd_port${SD_ENV:+, $SD_ENV}"
echo "nginx:     $(nginx -v 2>&1 | cut -d/ -f2), 1 worker, on $guest_ip:$ng_port"
echo "load:      $CONNS keep-alive connections to Traefik, ${WARMUP} warm-up + ${DURATION} per run, GET -> $(wc -c <"$tmp/404.html") B 404 page, A/B x $ROUNDS"
echo "machine:   $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
echo

# PROFILE=1: perf samples every CPU during one more run of each backend,
# split by process, and by function for the backend (the whole request path:
# net/http, the handler, the Go runtime's scheduler and GC, the kernel).
profile() { # HOST COMM
	perf record -a -g -F 999 -o "$tmp/perf.data" -- sleep 4 >/dev/null 2>&1 &
	local perf_pid=$!
	GOMAXPROCS=1 "$tmp/loadgen" -url "http://127.0.0.1:$tr_port/some/unknown/path" -host "$1" -c "$CONNS" -d 4s -warmup 0s -accept text/html -status 404 -label "profile-$2"
	wait "$perf_pid" || true
	echo "CPU samples by process while $2 serves (perf, all CPUs, 4 s):"
	perf report -i "$tmp/perf.data" --no-children --sort comm --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -6 || true
	echo "$2 by function (top 15):"
	perf report -i "$tmp/perf.data" --no-children --comm "$2" --sort sym --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -15 || true
	echo
}
if [ "${PROFILE:-0}" = 1 ] && command -v perf >/dev/null; then
	profile stackdome.bench stackdome
	profile nginx.bench nginx
fi

load() { GOMAXPROCS=1 "$tmp/loadgen" -url "http://127.0.0.1:$tr_port/some/unknown/path" -host "$1" -c "$CONNS" -d "$DURATION" -warmup "$WARMUP" -accept text/html -status 404 -label "$2"; }
: >"$tmp/results"
for r in $(seq "$ROUNDS"); do
	load stackdome.bench "stackdome#$r" | tee -a "$tmp/results"
	load nginx.bench "nginx#$r" | tee -a "$tmp/results"
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
		printf "through Traefik: stackdome/nginx req/s = %.2fx (target >= 0.95)   p99 stackdome/nginx = %.2fx (target <= 1.05)\n", rps["stackdome"] / rps["nginx"], p99["stackdome"] / p99["nginx"]
	}' "$tmp/results"
