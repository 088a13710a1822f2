#!/usr/bin/env bash
# build.sh builds Traefik v3.7.11 (the pinned Traefik chart's appVersion) for the e2e suite from the Go module proxy,
# into a cache outside the repository keyed by the hash of everything that
# decides the bytes (go.mod, go.sum, this script). A fresh clone on the same
# machine reuses the binary; it is built only when missing.
#
# `go install github.com/traefik/traefik/v3/cmd/traefik@v3.7.11` cannot work:
# Traefik's go.mod has replace directives, which apply only in the main module.
# So this directory is a wrapper module repeating them, and the script lays out
# a source tree in the cache from the module cache (nothing copied from Traefik
# is committed here):
#   - package main: cmd/traefik/{traefik,logger,plugins}.go of the module;
#   - ext/: the nested module github.com/traefik/traefik/dynamic/ext, which is
#     not in the module zip: upstream it declares three empty struct types;
#   - lego/: lego v5 (the version Traefik requires) without the 13 DNS
#     providers whose SDKs the module proxy here refuses (only ACME DNS-01 for
#     those providers is lost);
#   - go-http-auth/: abbot/go-http-auth v0.4.0 plus the two functions of the
#     containous fork Traefik pins (the proxy refuses that pseudo-version);
#     only the basicAuth/digestAuth middlewares use them.
# Why a wrapper module: Traefik's go.mod (traefik/traefik@v3.7.11 go.mod) has
# replace directives, which apply only in the main module, so
# `go install github.com/traefik/traefik/v3/cmd/traefik@v3.7.11` cannot work.
#
# Prints the cache directory (holding `traefik` and the CRD definitions
# `crds.yaml`) on stdout; progress goes to stderr.
# STACKDOME_E2E_CACHE overrides the cache root ($HOME/.cache/stackdome-e2e).
# STACKDOME_E2E_BUILD_P sets `go build -p` (default: the number of CPUs).
set -euo pipefail

traefik_version=v3.7.11
lego_version=v5.4.1
httpauth_version=v0.4.0

# The providers whose SDK modules the module proxy here answers 403 for.
refused_providers=(alidns aliesa azion dnsimple edgedns edgeone huaweicloud oraclecloud regfish sakuracloud tencentcloud ucloud yandexcloud)

moddir() { # module@version → its directory in the module cache
	(cd "$tmp" && GOFLAGS=-mod=mod "$go" mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
}

layout() { # src: the wrapper module's source tree, from the module cache
	local src="$1" d
	cp go.mod go.sum "$src/"

	d="$(moddir "github.com/traefik/traefik/v3@$traefik_version")"
	[[ -n "$d" ]] || { echo "e2e/traefik: no module directory for traefik" >&2; return 1; }
	cp "$d"/cmd/traefik/traefik.go "$d"/cmd/traefik/logger.go "$d"/cmd/traefik/plugins.go "$src/"
	cp "$d"/docs/content/reference/dynamic-configuration/kubernetes-crd-definition-v1.yml "$src/crds.yaml"

	mkdir -p "$src/ext"
	printf 'module github.com/traefik/traefik/dynamic/ext\n\ngo 1.26.0\n' >"$src/ext/go.mod"
	cat >"$src/ext/ext.go" <<'EOF'
// Package ext stands in for Traefik's nested module of the same path, which
// the module zip does not carry: upstream it declares these three empty types,
// inlined into the dynamic configuration as extension points.
package ext

// HTTP extends the dynamic HTTP configuration; empty upstream.
type HTTP struct{}

// Router extends an HTTP router; empty upstream.
type Router struct{}

// RouterIng extends an ingress router; empty upstream.
type RouterIng struct{}
EOF

	d="$(moddir "github.com/go-acme/lego/v5@$lego_version")"
	[[ -n "$d" ]] || { echo "e2e/traefik: no module directory for lego" >&2; return 1; }
	cp -r "$d" "$src/lego"
	chmod -R u+w "$src/lego"
	local gen="$src/lego/providers/dns/zz_gen_dns_providers.go" p
	for p in "${refused_providers[@]}"; do
		# One import line, and each `case …:` line followed by its return.
		awk -v p="$p" '
			$0 ~ "\"github.com/go-acme/lego/v5/providers/dns/" p "\"$" { next }
			$0 ~ "^[ \t]*return " p "\\.NewDNSProvider\\(\\)$" { held = ""; next }
			{ if (held != "") print held; held = "" }
			/^[ \t]*case .*:$/ { held = $0; next }
			{ print }
			END { if (held != "") print held }
		' "$gen" >"$gen.tmp"
		mv "$gen.tmp" "$gen"
		rm -rf "$src/lego/providers/dns/$p"
	done

	d="$(moddir "github.com/abbot/go-http-auth@$httpauth_version")"
	[[ -n "$d" ]] || { echo "e2e/traefik: no module directory for go-http-auth" >&2; return 1; }
	mkdir -p "$src/go-http-auth"
	cp "$d"/*.go "$src/go-http-auth/"
	rm -f "$src"/go-http-auth/*_test.go
	chmod -R u+w "$src/go-http-auth"
	printf 'module github.com/abbot/go-http-auth\n\ngo 1.21\n\nrequire golang.org/x/crypto v0.56.0\n' >"$src/go-http-auth/go.mod"
	cat >"$src/go-http-auth/containous.go" <<'EOF'
package auth

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// CheckSecret reports whether password matches secret, an htpasswd hash
// (MD5-crypt, {SHA} or bcrypt), as BasicAuth.CheckAuth compares them.
func CheckSecret(password, secret string) bool {
	compare := compareFuncs[0].compare
	for _, cmp := range compareFuncs[1:] {
		if strings.HasPrefix(secret, cmp.prefix) {
			compare = cmp.compare
			break
		}
	}
	return compare([]byte(secret), []byte(password)) == nil
}

// RequireAuthStale is RequireAuth with stale=true in the challenge: the
// client's nonce was out of date, not its credentials.
func (a *DigestAuth) RequireAuthStale(w http.ResponseWriter, r *http.Request) {
	if len(a.clients) > a.ClientCacheSize+a.ClientCacheTolerance {
		a.Purge(a.ClientCacheTolerance * 2)
	}
	nonce := RandomKey()
	a.clients[nonce] = &digest_client{nc: 0, last_seen: time.Now().UnixNano()}
	w.Header().Set(contentType, a.Headers.V().UnauthContentType)
	w.Header().Set(a.Headers.V().Authenticate,
		fmt.Sprintf(`Digest realm="%s", nonce="%s", opaque="%s", algorithm="MD5", qop="auth", stale=true`,
			a.Realm, nonce, a.Opaque))
	w.WriteHeader(a.Headers.V().UnauthCode)
	w.Write([]byte(a.Headers.V().UnauthResponse))
}
EOF
}

# The whole script is one function, read by bash before it runs: editing this
# file during a build cannot change what the running build does.
main() {
	here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
	cd "$here"

	go="${GO:-go}"
	root="${STACKDOME_E2E_CACHE:-${HOME:?}/.cache/stackdome-e2e}"
	hash="$(cat go.mod go.sum build.sh | sha256sum | cut -c1-16)"
	out="$root/traefik-$hash"
	mkdir -p "$out"

	export CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=readonly
	# One builder at a time per cache dir: a second `make e2e` waits, then finds
	# the binary and builds nothing.
	exec 9>"$out/.lock"
	flock 9

	if [[ -x "$out/traefik" && -s "$out/crds.yaml" ]]; then
		echo "$out"
		return 0
	fi
	echo "e2e/traefik: building traefik $traefik_version into $out" >&2
	local start=$SECONDS
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	rm -rf "$out/src"
	mkdir -p "$out/src"
	layout "$out/src"
	if [[ -n "${STACKDOME_TRAEFIK_TIDY:-}" ]]; then
		# Maintainer path, after a version bump: tidy the laid-out module and
		# write its go.mod and go.sum back here; run again to build.
		(cd "$out/src" && GOFLAGS=-mod=mod "$go" mod tidy)
		cp "$out/src/go.mod" "$out/src/go.sum" "$here/"
		rm -rf "$out"
		echo "e2e/traefik: go.mod and go.sum tidied; run again to build" >&2
		return 0
	fi
	(cd "$out/src" && "$go" build -p "${STACKDOME_E2E_BUILD_P:-$(nproc)}" -trimpath -buildvcs=false \
		-ldflags "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$traefik_version" \
		-o "$out/traefik.tmp" .)
	cp "$out/src/crds.yaml" "$out/crds.yaml"
	mv -f "$out/traefik.tmp" "$out/traefik"
	rm -rf "$out/src"
	echo "e2e/traefik: built traefik in $((SECONDS - start))s" >&2
	echo "$out"
}

main "$@"
exit
