#!/usr/bin/env bash
# build.sh builds Metacontroller v4.17.2 for the e2e suite from its pinned
# source — ../shared/vendor/metacontroller-4.17.2.tar.gz, or METACONTROLLER_SRC
# (a checkout or an archive of the same tag) — into a cache outside the
# repository keyed by the hash of the source archive (or the checkout's tree)
# and this script. Its Go dependencies come from the Go module proxy.
#
# Prints the cache directory on stdout: `metacontroller` (the binary the
# StatefulSet's image ghcr.io/metacontroller/metacontroller:v4.17.2 carries at
# /usr/bin/metacontroller) and `src/` (the extracted tree, whose
# manifests/production the suite installs with `kubectl apply -k`).
# Progress goes to stderr. Without a source it fails with one line naming what
# to set: the suite never falls back to a stand-in.
# STACKDOME_E2E_CACHE overrides the cache root ($HOME/.cache/stackdome-e2e).
# STACKDOME_E2E_BUILD_P sets `go build -p` (default: the number of CPUs).
set -euo pipefail

version=v4.17.2

main() {
	here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
	cd "$here"
	go="${GO:-go}"
	root="${STACKDOME_E2E_CACHE:-${HOME:?}/.cache/stackdome-e2e}"

	local src="${METACONTROLLER_SRC:-}" shared="${STACKDOME_SHARED:-$here/../../../shared}"
	if [[ -z "$src" ]]; then
		src="$shared/vendor/metacontroller-4.17.2.tar.gz"
		if [[ ! -f "$src" ]]; then
			echo "e2e/metacontroller: no Metacontroller $version source: set METACONTROLLER_SRC to a checkout or a tar.gz archive of github.com/metacontroller/metacontroller at $version (or provide ../shared/vendor/metacontroller-4.17.2.tar.gz)" >&2
			return 1
		fi
	fi
	local key
	if [[ -d "$src" ]]; then
		[[ -f "$src/pkg/cmd/metacontroller/main.go" && -d "$src/manifests/production" ]] || {
			echo "e2e/metacontroller: METACONTROLLER_SRC=$src is not a Metacontroller checkout (no pkg/cmd/metacontroller/main.go or manifests/production)" >&2
			return 1
		}
		key="$(cd "$src" && find pkg manifests go.mod go.sum -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum)"
	elif [[ -f "$src" ]]; then
		key="$(sha256sum <"$src")"
	else
		echo "e2e/metacontroller: METACONTROLLER_SRC=$src is neither a directory nor a file: set it to a checkout or a tar.gz archive of Metacontroller $version" >&2
		return 1
	fi
	hash="$( (echo "$key"; cat build.sh) | sha256sum | cut -c1-16)"
	out="$root/metacontroller-$hash"
	mkdir -p "$out"

	export CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=readonly
	# One builder at a time per cache dir: a second `make e2e` waits, then
	# finds the binary and builds nothing.
	exec 9>"$out/.lock"
	flock 9
	if [[ -x "$out/metacontroller" && -d "$out/src/manifests/production" ]]; then
		echo "$out"
		return 0
	fi
	echo "e2e/metacontroller: building Metacontroller $version from $src into $out" >&2
	local start=$SECONDS
	rm -rf "$out/src" "$out/src.tmp"
	mkdir -p "$out/src.tmp"
	if [[ -d "$src" ]]; then
		cp -r "$src"/. "$out/src.tmp/"
	else
		# An archive from `git archive --prefix=<dir>/`: one top directory.
		tar -xzf "$src" -C "$out/src.tmp" --strip-components=1
	fi
	[[ -f "$out/src.tmp/pkg/cmd/metacontroller/main.go" ]] || {
		echo "e2e/metacontroller: $src holds no pkg/cmd/metacontroller/main.go" >&2
		return 1
	}
	(cd "$out/src.tmp" && "$go" build -p "${STACKDOME_E2E_BUILD_P:-$(nproc)}" -trimpath -buildvcs=false \
		-ldflags "-s -w" -o "$out/metacontroller.tmp" ./pkg/cmd/metacontroller)
	mv "$out/src.tmp" "$out/src"
	mv -f "$out/metacontroller.tmp" "$out/metacontroller"
	echo "e2e/metacontroller: built metacontroller in $((SECONDS - start))s" >&2
	echo "$out"
}

main "$@"
exit
