//go:build e2e

package framework

// Faults played on the real node's cluster, each returning once the
// cluster is back: pods evicted as `kubectl drain` does, kube-apiserver
// restarted, etcd stopped for a while.

import (
	"fmt"
	"net/http"
	"time"
)

// EvictPods evicts the release's pods of component one at a time, as
// `kubectl drain` does: through the Eviction API, again while a
// PodDisruptionBudget refuses (429), and each time waits until the
// Deployment has all its replicas available again.
func (f *NodeFixture) EvictPods(rel *Release, component string) {
	t := f.t
	t.Helper()
	for _, p := range rel.Pods(t, component) {
		name := PodName(p)
		path := "/api/v1/namespaces/" + rel.NS + "/pods/" + name
		f.WaitFor(2*time.Minute, "eviction of "+name, func() (bool, error) {
			_, err := f.Kube.Create(t.Context(), path+"/eviction", Obj{
				"apiVersion": "policy/v1", "kind": "Eviction",
				"metadata": Obj{"name": name, "namespace": rel.NS},
			})
			return err == nil, err
		})
		f.WaitFor(2*time.Minute, name+" gone and "+component+" available again", func() (bool, error) {
			if _, err := f.Kube.Get(t.Context(), path); err == nil || !IsCode(err, http.StatusNotFound) {
				return false, fmt.Errorf("%s still there (%v)", name, err)
			}
			pods, err := f.Kube.List(t.Context(), "/api/v1/namespaces/"+rel.NS+"/pods",
				"app.kubernetes.io/instance="+rel.Name+",app.kubernetes.io/component="+component)
			if err != nil {
				return false, err
			}
			ready := 0
			for _, q := range pods {
				if PodReady(q) {
					ready++
				}
			}
			return ready >= 2, fmt.Errorf("%d of the %s pods ready", ready, component)
		})
	}
}

// RestartAPIServer restarts the control plane's kube-apiserver and waits
// until it is ready again.
func (f *NodeFixture) RestartAPIServer() {
	t := f.t
	t.Helper()
	if err := f.Cluster.RestartAPIServer(t.Context(), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// StallEtcd stops etcd for d, then waits until the API server reads again.
func (f *NodeFixture) StallEtcd(d time.Duration) {
	t := f.t
	t.Helper()
	if err := f.Cluster.StallEtcd(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	f.WaitFor(time.Minute, "the API server reading from etcd again", func() (bool, error) {
		_, err := f.Kube.Get(t.Context(), "/api/v1/namespaces/default")
		return err == nil, err
	})
}

// KillPods kills every container of pods with SIGKILL at once and waits
// until the kubelet has restarted each and the pod is Ready again.
func (f *NodeFixture) KillPods(pods []Obj) {
	t := f.t
	t.Helper()
	for _, p := range pods {
		for _, c := range ToSlice(Dig(p, "status", "containerStatuses")) {
			if err := f.Node.KillContainer(t.Context(), fmt.Sprint(Dig(c, "containerID"))); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range pods {
		ns, name, before := fmt.Sprint(Dig(p, "metadata", "namespace")), PodName(p), PodRestarts(p)
		f.WaitFor(2*time.Minute, name+" restarted and Ready", func() (bool, error) {
			now, err := f.Kube.Get(t.Context(), "/api/v1/namespaces/"+ns+"/pods/"+name)
			if err != nil {
				return false, err
			}
			return PodRestarts(now) > before && PodReady(now), fmt.Errorf("restarts %d, Ready %v", PodRestarts(now), PodReady(now))
		})
	}
}
