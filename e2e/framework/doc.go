//go:build e2e

// Package framework is what the e2e suite runs its tests on, one concern a
// file, as Metacontroller's test/integration/framework and cert-manager's
// test/e2e/framework are: the control plane (cluster.go: etcd,
// kube-apiserver, kube-controller-manager built from e2e/tools), its API
// client (kube.go), the test host in a network namespace (testhost.go), the
// one kubelet stand-in (kubelet.go, podsandbox.go), the cluster-network
// stand-in (clusternet.go), the real Metacontroller (metacontroller.go),
// Traefik (traefik.go), the real node (node*.go: containerd, kubelet,
// kube-proxy, kube-router, CoreDNS and kube-scheduler in namespaces of their
// own, and the proof that they leave the machine as it was), the processes
// they run as (proc.go) and the builds that make their binaries (build.go). It holds no package state: a test
// reaches each part through the value TestMain made.
package framework
