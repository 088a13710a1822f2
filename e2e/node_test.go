//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"
)

// testNode is the Node object pods are bound to: kube-controller-manager's
// EndpointSlice controller lists only pods bound to a node. There is no
// kubelet behind it; the suite runs kube-controller-manager without the
// node-lifecycle controller, which would otherwise mark the node's pods not
// ready when the node never reports.
const testNode = "e2e-node"

var nodeOnce struct {
	once sync.Once
	err  error
}

// requireNode creates testNode once per run.
func requireNode(t *testing.T) {
	t.Helper()
	if err := ensureNode(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// ensureNode creates testNode once per run.
func ensureNode(ctx context.Context) error {
	nodeOnce.once.Do(func() {
		_, err := suite.cluster.kube.create(ctx, "/api/v1/nodes", obj{
			"apiVersion": "v1", "kind": "Node",
			"metadata": obj{"name": testNode, "labels": obj{"kubernetes.io/hostname": testNode}},
		})
		if err != nil && !isCode(err, 409) {
			nodeOnce.err = fmt.Errorf("creating node %s: %w", testNode, err)
		}
	})
	return nodeOnce.err
}

// runPod does what the scheduler and a kubelet would for one pod: binds it
// to testNode, then marks it Running and Ready at ip. Pods bound to a node
// never finish deleting without a kubelet, so the test's cleanup deletes
// them with grace period 0 before their namespace goes.
func runPod(t *testing.T, ns string, pod obj, ip string) {
	t.Helper()
	requireNode(t)
	k := suite.cluster.kube
	name := dig(pod, "metadata", "name").(string)
	if dig(pod, "spec", "nodeName") == nil {
		_, err := k.create(t.Context(), "/api/v1/namespaces/"+ns+"/pods/"+name+"/binding", obj{
			"apiVersion": "v1", "kind": "Binding",
			"metadata": obj{"name": name},
			"target":   obj{"apiVersion": "v1", "kind": "Node", "name": testNode},
		})
		if err != nil {
			t.Fatalf("binding pod %s to %s: %v", name, testNode, err)
		}
		t.Cleanup(func() { forceDeletePod(ns, name) })
	}
	markPodReady(t, ns, pod, ip)
}

// setPodReady flips the Ready condition of a running pod, as a kubelet does
// when its readiness probe starts or stops failing.
func setPodReady(t *testing.T, ns, name string, ready bool) {
	t.Helper()
	status := "False"
	if ready {
		status = "True"
	}
	now := time.Now().UTC().Format(time.RFC3339)
	patch := obj{"status": obj{"conditions": []any{
		obj{"type": "Ready", "status": status, "lastTransitionTime": now},
		obj{"type": "ContainersReady", "status": status, "lastTransitionTime": now},
		obj{"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
	}}}
	if _, err := suite.cluster.kube.mergePatch(t.Context(), "/api/v1/namespaces/"+ns+"/pods/"+name+"/status", patch); err != nil {
		t.Fatalf("setting pod %s ready=%v: %v", name, ready, err)
	}
}

// forceDeletePod deletes a pod at once, as `kubectl delete --force
// --grace-period=0` does.
func forceDeletePod(ns, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q := url.Values{"gracePeriodSeconds": {"0"}}
	_ = suite.cluster.kube.do(ctx, "DELETE", "/api/v1/namespaces/"+ns+"/pods/"+name+"?"+q.Encode(), "", obj{
		"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
	}, nil)
}

// readyAddresses are the addresses of the ready endpoints in the
// EndpointSlices of a Service, as kube-controller-manager publishes them.
func readyAddresses(ctx context.Context, ns, service string) ([]string, error) {
	slices, err := listItems(ctx, "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices", "kubernetes.io/service-name="+service)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range slices {
		eps, _ := s["endpoints"].([]any)
		for _, e := range eps {
			if dig(e, "conditions", "ready") != true {
				continue
			}
			addrs, _ := dig(e, "addresses").([]any)
			for _, a := range addrs {
				out = append(out, fmt.Sprint(a))
			}
		}
	}
	return out, nil
}
