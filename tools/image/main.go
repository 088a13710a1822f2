// Command image packs the static stackdome binary into an OCI image tarball
// without a container engine: one layer holding /stackdome on an empty base
// (scratch), run as 65532:65532 with the entrypoint /stackdome serve. Every
// byte it writes follows from its inputs — the binary, the flags and the
// -created time — so two runs on the same commit give the same digest.
//
//	go run . -binary ../../bin/stackdome -out ../../bin/stackdome-image.tar \
//	  -version v0.1.0 -revision $(git rev-parse HEAD) -created $(git log -1 --format=%ct)
//
// `make image` runs it on `make build`'s binary. It prints the manifest digest.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "image:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var spec imageSpec
	var out, created string
	fs.StringVar(&spec.binary, "binary", "", "the static stackdome binary (make build)")
	fs.StringVar(&out, "out", "", "the OCI image tarball to write")
	fs.StringVar(&spec.repository, "repository", "ghcr.io/stackdome/stackdome", "repository the tarball's tag names")
	fs.StringVar(&spec.version, "version", "", "org.opencontainers.image.version, and the tag")
	fs.StringVar(&spec.revision, "revision", "", "org.opencontainers.image.revision: the commit")
	fs.StringVar(&spec.source, "source", "https://github.com/stackdome/stackdome", "org.opencontainers.image.source")
	fs.StringVar(&created, "created", os.Getenv("SOURCE_DATE_EPOCH"), "creation time in Unix seconds (default $SOURCE_DATE_EPOCH): the commit time, never now")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, f := range []struct{ name, value string }{
		{"-binary", spec.binary}, {"-out", out}, {"-version", spec.version}, {"-revision", spec.revision}, {"-created", created},
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

	img, err := build(spec)
	if err != nil {
		return err
	}
	digest, err := writeArchive(out, img, spec.repository, spec.version)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, digest)
	return err
}
