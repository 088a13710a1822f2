# syntax=docker/dockerfile:1
# Build: static, trimmed, no cgo. Run: distroless static, non-root, no shell.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/stackdome .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/stackdome /stackdome
USER 65532:65532
EXPOSE 8080 8082
ENTRYPOINT ["/stackdome"]
CMD ["serve"]
