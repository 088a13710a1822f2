//go:build e2e

// Package framework is what the e2e suites run their tests on, one concern a
// file, as Metacontroller's test/integration/framework and cert-manager's
// test/e2e/framework are: the control plane (cluster.go: etcd,
// kube-apiserver, kube-controller-manager built from e2e/tools), its API
// client (kube.go), the real node (node*.go: containerd, kubelet,
// kube-proxy, kube-router, CoreDNS and kube-scheduler in namespaces of their
// own, in the test host's network namespace (testhost.go), and the proof
// that they leave the machine as it was), the images it runs (images*.go:
// the real Metacontroller built from its pinned source (metacontroller.go),
// Traefik, stackdome and the test apps), the pinned Traefik chart
// (traefikchart.go), the processes they run as (proc.go) and the builds that
// make their binaries (build.go). For the ./e2e package, TestMain starts
// the loopback control plane and NewFixture gives each test its view of it
// (fixture.go), with the runners (helm.go, kubectl.go), the CRD
// installation (crds.go) and the checks (admission.go, stored.go, …) its
// tests use. Its one package state is that control plane, set by TestMain
// before any test runs; the node suite reaches each part through the value
// its TestMain made. The files the untagged tests of ./e2e use in `make
// test` (jsonmatch.go, vendor.go, crdschema.go, installdoc_*.go) have no
// build tag and use nothing tagged.
package framework
