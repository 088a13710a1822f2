#!/usr/bin/env bash
# build.sh builds kubectl v1.37.2 for the e2e suite (TestInstallDoc runs
# docs/install.md's commands with it) from this module's pinned sources, into
# a cache outside the repository keyed by the hash of go.mod, go.sum, main.go
# and this script — a key of its own, so the control-plane binaries of
# e2e/tools keep theirs. A fresh clone on the same machine reuses the binary;
# it is built only when missing.
#
# Prints the cache directory (holding `kubectl`) on stdout; progress goes to
# stderr. STACKDOME_E2E_CACHE overrides the cache root
# ($HOME/.cache/stackdome-e2e); STACKDOME_E2E_BUILD_P sets `go build -p`
# (default: the number of CPUs).
set -euo pipefail

# The whole script is one function, read by bash before it runs.
main() {
	here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
	cd "$here"

	go="${GO:-go}"
	root="${STACKDOME_E2E_CACHE:-${HOME:?}/.cache/stackdome-e2e}"
	hash="$(cat go.mod go.sum main.go build.sh | sha256sum | cut -c1-16)"
	out="$root/kubectl-$hash"
	mkdir -p "$out"

	# kubectl version prints what these say; unset, it says v0.0.0-master.
	local ldflags="-s -w" pkg
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $pkg.gitVersion=v1.37.2 -X $pkg.gitMajor=1 -X $pkg.gitMinor=37"
		ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
	done

	export CGO_ENABLED=0
	exec 9>"$out/.lock"
	flock 9
	if [[ ! -x "$out/kubectl" ]]; then
		echo "e2e/kubectl: building kubectl into $out" >&2
		local start=$SECONDS
		"$go" build -p "${STACKDOME_E2E_BUILD_P:-$(nproc)}" -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out/kubectl.tmp" .
		mv -f "$out/kubectl.tmp" "$out/kubectl"
		echo "e2e/kubectl: built kubectl in $((SECONDS - start))s" >&2
	fi
	echo "$out"
}

main "$@"
exit
