//go:build e2e

package framework

// The waits of the real-node suite's tests, and what a failed one logs.

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// WaitFor polls cond every 250 ms until it holds, failing the test with the
// last error cond gave after timeout.
func (f *NodeFixture) WaitFor(timeout time.Duration, what string, cond func() (bool, error)) {
	f.t.Helper()
	if err := WaitUntil(timeout, 250*time.Millisecond, what, cond); err != nil {
		f.t.Fatal(err)
	}
}

// Restate registers, before the test's other cleanups so that it runs
// after them all, a cleanup that logs what last says if the test failed:
// a failing test's dumps (pods described, their logs) come after its
// error, and a reader of the end of a long log — CI's report keeps the
// lines nearest "--- FAIL" — would see the dumps alone.
func (f *NodeFixture) Restate(last func() string) {
	t := f.t
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s failed %s", t.Name(), last())
		}
	})
}

// AppPods waits until exactly n pods of the app name in ns are Running
// and Ready (the kubelet's word), none of them being deleted, and returns
// them; it fails the test after timeout.
func (f *NodeFixture) AppPods(ns, name string, n int, timeout time.Duration) []Obj {
	t := f.t
	t.Helper()
	var pods []Obj
	f.WaitFor(timeout, fmt.Sprintf("%d ready pod(s) of %s/%s", n, ns, name), func() (bool, error) {
		var err error
		pods, err = f.Kube.List(t.Context(), "/api/v1/namespaces/"+ns+"/pods", "app.kubernetes.io/instance="+name)
		if err != nil {
			return false, err
		}
		ready := 0
		for _, p := range pods {
			if Dig(p, "metadata", "deletionTimestamp") == nil && PodReady(p) {
				ready++
			}
		}
		return ready == n && len(pods) == n, fmt.Errorf("%d pods, %d ready", len(pods), ready)
	})
	return pods
}

// PodReady is the pod's Ready condition, as the kubelet reports it.
func PodReady(p Obj) bool {
	cs, _ := Dig(p, "status", "conditions").([]any)
	for _, c := range cs {
		if Dig(c, "type") == "Ready" {
			return Dig(c, "status") == "True"
		}
	}
	return false
}

// DescribePods logs, if the test failed, `kubectl describe pods` of ns and
// the last lines of its apps' containers (their crashed runs' too), of at
// most describedLogs pods; it does nothing if the test passed. Only the
// pods of real nodes have logs: for a pod on the fleet's stand-in node the
// API server would dial that node's kubelet at standinNodeIP, an address
// nothing may dial, so those pods are left out.
func (f *NodeFixture) DescribePods(ns string) {
	t := f.t
	t.Helper()
	if !t.Failed() {
		return
	}
	ctx := context.Background()
	out, _ := f.KubectlRun(ctx, "describe", "pods", "-n", ns)
	t.Logf("kubectl describe pods -n %s:\n%s", ns, Indent(strings.TrimSpace(string(out))))
	out, err := f.KubectlRun(ctx, "get", "pods", "-n", ns, "--selector=app.kubernetes.io/instance",
		"--field-selector=spec.nodeName!="+standinNodeName, "-o", "name")
	if err != nil {
		t.Logf("kubectl get pods -n %s: %v\n%s", ns, err, out)
		return
	}
	pods := strings.Fields(string(out))
	if len(pods) > describedLogs {
		t.Logf("the logs of %d of the %d pods of %s on a real node", describedLogs, len(pods), ns)
		pods = pods[:describedLogs]
	}
	// The containers' own words, the crashed ones' last run too.
	for _, pod := range pods {
		for _, prev := range []string{"false", "true"} {
			out, _ = f.KubectlRun(ctx, "logs", "-n", ns, pod, "--all-containers", "--prefix", "--tail=15", "--previous="+prev)
			t.Logf("kubectl logs -n %s %s --previous=%s:\n%s", ns, pod, prev, Indent(strings.TrimSpace(string(out))))
		}
	}
}

// describedLogs bounds the pods whose logs DescribePods reads.
const describedLogs = 20

// WaitPodReady waits for the pod to be Running and Ready and returns it.
func (f *NodeFixture) WaitPodReady(ns, name string, timeout time.Duration) Obj {
	t := f.t
	t.Helper()
	var pod Obj
	if err := WaitUntil(timeout, 200*time.Millisecond, "pod "+ns+"/"+name+" Ready", func() (bool, error) {
		var err error
		if pod, err = f.Kube.Get(t.Context(), "/api/v1/namespaces/"+ns+"/pods/"+name); err != nil {
			return false, err
		}
		if err := f.Node.Healthy(); err != nil {
			return false, err
		}
		ready := PodCondition(pod, "Ready")
		return Dig(pod, "status", "phase") == "Running" && ready["status"] == "True",
			fmt.Errorf("phase %v, Ready %v, containers %v", Dig(pod, "status", "phase"), ready["status"], Dig(pod, "status", "containerStatuses"))
	}); err != nil {
		t.Fatal(err)
	}
	return pod
}
