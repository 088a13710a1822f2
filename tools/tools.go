//go:build tools

// Package tools pins the build and test tools stackdome runs but never links:
// controller-gen generates the CRD from schema's Go types, helm renders and
// lints the chart, staticcheck lints the Go code (make lint). Keeping them in
// their own module keeps the main go.mod small.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
	_ "honnef.co/go/tools/cmd/staticcheck"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
