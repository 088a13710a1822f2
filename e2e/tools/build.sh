#!/usr/bin/env bash
# build.sh builds the e2e control plane — etcd, kube-apiserver and
# kube-controller-manager — from this module's pinned sources, into a cache
# outside the repository keyed by the hash of everything that decides the
# bytes (go.mod, go.sum, etcd/main.go, coredns/, kuberouter/, this script). A
# fresh clone on the same machine reuses the binaries; only a missing one is
# built.
#
# `build.sh node` builds the real node's binaries into the same directory
# instead: kubelet, kube-proxy and kube-scheduler from this module (as the
# control plane), CoreDNS v1.15.0 with the node's plugins only from the module
# in coredns/, and kube-router v2.1.0's network policy controller only from
# the module in kuberouter/ (each main.go says why; each go.mod pins its
# version and decides its dependencies).
#
# Prints the cache directory on stdout; progress goes to stderr.
# STACKDOME_E2E_CACHE overrides the cache root ($HOME/.cache/stackdome-e2e).
# STACKDOME_E2E_BUILD_P sets `go build -p` (default: the number of CPUs). The
# binaries are built one after another, so only one ~2.6 GiB link runs at a
# time; set it to 1 on a machine with little memory.
set -euo pipefail

build() { # out ldflags name package
	local out="$1" ldflags="$2" name="$3" pkg="$4"
	if [[ -x "$out/$name" ]]; then
		return 0
	fi
	echo "e2e/tools: building $name ($pkg) into $out" >&2
	local start=$SECONDS
	"$go" build -p "${STACKDOME_E2E_BUILD_P:-$(nproc)}" -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out/$name.tmp" "$pkg"
	mv -f "$out/$name.tmp" "$out/$name"
	echo "e2e/tools: built $name in $((SECONDS - start))s" >&2
}

build_module() { # out ldflags name dir: the main package of the module in dir
	local out="$1" ldflags="$2" name="$3" dir="$4"
	if [[ -x "$out/$name" ]]; then
		return 0
	fi
	echo "e2e/tools: building $name ($dir) into $out" >&2
	local start=$SECONDS
	(cd "$dir" && "$go" build -p "${STACKDOME_E2E_BUILD_P:-$(nproc)}" -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out/$name.tmp" .)
	mv -f "$out/$name.tmp" "$out/$name"
	echo "e2e/tools: built $name in $((SECONDS - start))s" >&2
}

# The whole script is one function, read by bash before it runs: editing this
# file during a build cannot change what the running build does.
main() {
	here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
	cd "$here"

	go="${GO:-go}"
	root="${STACKDOME_E2E_CACHE:-${HOME:?}/.cache/stackdome-e2e}"
	hash="$(cat go.mod go.sum etcd/main.go coredns/go.mod coredns/go.sum coredns/main.go kuberouter/go.mod kuberouter/go.sum kuberouter/main.go build.sh | sha256sum | cut -c1-16)"
	out="$root/$hash"
	mkdir -p "$out"

	k8s_version=v1.37.2
	k8s_major=1
	k8s_minor=37
	# Without these, kube-apiserver reports v0.0.0-master and helm refuses charts
	# whose kubeVersion it cannot satisfy (or assumes an ancient server).
	ldflags="-s -w"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $pkg.gitVersion=$k8s_version"
		ldflags+=" -X $pkg.gitMajor=$k8s_major"
		ldflags+=" -X $pkg.gitMinor=$k8s_minor"
		ldflags+=" -X $pkg.gitTreeState=clean"
		ldflags+=" -X $pkg.buildDate=1970-01-01T00:00:00Z"
	done

	export CGO_ENABLED=0
	# One builder at a time per cache dir: a second `make e2e` waits, then finds
	# the binaries and builds nothing.
	exec 9>"$out/.lock"
	flock 9

	case "${1:-}" in
	"")
		build "$out" "$ldflags" etcd ./etcd
		build "$out" "$ldflags" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
		build "$out" "$ldflags" kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
		;;
	node)
		build "$out" "$ldflags" kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler
		build "$out" "$ldflags" kubelet k8s.io/kubernetes/cmd/kubelet
		build "$out" "$ldflags" kube-proxy k8s.io/kubernetes/cmd/kube-proxy
		build_module "$out" "-s -w" coredns ./coredns
		build_module "$out" "-s -w" kube-router ./kuberouter
		;;
	*)
		echo "usage: build.sh [node]" >&2
		exit 2
		;;
	esac

	echo "$out"
}

main "$@"
exit
