//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestDrainThroughTraefik proves graceful termination (#20, item 1) on the
// Traefik of the pinned chart: requests at a steady rate through Traefik to
// an app of two pods while one pod is deleted. With the default drain (the
// preStop sleep stackdome puts in every app with ports) not one request
// fails; with drainSeconds: 0 the same deletion fails requests — the proof
// bites.
//
// The app's pods are run by the kubelet stand-in (a listener on the
// containerPort), which terminates a pod as a kubelet does: on deletion (the
// pod gets its deletionTimestamp, and kube-controller-manager marks its
// endpoint terminating at once) it runs the container's preStop sleep as the
// pod spec says — the app keeps serving — then "sends SIGTERM": the app
// closes its listener and every connection at once (the worst case: an app
// without graceful shutdown of its own), and the pod turns not ready.
// Traefik must have moved off the endpoint before the listener closes.
func TestDrainThroughTraefik(t *testing.T) {
	requireStackResourceCRD(t)
	requireHost(t)
	tr := installTraefik(t)
	rel := newPagesRelease(t, "stackdome")
	rel.install(t, "", "config.entryPoints={web}")
	second := suite.host.GuestIP.Next()
	if suite.host.ServiceRange().Contains(second) {
		t.Fatalf("%s is in the Service range", second)
	}
	if err := suite.host.AddAddress(second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { suite.host.DelAddress(second) })

	tests := []struct {
		name  string
		drain any // spec.drainSeconds; nil: the default
		fails bool
	}{
		{name: "default drain", fails: false},
		{name: "drainSeconds 0", drain: 0, fails: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			total, failed, sleep := deletePodUnderLoad(t, tr, []netip.Addr{suite.host.GuestIP, second}, tc.drain)
			t.Logf("%s: preStop sleep %ds; %d requests through Traefik while a pod was deleted, %d failed", tc.name, sleep, total, len(failed))
			if total < 300 {
				t.Errorf("the probe made only %d requests", total)
			}
			switch {
			case !tc.fails && len(failed) > 0:
				t.Errorf("%d of %d requests failed, first: %v", len(failed), total, failed[:min(len(failed), 5)])
			case tc.fails && len(failed) == 0:
				t.Errorf("no request failed without a drain: the test does not prove the drain")
			}
		})
	}
}

// deletePodUnderLoad runs an app of two pods at ips behind Traefik, deletes
// the first pod under a steady probe and stands in for its kubelet; it
// returns the requests made, the failed ones and the preStop sleep the pod
// carried.
func deletePodUnderLoad(t *testing.T, tr *framework.Traefik, ips []netip.Addr, drain any) (int64, []string, int) {
	ctx := t.Context()
	k := suite.cluster.Kube
	ns := newNamespace(t)
	w := watchNamespace(t, ns)
	const appName, appHost = "checkout", "checkout.e2e.test"

	// The app's image is a listener on its containerPort at each pod's
	// address, run by the kubelet stand-in.
	const image = "example.invalid/checkout:1"
	suite.kubelet.AddImage(image, framework.Image{Serve: appHandler})
	free, err := framework.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	port := free[0]
	spec := obj{"type": "Service", "image": image, "replicas": 2, "host": appHost,
		"ports": []any{obj{"name": "http", "port": port, "public": true}}}
	if drain != nil {
		spec["drainSeconds"] = drain
	}
	mark, since := w.mark(), time.Now()
	if _, err := k.Create(ctx, "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources", obj{
		"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": obj{"name": appName}, "spec": spec,
	}); err != nil {
		t.Fatal(err)
	}
	res, _ := settleRoutable(t, w, mark, since, appName, "first sync")
	if _, ok := childNames(res.Response)["PodDisruptionBudget/"+appName]; !ok {
		t.Errorf("children %v: no PodDisruptionBudget for 2 replicas", keys(childNames(res.Response)))
	}
	pods := waitPods(t, ns, "app.kubernetes.io/instance="+appName, 2)
	var running []*framework.Pod
	for i, p := range pods {
		rp, err := suite.kubelet.StartOnHost(ctx, p, ips[i].String(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			rp.Stop()
			suite.kubelet.ForceDeletePod(ns, rp.Name)
		})
		running = append(running, rp)
	}
	for _, ip := range ips {
		waitReadyAddress(t, ns, appName, ip.String())
	}
	waitServers(t, tr, port, 2)

	victim := framework.Dig(pods[0], "metadata", "name").(string)
	sleep := 0 // the app container's preStop sleep, as the pod says
	if cs, _ := framework.Dig(pods[0], "spec", "containers").([]any); len(cs) > 0 {
		if s := framework.Dig(cs[0], "lifecycle", "preStop", "sleep", "seconds"); s != nil {
			sleep, _ = strconv.Atoi(fmt.Sprint(s))
		}
	}
	probe := startRouteProbe(tr, appHost)
	waitRequests(t, probe, 100) // steady before the deletion

	// kubectl delete pod: the default grace period, the pod's own.
	if err := k.Do(ctx, "DELETE", "/api/v1/namespaces/"+ns+"/pods/"+victim, "", nil, nil); err != nil {
		t.Fatalf("deleting pod %s: %v", victim, err)
	}
	// The kubelet's part: the pod's preStop sleep, the app serving all
	// along; then SIGTERM (the listener and every connection gone at once),
	// the pod reported not ready and removed, so the endpoint stops
	// serving. Traefik has had the drain to move off the terminating
	// endpoint (it keeps a terminating endpoint that still serves, and
	// sends it no new request); requests keep coming, and any still sent
	// to the closed pod fails now.
	running[0].Delete(ctx)
	waitRequests(t, probe, probe.total.Load()+200)
	waitServers(t, tr, port, 1)
	total, failed := probe.stop()
	return total, failed, sleep
}

// waitRequests waits until the probe has made n requests in all.
func waitRequests(t *testing.T, p *routeProbe, n int64) {
	t.Helper()
	if err := framework.WaitUntil(60*time.Second, 20*time.Millisecond, fmt.Sprintf("%d probe requests", n), func() (bool, error) {
		return p.total.Load() >= n, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// waitServers waits until Traefik load-balances the service of the app's
// port over exactly n servers.
func waitServers(t *testing.T, tr *framework.Traefik, port, n int) {
	t.Helper()
	suffix := ":" + strconv.Itoa(port)
	got := 0
	if err := framework.WaitUntil(60*time.Second, 50*time.Millisecond, fmt.Sprintf("%d Traefik server(s) on port %d", n, port), func() (bool, error) {
		resp, err := http.Get(tr.API + "/api/http/services?per_page=1000")
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return false, err
		}
		var svcs []struct {
			LoadBalancer struct {
				Servers []struct {
					URL string `json:"url"`
				} `json:"servers"`
			} `json:"loadBalancer"`
		}
		if err := json.Unmarshal(data, &svcs); err != nil {
			return false, fmt.Errorf("decoding /api/http/services: %w", err)
		}
		got = 0
		for _, s := range svcs {
			for _, srv := range s.LoadBalancer.Servers {
				if strings.HasSuffix(srv.URL, suffix) {
					got++
				}
			}
		}
		return got == n, nil
	}); err != nil {
		t.Fatalf("%v (last seen: %d)", err, got)
	}
}
