package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// version is stackdome's release: the chart's version and appVersion and
// the newest release of CHANGELOG.md (TestOneVersion holds them equal), so
// that a plain `go build` or `go run .` reports it too. make build and
// make image set it to make's VERSION (-ldflags -X main.version=…), which
// is this unless overridden (VERSION=0.3.0-rc.1): the binary then names the
// tag of its image.
var version = "0.2.0"

// revision is the commit the binary was built from, set by make build and
// make image (-ldflags -X main.revision=…; "-dirty" after it when the
// checkout had uncommitted changes). They build with -buildvcs=false, so
// that an image's digest depends on the source alone; empty: the revision Go
// stamped into the build info (a go build in a git clone), else "unknown".
var revision string

// build is what a binary says of itself: `stackdome version`, the
// "starting" log line and the stackdome_build_info metric.
type build struct {
	version, revision, goVersion, platform string
}

// thisBuild is this binary's build.
func thisBuild() build {
	info, _ := debug.ReadBuildInfo()
	return describeBuild(version, revision, info, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// describeBuild is a build from what the linker set (version, revision),
// the build info Go recorded (nil when there is none) and the runtime's Go
// version and platform.
func describeBuild(version, revision string, info *debug.BuildInfo, goVersion, platform string) build {
	if revision == "" && info != nil {
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if revision != "" && modified {
			revision += "-dirty" // as the Makefile's REVISION says it
		}
	}
	if revision == "" {
		revision = "unknown"
	}
	return build{version: version, revision: revision, goVersion: goVersion, platform: platform}
}

// String is the one line `stackdome version` prints, e.g.
// "stackdome 0.2.0 (revision 8a7bf90…, go1.26.8, linux/amd64)".
func (b build) String() string {
	return fmt.Sprintf("stackdome %s (revision %s, %s, %s)", b.version, b.revision, b.goVersion, b.platform)
}

// logAttrs are b as the "starting" log line's keys.
func (b build) logAttrs() []any {
	return []any{"version", b.version, "revision", b.revision, "goversion", b.goVersion}
}

// buildInfoGauge is stackdome_build_info: 1, labelled with b's version,
// revision and Go version, the usual shape (prometheus_build_info,
// kube-state-metrics' build info) to join on or count versions of a fleet
// with.
func buildInfoGauge(b build) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "stackdome_build_info",
		Help:        "1, labelled with the version, the commit (revision) and the Go version stackdome was built with.",
		ConstLabels: prometheus.Labels{"version": b.version, "revision": b.revision, "goversion": b.goVersion},
	}, func() float64 { return 1 })
}
