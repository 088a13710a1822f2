//go:build e2e

// Package node runs the e2e suite's pods on a real node: containers from
// images, run by a real kubelet, containerd and runc, networked by the
// bridge CNI plugin, kube-proxy (nftables) and kube-router (NetworkPolicy),
// named by CoreDNS and placed by kube-scheduler, all inside a network
// namespace and a mount namespace the suite makes (framework.StartNode).
//
// framework.NodeTestMain starts a control plane of its own and the node once
// for the package, imports the images, and afterwards stops everything and
// fails the run if the machine is not as it was (framework.Node.CheckClean);
// each test reaches them through framework.NewNodeFixture(t). The package
// holds no state of its own. Run it with `make e2e`.
package node

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

func TestMain(m *testing.M) { framework.NodeTestMain(m) }

// obj is a JSON object as the API client decodes it.
type obj = framework.Obj
