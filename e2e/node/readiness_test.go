//go:build e2e

package node

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// opensAfter is how long the slow app's primary port stays closed after
// its container starts.
const opensAfter = 20 * time.Second

// TestReadinessProbeKeepsSlowAppOut proves the synthesized TCP readiness
// probe on a real kubelet: an app whose only (so primary) port opens 20 s
// after its container starts is kept out of its Service's EndpointSlice
// until it listens, and its status agrees at every step. Every write of the
// StackResource, its EndpointSlices and its pods is read from watches and
// replayed in the order etcd stored them (resourceVersion):
//
//   - no slice names the pod's endpoint ready, and no status says
//     Available=True, before the port opens (received earlier than the
//     container's startedAt + 20 s: the write was earlier still);
//   - at no write does the status say Available=True while the slices hold
//     no ready endpoint;
//   - before it listens the pod is in the slice not ready, and the status
//     standing when the slice first names it ready says Available=False;
//     at the end, the slice's endpoint is ready and the
//     status Available=True Serving with the port Open.
//
// It bites: with the probe synthesis removed (hooks/internal/children
// pod.go), the kubelet calls the pod Ready at once and the slice's ready
// endpoint arrives seconds after the start, long before the port opens.
func TestReadinessProbeKeepsSlowAppOut(t *testing.T) {
	f := framework.NewNodeFixture(t)
	f.InstallChart()
	ns := f.Namespace(nil)
	const name = "slow"
	srs := f.WatchPath("sr", framework.SRPath(ns, ""))
	slices := f.WatchPath("slice", "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D"+name)
	pods := f.WatchPath("pod", "/api/v1/namespaces/"+ns+"/pods")
	t.Cleanup(func() { f.DescribePods(ns) })

	f.CreateApp(ns, name, framework.PortApp(framework.PortArgs("8080=after:"+opensAfter.String()), obj{"name": "http", "port": 8080}))
	sr := f.WaitCondition(3*time.Minute, ns, name, "Available", "True", "Serving")
	if ps := framework.PortStates(sr); ps["http"] != "Open" {
		t.Errorf("status.ports: %v, want http Open", ps)
	}
	pod := f.AppPods(ns, name, 1, 30*time.Second)[0]
	started := containerStarted(t, pod, "app")
	opened := started.Add(opensAfter)
	t.Logf("container started %s; port opens at %s at the earliest", started.Format(time.RFC3339), opened.Format(time.RFC3339))

	var (
		sliceReady     = map[string]bool{} // slice name → has a ready endpoint
		seenNotReady   bool                // the pod's endpoint in a slice, not ready
		availNow       string              // Available's status in the latest write of the StackResource
		availAtReady   = "none"            // availNow when a slice first named the endpoint ready
		firstReadyAt   time.Time
		lastAvailable  string
		reasons        []string
		anyReady       = func() bool { return mapAny(sliceReady) }
		podName, _     = framework.Dig(pod, "metadata", "name").(string)
		firstAvailable time.Time
	)
	for _, e := range framework.Merged(srs, slices, pods) {
		switch e.Kind {
		case "slice":
			sn, _ := framework.Dig(e.Obj, "metadata", "name").(string)
			ready, listed := endpointReady(e.Obj, podName)
			if e.Type == "DELETED" {
				ready = false
			}
			sliceReady[sn] = ready
			if listed && !ready {
				seenNotReady = true
			}
			if ready && firstReadyAt.IsZero() {
				firstReadyAt, availAtReady = e.At, availNow
				if e.At.Before(opened) {
					t.Errorf("slice %s named the pod's endpoint ready at %s, before its port opened (%s): the kubelet did not hold it out", sn, e.At.Format(time.RFC3339Nano), opened.Format(time.RFC3339))
				}
			}
		case "sr":
			c := framework.SRCondition(e.Obj, "Available")
			if c == nil {
				continue
			}
			availNow = fmt.Sprint(c["status"])
			label := fmt.Sprint(c["status"], " ", c["reason"])
			if label != lastAvailable {
				reasons = append(reasons, label)
				lastAvailable = label
			}
			switch c["status"] {
			case "True":
				if firstAvailable.IsZero() {
					firstAvailable = e.At
				}
				if !anyReady() {
					t.Errorf("rv %d: status Available=True %v while no EndpointSlice has a ready endpoint", e.RV, c["reason"])
				}
				if e.At.Before(opened) {
					t.Errorf("rv %d: status Available=True %v at %s, before the port opened (%s)", e.RV, c["reason"], e.At.Format(time.RFC3339Nano), opened.Format(time.RFC3339))
				}
			}
		}
	}
	t.Logf("Available over the run: %s", strings.Join(reasons, " → "))
	t.Logf("slice ready %s after the earliest opening; status Available %s after it",
		firstReadyAt.Sub(opened).Round(time.Millisecond), firstAvailable.Sub(opened).Round(time.Millisecond))
	if !seenNotReady {
		t.Errorf("no EndpointSlice ever listed the pod's endpoint not ready: the wait proves nothing")
	}
	if availAtReady != "False" {
		t.Errorf("while the pod was held out the status said Available %q, want False", availAtReady)
	}
	if !anyReady() {
		t.Errorf("at the end no EndpointSlice has a ready endpoint")
	}
}

// TestGateNamesSilentPort is the gate's own case on a real kubelet: the
// primary port listens, a second declared port never does. The kubelet's
// probe (on the primary port) calls the pod Ready and the EndpointSlice
// lists it ready; stackdome says Available=False PortNotListening naming
// the silent port, with the port table saying which is which, and never
// said Serving. config.portCheckGrace=30s, not the chart's 3m: the proof is
// the verdict past the grace, not the grace's length.
//
// It bites: with the port gate dialing the primary port only (or the
// secondary port opened, PortArgs "9090"), the status turns Serving.
func TestGateNamesSilentPort(t *testing.T) {
	f := framework.NewNodeFixture(t)
	f.InstallChart("config.portCheckGrace=30s")
	ns := f.Namespace(nil)
	const name = "half"
	srs := f.WatchPath("sr", framework.SRPath(ns, ""))
	t.Cleanup(func() { f.DescribePods(ns) })

	f.CreateApp(ns, name, framework.PortApp(framework.PortArgs("8080", "9090=never"),
		obj{"name": "http", "port": 8080}, obj{"name": "admin", "port": 9090}))
	pod := f.AppPods(ns, name, 1, 2*time.Minute)[0]
	podName, _ := framework.Dig(pod, "metadata", "name").(string)
	f.WaitFor(time.Minute, "the pod's endpoint ready in its EndpointSlice", func() (bool, error) {
		l, err := f.Kube.List(t.Context(), "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices", "kubernetes.io/service-name="+name)
		if err != nil {
			return false, err
		}
		for _, s := range l {
			if ready, _ := endpointReady(s, podName); ready {
				return true, nil
			}
		}
		return false, nil
	})

	// The verdict past the grace, not the provisional PortNotListening a
	// dial may have given before the kubelet called the pod Ready: the
	// condemned row is the only PortNotListening that is Stalled.
	var sr obj
	f.WaitFor(4*time.Minute, "Available=False PortNotListening, Stalled", func() (bool, error) {
		var err error
		if sr, err = f.Kube.Get(t.Context(), framework.SRPath(ns, name)); err != nil {
			return false, err
		}
		c := framework.SRCondition(sr, "Available")
		if c != nil && c["reason"] == "Serving" {
			t.Fatalf("status says Serving with port 9090 silent: %v", c["message"])
		}
		s := framework.SRCondition(sr, "Stalled")
		return c != nil && c["status"] == "False" && c["reason"] == "PortNotListening" && s != nil && s["status"] == "True",
			fmt.Errorf("Available is %v, Stalled %v", c, s)
	})
	msg := fmt.Sprint(framework.SRCondition(sr, "Available")["message"])
	if !strings.Contains(msg, "port 9090 (admin)") || strings.Contains(msg, "8080") {
		t.Errorf("Available message %q: want port 9090 (admin) named, and not 8080", msg)
	}
	if got := framework.PortStates(sr); got["http"] != "Open" || got["admin"] != "Closed" {
		t.Errorf("status.ports: %v, want http Open, admin Closed", got)
	}
	var named bool
	for _, d := range framework.ToSlice(framework.Dig(sr, "status", "lastFailureDetails")) {
		if fmt.Sprint(framework.Dig(d, "port")) == "9090" && framework.Dig(d, "reason") == "PortNotListening" {
			named = true
		}
	}
	if !named {
		t.Errorf("lastFailureDetails %v: no PortNotListening for port 9090", framework.Dig(sr, "status", "lastFailureDetails"))
	}
	// The kubelet still calls the pod Ready: the gate, not the probe, saw the silent port.
	p, err := f.Kube.Get(t.Context(), "/api/v1/namespaces/"+ns+"/pods/"+podName)
	if err != nil {
		t.Fatal(err)
	}
	if !framework.PodReady(p) {
		t.Errorf("pod %s not Ready at the verdict: the case is not the gate's", podName)
	}
	for _, e := range srs.Events() {
		if c := framework.SRCondition(e.Obj, "Available"); c != nil && c["reason"] == "Serving" {
			t.Errorf("rv %d: status said Serving with port 9090 silent", e.RV)
		}
	}
}

// endpointReady says whether the EndpointSlice lists pod's endpoint, and
// whether it is ready (conditions.ready, as kube-proxy and Traefik read it).
func endpointReady(slice obj, pod string) (ready, listed bool) {
	for _, ep := range framework.ToSlice(slice["endpoints"]) {
		if framework.Dig(ep, "targetRef", "name") != pod {
			continue
		}
		listed = true
		if framework.Dig(ep, "conditions", "ready") == true {
			ready = true
		}
	}
	return ready, listed
}

// containerStarted is when the kubelet started the pod's container.
func containerStarted(t *testing.T, pod obj, container string) time.Time {
	t.Helper()
	for _, cs := range framework.ToSlice(framework.Dig(pod, "status", "containerStatuses")) {
		if framework.Dig(cs, "name") != container {
			continue
		}
		s, _ := framework.Dig(cs, "state", "running", "startedAt").(string)
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatalf("container %s: startedAt %q: %v", container, s, err)
		}
		return at
	}
	t.Fatalf("pod has no running container %s", container)
	return time.Time{}
}

func mapAny(m map[string]bool) bool {
	for _, v := range m {
		if v {
			return true
		}
	}
	return false
}
