// Command image builds stackdome's multi-platform OCI image without a
// container engine, and pushes it. build packs one static stackdome binary
// a platform (linux/amd64, linux/arm64) into an image index — each image one
// layer holding /stackdome on an empty base (scratch), run as 65532:65532
// with the entrypoint /stackdome serve — written as an OCI image layout
// tarball, with a CycloneDX SBOM beside it. Every byte it writes follows from
// its inputs — the binaries, the flags and the -created time — so two builds
// of one commit give the same digests. push uploads such a tarball's index,
// every platform with it, to a registry.
//
//	go run . build -binary ../../bin/linux-amd64/stackdome -binary ../../bin/linux-arm64/stackdome \
//	  -out ../../bin/stackdome-image.tar -sbom ../../bin/stackdome-image.sbom.cdx.json \
//	  -version 0.2.0 -revision $(git rev-parse HEAD) -created $(git log -1 --format=%ct)
//	go run . push -archive ../../bin/stackdome-image.tar -to localhost:5000/stackdome:0.2.0
//	go run . plainhttp localhost:5000/charts
//
// `make image` and `make image-push` run it. build prints the index digest
// and each platform's manifest digest; push prints the reference pushed.
// plainhttp prints --plain-http when push's plain-HTTP policy lets a
// registry be reached without TLS, nothing otherwise: `make chart-push`
// hands it to helm push, so that the chart and the image follow one rule.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "image:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("want a command: build, pack, push or plainhttp")
	}
	switch args[0] {
	case "build":
		return runBuild(args[1:], stdout, stderr)
	case "pack":
		return runPack(args[1:], stdout, stderr)
	case "push":
		return runPush(ctx, args[1:], stdout, stderr)
	case "plainhttp":
		return runPlainHTTP(args[1:], stdout, stderr)
	default:
		return fmt.Errorf("unknown command %q: want build, pack, push or plainhttp", args[0])
	}
}

func runBuild(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("image build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var spec imageSpec
	var out, sbomOut, created string
	fs.Func("binary", "a static linux stackdome binary; once a platform (make image builds linux/amd64 and linux/arm64)", func(s string) error {
		spec.binaries = append(spec.binaries, s)
		return nil
	})
	fs.StringVar(&out, "out", "", "the OCI image layout tarball to write")
	fs.StringVar(&sbomOut, "sbom", "", "the CycloneDX SBOM (JSON) to write beside it; none when empty")
	fs.StringVar(&spec.repository, "repository", "ghcr.io/stackdome/stackdome", "repository the tarball names the image in (the chart's image.repository)")
	fs.StringVar(&spec.version, "version", "", "org.opencontainers.image.version, and the tag (the chart's appVersion)")
	fs.StringVar(&spec.revision, "revision", "", "org.opencontainers.image.revision: the commit")
	fs.StringVar(&spec.source, "source", "https://github.com/stackdome/stackdome", "org.opencontainers.image.source")
	fs.StringVar(&created, "created", os.Getenv("SOURCE_DATE_EPOCH"), "creation time in Unix seconds (default $SOURCE_DATE_EPOCH): the commit time, never now")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if len(spec.binaries) == 0 {
		return errors.New("-binary is required")
	}
	for _, f := range []struct{ name, value string }{
		{"-out", out}, {"-version", spec.version}, {"-revision", spec.revision}, {"-created", created},
	} {
		if f.value == "" {
			return fmt.Errorf("%s is required", f.name)
		}
	}
	secs, err := strconv.ParseInt(created, 10, 64)
	if err != nil || secs < 0 {
		return fmt.Errorf("-created %q: want Unix seconds", created)
	}
	spec.created = time.Unix(secs, 0).UTC()

	b, err := build(spec)
	if err != nil {
		return err
	}
	if err := writeArchive(out, b.index, spec.repository, spec.version, spec.created); err != nil {
		return err
	}
	if sbomOut != "" {
		bom, err := sbom(b, spec)
		if err != nil {
			return err
		}
		if err := writeSBOM(sbomOut, bom); err != nil {
			return err
		}
	}
	digest, err := b.index.Digest()
	if err != nil {
		return err
	}
	lines := []string{fmt.Sprintf("%-12s %s", "index", digest)}
	for _, p := range b.platforms {
		lines = append(lines, fmt.Sprintf("%-12s %s", p.platform.String(), p.manifest))
	}
	_, err = fmt.Fprintln(stdout, strings.Join(lines, "\n"))
	return err
}

func runPush(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("image push", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var archive, to string
	var insecure bool
	fs.StringVar(&archive, "archive", "", "the OCI image layout tarball image build wrote")
	fs.StringVar(&to, "to", "", "where to push: host[:port]/path:tag")
	fs.BoolVar(&insecure, "insecure", false, "allow plain HTTP to a registry that is not on loopback")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if archive == "" || to == "" {
		return errors.New("-archive and -to are required")
	}
	tag, err := pushTag(to, insecure)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "stackdome-image-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	idx, err := readArchive(archive, dir)
	if err != nil {
		return err
	}
	digest, err := push(ctx, idx, tag, insecure)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s@%s\n", tag, digest)
	return err
}

func runPlainHTTP(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("image plainhttp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	insecure := fs.Bool("insecure", false, "allow plain HTTP to a registry that is not on loopback")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("want one registry: host[:port][/path]")
	}
	host, err := registryHost(fs.Arg(0))
	if err != nil {
		return err
	}
	if *insecure || isLoopback(host) {
		_, err = fmt.Fprintln(stdout, "--plain-http")
	}
	return err
}
