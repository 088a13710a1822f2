//go:build e2e

package framework

// The per-test fixture of the real-node suite (e2e/node), as Fixture is
// ./e2e's: NodeTestMain starts the control plane and the node once; each
// test makes a NodeFixture from its t and reaches them, its namespaces,
// the waits (node_waits.go), the runners (node_run.go), the platform
// (node_platform.go) and the watch of writes (watch.go) through it.

import (
	"context"
	"testing"
	"time"
)

// NodeFixture is one test's view of the run NodeTestMain set up: the
// Suite (its Cluster, Node, Root, Shared, Kubectl, Scratch), the API client
// Kube, and the namespaces the test makes with Namespace. Making one
// creates nothing. It belongs to the t it was made from: a method without a
// t parameter fails, skips and cleans up on that test and is called from
// its goroutine; a subtest makes its own.
type NodeFixture struct {
	*Suite
	Kube *Kube

	t *testing.T
}

// NewNodeFixture makes t's fixture; it fails t at once when the package's
// TestMain is not framework.NodeTestMain.
func NewNodeFixture(t *testing.T) *NodeFixture {
	t.Helper()
	if suite == nil || suite.Node == nil {
		t.Fatal("no node: the package's TestMain must be framework.NodeTestMain")
	}
	return &NodeFixture{Suite: suite, Kube: suite.Cluster.Kube, t: t}
}

// Namespace creates a namespace (generateName node-) labelled
// stackdome.io/e2e=true and labels (Pod Security levels, for one), and
// deletes it when the test ends; it fails the test if it cannot create it.
func (f *NodeFixture) Namespace(labels map[string]string) string {
	t := f.t
	t.Helper()
	l := Obj{"stackdome.io/e2e": "true"}
	for k, v := range labels {
		l[k] = v
	}
	o, err := f.Kube.Create(t.Context(), "/api/v1/namespaces", Obj{
		"apiVersion": "v1", "kind": "Namespace", "metadata": Obj{"generateName": "node-", "labels": l},
	})
	if err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	name := Dig(o, "metadata", "name").(string)
	k := f.Kube
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := k.Do(ctx, "DELETE", "/api/v1/namespaces/"+name, "", nil, nil); err != nil && !IsCode(err, 404) {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
	return name
}

func (f *NodeFixture) MustCreate(path string, o Obj) Obj {
	t := f.t
	t.Helper()
	got, err := f.Kube.Create(t.Context(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
