//go:build tools

// Package tools pins the Kubernetes commands the e2e suite builds — the
// control plane, and the real node's kubelet, kube-proxy and kube-scheduler —
// so `go mod tidy` keeps their dependencies in this module's graph.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
