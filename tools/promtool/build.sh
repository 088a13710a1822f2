#!/usr/bin/env bash
# build.sh builds promtool from this module's pinned Prometheus
# (github.com/prometheus/prometheus v0.316.0, i.e. Prometheus v3.16.0; see
# go.mod) into a cache outside the repository keyed by the hash of everything
# that decides the bytes (go.mod, go.sum, this script, the Go version). A
# fresh clone on the same machine reuses the binary; only a missing one is
# built. One builder at a time per cache directory: a second run waits on the
# lock, then finds the binary. Cold (no module or build cache) it took 462 s
# on an idle 2-core CI machine before remove_all_sd (below).
#
# Prints the path of promtool on stdout; progress goes to stderr.
# STACKDOME_TOOLS_CACHE overrides the cache root ($HOME/.cache/stackdome-tools).
set -euo pipefail

# The whole script is one function, read by bash before it runs: editing this
# file during a build cannot change what the running build does.
main() {
	local here go root hash out start
	here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
	cd "$here"
	go="${GO:-go}"
	root="${STACKDOME_TOOLS_CACHE:-${HOME:?}/.cache/stackdome-tools}"
	hash="$({ cat go.mod go.sum build.sh; "$go" env GOVERSION; } | sha256sum | cut -c1-16)"
	out="$root/promtool-$hash"
	mkdir -p "$out"

	exec 9>"$out/.lock"
	flock 9
	if [[ ! -x "$out/promtool" ]]; then
		echo "tools/promtool: building promtool into $out" >&2
		start=$SECONDS
		# remove_all_sd: Prometheus' own build tag that leaves out every
		# service discovery (plugins/plugin_*.go: AWS, Azure, GCE, OCI, …);
		# promtool checks and tests rules, and discovers nothing here.
		CGO_ENABLED=0 "$go" build -tags remove_all_sd -trimpath -buildvcs=false -o "$out/promtool.tmp" github.com/prometheus/prometheus/cmd/promtool
		mv -f "$out/promtool.tmp" "$out/promtool"
		echo "tools/promtool: built promtool in $((SECONDS - start))s" >&2
	fi
	echo "$out/promtool"
}

main "$@"
exit
