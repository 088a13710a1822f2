//go:build tools

// Package tools pins the control-plane commands the e2e suite builds, so
// `go mod tidy` keeps their dependencies in this module's graph.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
