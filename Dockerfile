# syntax=docker/dockerfile:1
# For users with Docker. CI builds and checks the engine-free image of
# `make image` (tools/image) instead: the same user and entrypoint on scratch.
# Build: static, trimmed, no cgo. Run: distroless static, non-root, no shell.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" -o /out/stackdome .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/stackdome /stackdome
USER 65532:65532
EXPOSE 8080 8081 8082
# The chart passes flags only, after this entrypoint.
ENTRYPOINT ["/stackdome", "serve"]
