//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestNode is the Node object pods are bound to: kube-controller-manager's
// EndpointSlice controller lists only pods bound to a node. There is no
// kubelet behind it; the suite runs kube-controller-manager without the
// node-lifecycle controller, which would otherwise mark the node's pods not
// ready when the node never reports.
const TestNode = "e2e-node"

// Kubelet is the suite's one stand-in for the scheduler and the kubelet: it
// binds pods to testNode and reports their status the way a kubelet does.
type Kubelet struct {
	kube     *Kube
	nodeOnce sync.Once
	nodeErr  error

	mu      sync.Mutex
	images  map[string]Image // ref → what runs for it
	host    *TestHost        // where StartOnHost runs pods (UseHost)
	hostEnv []string         // the in-cluster client's environment there
}

// NewKubelet is the kubelet stand-in of the cluster k serves.
func NewKubelet(k *Kube) *Kubelet { return &Kubelet{kube: k} }

// RequireNode creates testNode once per run.
func (kl *Kubelet) RequireNode(t *testing.T) {
	t.Helper()
	if err := kl.ensureNode(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// ensureNode creates testNode once per run.
func (kl *Kubelet) ensureNode(ctx context.Context) error {
	kl.nodeOnce.Do(func() {
		_, err := kl.kube.Create(ctx, "/api/v1/nodes", Obj{
			"apiVersion": "v1", "kind": "Node",
			"metadata": Obj{"name": TestNode, "labels": Obj{"kubernetes.io/hostname": TestNode}},
		})
		if err != nil && !IsCode(err, 409) {
			kl.nodeErr = fmt.Errorf("creating node %s: %w", TestNode, err)
		}
	})
	return kl.nodeErr
}

// RunPod does what the scheduler and a kubelet would for one pod: binds it
// to testNode, then marks it Running and Ready at ip. Pods bound to a node
// never finish deleting without a kubelet, so the test's cleanup deletes
// them with grace period 0 before their namespace goes.
func (kl *Kubelet) RunPod(t *testing.T, ns string, pod Obj, ip string) {
	t.Helper()
	kl.RequireNode(t)
	k := kl.kube
	name := Dig(pod, "metadata", "name").(string)
	if Dig(pod, "spec", "nodeName") == nil {
		_, err := k.Create(t.Context(), "/api/v1/namespaces/"+ns+"/pods/"+name+"/binding", Obj{
			"apiVersion": "v1", "kind": "Binding",
			"metadata": Obj{"name": name},
			"target":   Obj{"apiVersion": "v1", "kind": "Node", "name": TestNode},
		})
		if err != nil {
			t.Fatalf("binding pod %s to %s: %v", name, TestNode, err)
		}
		t.Cleanup(func() { kl.ForceDeletePod(ns, name) })
	}
	kl.markPodReady(t, ns, pod, ip)
}

// ForceDeletePod deletes a pod at once, as `kubectl delete --force
// --grace-period=0` does.
func (kl *Kubelet) ForceDeletePod(ns, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q := url.Values{"gracePeriodSeconds": {"0"}}
	_ = kl.kube.Do(ctx, "DELETE", "/api/v1/namespaces/"+ns+"/pods/"+name+"?"+q.Encode(), "", Obj{
		"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
	}, nil)
}

// markPodReady does what a kubelet would: Running, Ready, with a podIP.
func (kl *Kubelet) markPodReady(t *testing.T, ns string, pod Obj, ip string) {
	t.Helper()
	name := Dig(pod, "metadata", "name").(string)
	if _, err := kl.kube.MergePatch(t.Context(), "/api/v1/namespaces/"+ns+"/pods/"+name+"/status", ReadyStatus(pod, ip, "")); err != nil {
		t.Fatalf("marking pod %s ready: %v", name, err)
	}
}

// ReadyStatus is the status patch a kubelet would report for pod running and
// ready at podIP, on a node at hostIP (left out when empty).
func ReadyStatus(pod Obj, podIP, hostIP string) Obj {
	now := time.Now().UTC().Format(time.RFC3339)
	statuses := containerStatuses(pod, true, Obj{"running": Obj{"startedAt": now}})
	st := Obj{
		"phase":             "Running",
		"podIP":             podIP,
		"podIPs":            []any{Obj{"ip": podIP}},
		"startTime":         now,
		"containerStatuses": statuses,
		"conditions": []any{
			Obj{"type": "Initialized", "status": "True", "lastTransitionTime": now},
			Obj{"type": "Ready", "status": "True", "lastTransitionTime": now},
			Obj{"type": "ContainersReady", "status": "True", "lastTransitionTime": now},
			Obj{"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
		},
	}
	// Init containers ran to completion before the containers started.
	inits, _ := Dig(pod, "spec", "initContainers").([]any)
	var initStatuses []any
	for _, c := range inits {
		initStatuses = append(initStatuses, Obj{
			"name": Dig(c, "name"), "image": Dig(c, "image"), "imageID": "",
			"ready": true, "started": false, "restartCount": 0,
			"state": Obj{"terminated": Obj{"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}},
		})
	}
	if len(initStatuses) > 0 {
		st["initContainerStatuses"] = initStatuses
	}
	if hostIP != "" {
		st["hostIP"] = hostIP
	}
	return Obj{"status": st}
}

// ReadyAddresses are the addresses of the ready endpoints in the
// EndpointSlices of a Service, as kube-controller-manager publishes them.
func (k *Kube) ReadyAddresses(ctx context.Context, ns, service string) ([]string, error) {
	slices, err := k.List(ctx, "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices", "kubernetes.io/service-name="+service)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range slices {
		eps, _ := s["endpoints"].([]any)
		for _, e := range eps {
			if Dig(e, "conditions", "ready") != true {
				continue
			}
			addrs, _ := Dig(e, "addresses").([]any)
			for _, a := range addrs {
				out = append(out, fmt.Sprint(a))
			}
		}
	}
	return out, nil
}

// BindPod does what the scheduler would: binds the pod to testNode.
func (kl *Kubelet) BindPod(ctx context.Context, ns, name string) error {
	if err := kl.ensureNode(ctx); err != nil {
		return err
	}
	_, err := kl.kube.Create(ctx, "/api/v1/namespaces/"+ns+"/pods/"+name+"/binding", Obj{
		"apiVersion": "v1", "kind": "Binding",
		"metadata": Obj{"name": name},
		"target":   Obj{"apiVersion": "v1", "kind": "Node", "name": TestNode},
	})
	if err != nil {
		return fmt.Errorf("binding pod %s/%s to %s: %w", ns, name, TestNode, err)
	}
	return nil
}

// projectServiceAccount writes what the kubelet projects into a pod's
// ServiceAccount volume: a token from the TokenRequest API bound to the pod,
// the cluster's CA (the kube-root-ca.crt ConfigMap's ca.crt) and the pod's
// namespace. The kubelet asks for about an hour and refreshes it; the
// stand-in asks for a day and never refreshes (the suite is shorter).
func (kl *Kubelet) projectServiceAccount(ctx context.Context, pod Obj, dir string) (string, error) {
	ns := fmt.Sprint(Dig(pod, "metadata", "namespace"))
	sa, _ := Dig(pod, "spec", "serviceAccountName").(string)
	if sa == "" {
		sa = "default"
	}
	tr, err := kl.kube.Create(ctx, "/api/v1/namespaces/"+ns+"/serviceaccounts/"+sa+"/token", Obj{
		"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
		"spec": Obj{
			"expirationSeconds": 86400,
			"boundObjectRef": Obj{"apiVersion": "v1", "kind": "Pod",
				"name": Dig(pod, "metadata", "name"), "uid": Dig(pod, "metadata", "uid")},
		},
	})
	if err != nil {
		return "", fmt.Errorf("TokenRequest for %s/%s: %w", ns, sa, err)
	}
	token, _ := Dig(tr, "status", "token").(string)
	if token == "" {
		return "", fmt.Errorf("TokenRequest for %s/%s: no token", ns, sa)
	}
	var ca string
	if err := WaitUntil(30*time.Second, 200*time.Millisecond, "ConfigMap "+ns+"/kube-root-ca.crt", func() (bool, error) {
		cm, err := kl.kube.Get(ctx, "/api/v1/namespaces/"+ns+"/configmaps/kube-root-ca.crt")
		if err != nil {
			return false, err
		}
		ca, _ = Dig(cm, "data", "ca.crt").(string)
		return ca != "", nil
	}); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, data := range map[string]string{"token": token, "ca.crt": ca, "namespace": ns} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// runningStatus is the status a kubelet reports for a pod whose containers
// run and pass their readiness probe. The pod's network namespace has no
// address outside it, so no podIP is reported (nothing dials the pod).
func runningStatus(pod Obj) Obj {
	st := ReadyStatus(pod, "", "")
	s := st["status"].(Obj)
	delete(s, "podIP")
	delete(s, "podIPs")
	return st
}

// terminatedStatus is the status a kubelet reports once a deleted pod's
// containers have stopped: not ready, each container terminated.
func terminatedStatus(pod Obj) Obj {
	now := time.Now().UTC().Format(time.RFC3339)
	statuses := containerStatuses(pod, false, Obj{"terminated": Obj{"exitCode": 0, "reason": "Completed", "finishedAt": now}})
	return Obj{"status": Obj{
		"containerStatuses": statuses,
		"conditions": []any{
			Obj{"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now},
			Obj{"type": "ContainersReady", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now},
			Obj{"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
		},
	}}
}

// containerStatuses is one status a container of the pod spec, each ready
// and started as ready says, in state.
func containerStatuses(pod Obj, ready bool, state Obj) []any {
	var statuses []any
	containers, _ := Dig(pod, "spec", "containers").([]any)
	for _, c := range containers {
		statuses = append(statuses, Obj{
			"name": Dig(c, "name"), "image": Dig(c, "image"), "imageID": "",
			"ready": ready, "started": ready, "restartCount": 0,
			"state": state,
		})
	}
	return statuses
}
