//go:build e2e

package node

import (
	"context"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// Thin forwarders to the framework, under the names the tests were
// written with: what framework.NodeTestMain set up (framework.RunningNode),
// and the node fixture's namespaces (node_fixture.go), runners
// (node_run.go), waits (node_waits.go) and StackResources
// (node_stackresource.go). They hold no state; a test may call
// framework.NewNodeFixture(t) and its methods directly instead.

func kube() *framework.Kube     { return framework.RunningNode().Cluster.Kube }
func kubeconfig() string        { return framework.RunningNode().Cluster.Kubeconfig }
func realNode() *framework.Node { return framework.RunningNode().Node }
func repoRoot() string          { return framework.RunningNode().Root }
func kubectlBin() string        { return framework.RunningNode().Kubectl }
func scratchDir() string        { return framework.RunningNode().Scratch }
func sharedDir() string         { return framework.RunningNode().Shared }

func mcManifests() (string, error) { return framework.RunningNode().MetacontrollerManifests() }

func newNamespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	return framework.NewNodeFixture(t).Namespace(labels)
}

func helm(ctx context.Context, args ...string) ([]byte, error) {
	return framework.RunningNode().Helm(ctx, args...)
}

func kubectl(ctx context.Context, args ...string) ([]byte, error) {
	return framework.RunningNode().KubectlRun(ctx, args...)
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	framework.NewNodeFixture(t).WaitFor(timeout, what, cond)
}

func restate(t *testing.T, last func() string) { framework.NewNodeFixture(t).Restate(last) }

func srPath(ns, name string) string { return framework.SRPath(ns, name) }

func createApp(t *testing.T, ns, name string, spec obj) {
	t.Helper()
	framework.NewNodeFixture(t).CreateApp(ns, name, spec)
}

func srCondition(sr obj, typ string) obj { return framework.SRCondition(sr, typ) }

func waitCondition(t *testing.T, timeout time.Duration, ns, name, typ, status, reason string) obj {
	t.Helper()
	return framework.NewNodeFixture(t).WaitCondition(timeout, ns, name, typ, status, reason)
}

func appPods(t *testing.T, ns, name string, n int, timeout time.Duration) []obj {
	t.Helper()
	return framework.NewNodeFixture(t).AppPods(ns, name, n, timeout)
}

func podReady(p obj) bool { return framework.PodReady(p) }

func describePods(t *testing.T, ns string) {
	t.Helper()
	framework.NewNodeFixture(t).DescribePods(ns)
}
