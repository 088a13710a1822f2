//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The stand-in node: the one stand-in the suite keeps, for scale only (the
// fleet benchmark, TestFleet). A 2-core node cannot run 200 or 1,000
// containers, so the fleet's apps beyond the first few run nowhere: their
// pods are scheduled by kube-scheduler onto a Node object the harness
// creates and keeps alive, and the harness writes their status Running and
// Ready at the address of one of a few real pods of the test image on the
// real node, which listen on every port the apps declare. Several pods then
// share an address (the API allows it); stackdome's verifier dials it and
// the real pod answers, kube-proxy sends the apps' Services to it.
//
// Nothing else lands on it: it carries a NoSchedule taint only the fleet's
// apps tolerate (StandinPlacement), and they select it by its label.

// standinKey is the stand-in node's label and taint key; standinValue
// their value.
const (
	standinKey   = "stackdome.io/fleet-node"
	standinValue = "standin"
)

// standinNodeIP is the stand-in node's InternalIP: an address of
// TEST-NET-3 (RFC 5737) that nothing dials. It is the hostIP of its pods,
// so kube-router, which applies NetworkPolicies to the pods whose hostIP
// is its node's, leaves them alone.
const standinNodeIP = "203.0.113.10"

// standinNodeName is the stand-in node's name.
const standinNodeName = "fleet-standin"

// standinHeartbeat is how often the node's Lease is renewed and its Ready
// condition written: well inside the node lifecycle controller's grace
// period (kube-controller-manager --node-monitor-grace-period, 50 s), after
// which it would taint the node unreachable and evict its pods.
const standinHeartbeat = 10 * time.Second

// StandinNode is the Node object the harness keeps alive, and what it has
// done with the pods bound to it.
type StandinNode struct {
	name  string
	ips   []string // the real pods' addresses, given out in turn
	ready atomic.Int64
	kube  *Kube
}

// Ready is how many pods the node has reported Running and Ready so far.
func (n *StandinNode) Ready() int64 { return n.ready.Load() }

// StandinPlacement is what an app's spec carries to run on the stand-in
// node: its label as nodeSelector, its taint tolerated.
func StandinPlacement() Obj {
	return Obj{
		"nodeSelector": Obj{standinKey: standinValue},
		"tolerations":  []any{Obj{"key": standinKey, "operator": "Equal", "value": standinValue, "effect": "NoSchedule"}},
	}
}

// StartStandinNode creates the stand-in node (fleet-standin), its Lease in
// kube-node-lease, and keeps both fresh until the test ends; every pod
// kube-scheduler binds to it is reported Running and Ready at one of ips,
// in turn. When the test ends it force-deletes the pods bound to it (no
// kubelet finishes their graceful deletion), then the Lease and the Node.
func (f *NodeFixture) StartStandinNode(ips []string) *StandinNode {
	t := f.t
	t.Helper()
	if len(ips) == 0 {
		t.Fatal("the stand-in node needs the address of at least one real pod")
	}
	n := &StandinNode{name: standinNodeName, ips: ips, kube: f.Kube}
	k := f.Kube
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := k.Create(t.Context(), "/api/v1/nodes", n.object()); err != nil {
		cancel()
		t.Fatalf("creating the stand-in node: %v", err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		n.remove(t)
	})
	node, err := k.Get(t.Context(), "/api/v1/nodes/"+n.name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Create(t.Context(), "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", Obj{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": Obj{"name": n.name, "ownerReferences": []any{Obj{
			"apiVersion": "v1", "kind": "Node", "name": n.name, "uid": Dig(node, "metadata", "uid")}}},
		"spec": Obj{"holderIdentity": n.name, "leaseDurationSeconds": 40, "renewTime": microTime(time.Now())},
	}); err != nil {
		t.Fatalf("creating the stand-in node's Lease: %v", err)
	}
	if err := n.heartbeat(t.Context()); err != nil {
		t.Fatal(err)
	}
	wg.Go(func() {
		tick := time.NewTicker(standinHeartbeat)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := n.heartbeat(ctx); err != nil && ctx.Err() == nil {
					t.Errorf("stand-in node: %v", err)
				}
			}
		}
	})
	wg.Go(func() { n.runPods(ctx, t) })
	return n
}

// object is the Node as a kubelet registers one: schedulable, with room
// for every fleet, its status Ready.
func (n *StandinNode) object() Obj {
	resources := Obj{"cpu": "1000", "memory": "4Ti", "pods": "5000", "ephemeral-storage": "10Ti"}
	return Obj{
		"apiVersion": "v1", "kind": "Node",
		"metadata": Obj{"name": n.name, "labels": Obj{
			"kubernetes.io/hostname": n.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			standinKey: standinValue,
		}},
		"spec": Obj{"taints": []any{Obj{"key": standinKey, "value": standinValue, "effect": "NoSchedule"}}},
		"status": Obj{
			"capacity": resources, "allocatable": resources,
			"conditions": n.conditions(time.Now()),
			"addresses":  []any{Obj{"type": "InternalIP", "address": standinNodeIP}, Obj{"type": "Hostname", "address": n.name}},
			"nodeInfo": Obj{"kubeletVersion": ClusterVersion, "operatingSystem": "linux", "architecture": "amd64",
				"containerRuntimeVersion": "standin://0", "kernelVersion": "", "osImage": "the fleet's stand-in node",
				"machineID": "", "systemUUID": "", "bootID": "", "kubeProxyVersion": ""},
		},
	}
}

// conditions are a healthy kubelet's, heartbeated at now.
func (n *StandinNode) conditions(now time.Time) []any {
	at := now.UTC().Format(time.RFC3339)
	c := func(typ, status, reason string) Obj {
		return Obj{"type": typ, "status": status, "reason": reason, "message": "the fleet's stand-in node",
			"lastHeartbeatTime": at, "lastTransitionTime": at}
	}
	return []any{
		c("MemoryPressure", "False", "KubeletHasSufficientMemory"),
		c("DiskPressure", "False", "KubeletHasNoDiskPressure"),
		c("PIDPressure", "False", "KubeletHasSufficientPID"),
		c("Ready", "True", "KubeletReady"),
	}
}

// heartbeat renews the Lease and writes the conditions, as a kubelet does.
func (n *StandinNode) heartbeat(ctx context.Context) error {
	now := time.Now()
	if _, err := n.kube.MergePatch(ctx, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/"+n.name,
		Obj{"spec": Obj{"renewTime": microTime(now)}}); err != nil {
		return fmt.Errorf("renewing the Lease: %w", err)
	}
	if _, err := n.kube.MergePatch(ctx, "/api/v1/nodes/"+n.name+"/status",
		Obj{"status": Obj{"conditions": n.conditions(now)}}); err != nil {
		return fmt.Errorf("writing the Ready condition: %w", err)
	}
	return nil
}

// microTime is a Lease's time format (metav1.MicroTime).
func microTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z07:00") }

// runPods reports every Pending pod bound to the node Running and Ready,
// once, listing them (a field selector on node and phase) twice a second,
// up to eight status writes at once. A pod already reported that a list
// from the API server's cache still shows Pending keeps its address.
func (n *StandinNode) runPods(ctx context.Context, t *testing.T) {
	sel := url.QueryEscape("spec.nodeName=" + n.name + ",status.phase=Pending")
	next := 0
	var done sync.Map // uid → true
	for {
		pods, err := n.kube.List(ctx, "/api/v1/pods?fieldSelector="+sel, "")
		if err != nil && ctx.Err() == nil {
			t.Logf("stand-in node: listing its pods: %v", err)
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for _, p := range pods {
			uid := Dig(p, "metadata", "uid")
			if _, reported := done.Load(uid); reported || Dig(p, "metadata", "deletionTimestamp") != nil {
				continue
			}
			ip := n.ips[next%len(n.ips)]
			next++
			name, _ := Dig(p, "metadata", "name").(string)
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				path := fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/status", Dig(p, "metadata", "namespace"), name)
				if _, err := n.kube.MergePatch(ctx, path, readyPodStatus(p, ip)); err != nil {
					if ctx.Err() == nil && !IsCode(err, 404) {
						t.Errorf("stand-in node: pod %s Ready: %v", name, err)
					}
					return
				}
				done.Store(uid, true)
				n.ready.Add(1)
			})
		}
		wg.Wait()
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// readyPodStatus is the status a kubelet writes for pod once its
// containers run and are ready, at podIP on the stand-in node.
func readyPodStatus(pod Obj, podIP string) Obj {
	now := time.Now().UTC().Format(time.RFC3339)
	var statuses []any
	containers, _ := Dig(pod, "spec", "containers").([]any)
	for _, c := range containers {
		statuses = append(statuses, Obj{
			"name": Dig(c, "name"), "image": Dig(c, "image"), "imageID": "",
			"ready": true, "started": true, "restartCount": 0,
			"state": Obj{"running": Obj{"startedAt": now}},
		})
	}
	cond := func(typ string) Obj { return Obj{"type": typ, "status": "True", "lastTransitionTime": now} }
	return Obj{"status": Obj{
		"phase": "Running", "podIP": podIP, "podIPs": []any{Obj{"ip": podIP}},
		"hostIP": standinNodeIP, "hostIPs": []any{Obj{"ip": standinNodeIP}},
		"startTime": now, "containerStatuses": statuses,
		"conditions": []any{cond("PodReadyToStartContainers"), cond("Initialized"), cond("Ready"), cond("ContainersReady"), cond("PodScheduled")},
	}}
}

// remove force-deletes the pods bound to the node, then deletes its Lease
// and the Node.
func (n *StandinNode) remove(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k := n.kube
	pods, err := k.List(ctx, "/api/v1/pods?fieldSelector="+url.QueryEscape("spec.nodeName="+n.name), "")
	if err != nil {
		t.Errorf("stand-in node: listing its pods: %v", err)
	}
	for _, p := range pods {
		name, _ := Dig(p, "metadata", "name").(string)
		path := fmt.Sprintf("/api/v1/namespaces/%s/pods/%s", Dig(p, "metadata", "namespace"), name)
		if err := k.Do(ctx, "DELETE", path, "application/json", Obj{"gracePeriodSeconds": 0}, nil); err != nil && !IsCode(err, 404) {
			t.Errorf("stand-in node: deleting pod %s: %v", name, err)
		}
	}
	for _, path := range []string{"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/" + n.name, "/api/v1/nodes/" + n.name} {
		if err := k.Do(ctx, "DELETE", path, "", nil, nil); err != nil && !IsCode(err, 404) {
			t.Errorf("stand-in node: deleting %s: %v", path, err)
		}
	}
}
