//go:build tools

// Package promtool pins promtool (Prometheus v3.16.0), which `make test`
// builds into a cache outside the repository (build.sh) to check and
// unit-test the chart's alert rules (tools/monitoring). A module of its own,
// holding nothing else: its go.mod and go.sum are exactly the inputs of the
// binary, so the cache key changes only when promtool does, and the
// Prometheus dependency tree never reaches stackdome's go.mod.
package promtool

import (
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
