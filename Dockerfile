# stackdome's image from a container engine: the image `make image` builds
# without one (tools/image), for a platform team whose pipeline builds from a
# Dockerfile. CI builds this file with Buildah and holds its image equal to
# make image's (make test-dockerfile): the same one file, /stackdome byte for
# byte, user, entrypoint, env, ports and labels.
#
#   docker buildx build --platform linux/amd64,linux/arm64 -t stackdome:0.2.0 \
#     --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg CREATED="$(date -u -d @"$(git log -1 --format=%ct)" +%Y-%m-%dT%H:%M:%SZ)" .
#   buildah bud --platform linux/arm64 -t stackdome:0.2.0 .      # same build args
#
# VERSION defaults to the chart's appVersion (a test holds them equal);
# REVISION (the commit) and CREATED (RFC 3339, the commit's time) have no
# default: unknown, their labels are empty rather than wrong. GOPROXY is
# passed to go build: a mirror, or a file:// proxy (CI: the host's module
# cache, read-only, with no network).

# The Go make image is built with in CI: the same toolchain gives the same
# binary (a test checks the machine's Go against this version).
ARG GO_VERSION=1.26.8

# The build stage runs on the builder's own platform and cross-compiles for
# the target (CGO_ENABLED=0 needs no C toolchain), so --platform linux/arm64
# needs no emulation.
FROM --platform=$BUILDPLATFORM docker.io/library/golang:${GO_VERSION} AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=0.2.0
ARG REVISION=
ARG GOPROXY
WORKDIR /src
COPY . .
# make build's flags (Makefile): static, no build paths, no VCS stamp, so
# one commit gives one binary whatever the checkout. VERSION and REVISION
# are declared here for -ldflags -X, which must stay the Makefile's for the
# binaries to be the same bytes. Modules and compiled packages are kept in
# cache mounts between builds, not in layers.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS="$TARGETOS" GOARCH="$TARGETARCH" \
    go build -trimpath -buildvcs=false \
      -ldflags="-X main.version=${VERSION} -X main.revision=${REVISION}" -o /out/stackdome .

# The image: the binary as its one file, on nothing (no shell, no libc).
FROM scratch
ARG VERSION=0.2.0
ARG REVISION=
ARG CREATED=
COPY --from=build --chmod=0755 /out/stackdome /stackdome
USER 65532:65532
WORKDIR /
EXPOSE 8080 8081 8082
LABEL org.opencontainers.image.created="$CREATED" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.revision="$REVISION" \
      org.opencontainers.image.source="https://github.com/stackdome/stackdome" \
      org.opencontainers.image.title="stackdome" \
      org.opencontainers.image.version="$VERSION"
# The chart passes flags only, after this entrypoint.
ENTRYPOINT ["/stackdome", "serve"]
