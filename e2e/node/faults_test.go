//go:build e2e

package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestFaultsSurvived plays faults on a live fleet of ten apps on the real
// node — the short form CI runs: stackdome's hooks pods killed (`kill -9`
// of one container, then of both), Metacontroller's killed, and the hooks
// cut off by their NetworkPolicy for 30 s. After each, the fleet must show:
//
//   - no child deleted (a watch of every kind of child in the apps'
//     namespace: DELETED events);
//   - no false-healthy moment: an app with a port that never listens (two
//     of the ten, by design: portapp's `9090=never`) never reads
//     Available=True;
//   - no flap: no app's Available condition leaves the status and reason it
//     settled at, since no port or pod of theirs changed;
//   - every route kept: a client asking through Traefik for a live public
//     app the whole time gets the app's answer, never Traefik's own error;
//   - reconvergence inside faultBound: every app at its true status and a
//     sync answered by the hooks after the fault ended.
//
// Mixed: StatefulService and Service, public and private. The chart at its
// defaults (two replicas, a 60 s resync) but for its grace, 30 s, so that
// the dead ports' verdict is final before the faults, not 3 minutes in.
// The table of the run is logged, and a fault that breaks an invariant
// fails the test.
//
// It bites: a hooks answer that drops a child, or that says Serving for
// an app whose verdict a restart forgot, shows as a deletion or a
// false-healthy moment of the fault that caused it.
func TestFaultsSurvived(t *testing.T) {
	phase := "installing the chart"
	var rows []faultRow
	restate(t, func() string {
		var details []string
		for _, r := range rows {
			details = append(details, r.details...)
		}
		return fmt.Sprintf("while %s; the faults played:\n%s%s", phase, formatFaultTable(rows), strings.Join(details, "\n"))
	})
	rel := installChart(t, "config.portCheckGrace=30s")
	ns := newNamespace(t, nil)
	t.Cleanup(func() { describePods(t, ns) })
	apps := faultFleet(10)
	for _, a := range apps {
		createApp(t, ns, a.name, a.spec())
	}
	phase = "settling the fleet"
	for _, a := range apps {
		settle(t, ns, a)
	}
	f := watchFleet(t, ns, apps)
	probe := startRouteProbe(t, apps)

	faults := []fault{
		{name: "kill -9 of one hooks pod", play: func(t *testing.T) { killPods(t, rel.pods(t, "controller")[:1]) }},
		{name: "kill -9 of both hooks pods", play: func(t *testing.T) { killPods(t, rel.pods(t, "controller")) }},
		{name: "kill -9 of Metacontroller", play: func(t *testing.T) { killPods(t, []obj{metacontrollerPod(t)}) }},
		{name: "hooks cut off for 30 s", play: func(t *testing.T) { cutHooks(t, rel, 30*time.Second) }},
	}
	for _, flt := range faults {
		phase = "playing " + flt.name
		start := time.Now()
		probe.reset()
		flt.play(t)
		ended := time.Now()
		phase = "reconverging after " + flt.name
		took := reconverge(t, rel, ns, apps, ended)
		rows = append(rows, f.row(flt.name, start, time.Now(), took, probe.failures()))
	}
	phase = "checking the table"
	t.Logf("faults on %d apps (the chart's 60 s resync, a 30 s grace):\n%s", len(apps), formatFaultTable(rows))
	for _, r := range rows {
		if r.deletions+r.falseHealthy+r.flaps+r.routeFailures > 0 || r.reconverge > faultBound {
			t.Errorf("%s broke an invariant: %+v\n%s", r.fault, r, strings.Join(r.details, "\n"))
		}
	}
}

// faultBound is how long after a fault ends every app must be back at its
// true status with a sync answered. A fault's end is the killed containers
// Ready again or the cut restored; after it, Metacontroller calls the hooks
// at the latest on the next resync of each parent (the chart's 60 s), or at
// once for the parents whose sync failed during the fault (its queue
// retries them with a back-off that stays under the length of the outage)
// and, restarted, for every parent as its informers list them. 60 s, with
// half again for a 2-core node shared with the suite.
const faultBound = 90 * time.Second

// fault is one fault: play returns once it has ended (the killed
// containers running again, the cut restored).
type fault struct {
	name string
	play func(t *testing.T)
}

// faultApp is one app of the fleet and its truth.
type faultApp struct {
	name     string
	dead     bool // port 9090 never listens
	public   bool // port 8080 routed by Traefik at host
	stateful bool
}

func (a faultApp) host() string { return a.name + ".faults.test" }

// faultFleet is n apps: every fifth with a dead port, every second public,
// every third a StatefulService.
func faultFleet(n int) []faultApp {
	var apps []faultApp
	for i := range n {
		apps = append(apps, faultApp{name: fmt.Sprint("app-", i), dead: i%5 == 4, public: i%2 == 0, stateful: i%3 == 2})
	}
	return apps
}

func (a faultApp) spec() obj {
	admin := "9090"
	if a.dead {
		admin = "9090=never"
	}
	spec := portapp(portArgs("8080", admin), obj{"name": "http", "port": 8080, "public": a.public}, obj{"name": "admin", "port": 9090})
	if a.public {
		spec["host"] = a.host()
	}
	if a.stateful {
		spec["type"] = "StatefulService"
	}
	return spec
}

// atTruth says whether the app's status is its truth: Serving, or for a
// dead port PortNotListening past the grace (Stalled).
func (a faultApp) atTruth(sr obj) (bool, error) {
	c, s := srCondition(sr, "Available"), srCondition(sr, "Stalled")
	if a.dead {
		return c != nil && c["status"] == "False" && c["reason"] == "PortNotListening" && s != nil && s["status"] == "True",
			fmt.Errorf("%s: Available %v, Stalled %v", a.name, c, s)
	}
	return c != nil && c["status"] == "True" && c["reason"] == "Serving", fmt.Errorf("%s: Available %v", a.name, c)
}

func settle(t *testing.T, ns string, a faultApp) {
	t.Helper()
	waitFor(t, 4*time.Minute, a.name+" at its true status", func() (bool, error) {
		sr, err := kube().Get(t.Context(), srPath(ns, a.name))
		if err != nil {
			return false, err
		}
		return a.atTruth(sr)
	})
}

// reconverge waits until every app is at its truth and the hooks answered
// a sync after ended, and returns how long after ended that was.
func reconverge(t *testing.T, rel *release, ns string, apps []faultApp, ended time.Time) time.Duration {
	t.Helper()
	base := map[string]float64{}
	for _, p := range rel.pods(t, "controller") {
		base[podName(p)+"/"+fmt.Sprint(restarts(p))] = syncsAnswered(t, p)
	}
	waitFor(t, 2*faultBound, "the fleet back at its truth, a sync answered", func() (bool, error) {
		for _, a := range apps {
			sr, err := kube().Get(t.Context(), srPath(ns, a.name))
			if err != nil {
				return false, err
			}
			if ok, err := a.atTruth(sr); !ok {
				return false, err
			}
		}
		for _, p := range rel.pods(t, "controller") {
			if !podReady(p) {
				continue
			}
			if n, ok := base[podName(p)+"/"+fmt.Sprint(restarts(p))]; !ok || syncsAnswered(t, p) > n {
				return true, nil
			}
		}
		return false, fmt.Errorf("no sync answered since the fault ended")
	})
	return time.Since(ended)
}

// killPods kills every container of pods with SIGKILL at once and waits
// until the kubelet has restarted each and the pod is Ready again.
func killPods(t *testing.T, pods []obj) {
	t.Helper()
	for _, p := range pods {
		for _, c := range toSlice(framework.Dig(p, "status", "containerStatuses")) {
			if err := realNode().KillContainer(t.Context(), fmt.Sprint(framework.Dig(c, "containerID"))); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range pods {
		ns, name, before := fmt.Sprint(framework.Dig(p, "metadata", "namespace")), podName(p), restarts(p)
		waitFor(t, 2*time.Minute, name+" restarted and Ready", func() (bool, error) {
			now, err := kube().Get(t.Context(), "/api/v1/namespaces/"+ns+"/pods/"+name)
			if err != nil {
				return false, err
			}
			return restarts(now) > before && podReady(now), fmt.Errorf("restarts %d, Ready %v", restarts(now), podReady(now))
		})
	}
}

// restarts is the sum of the pod's containers' restartCount.
func restarts(p obj) int {
	n := 0
	for _, c := range toSlice(framework.Dig(p, "status", "containerStatuses")) {
		var r int
		fmt.Sscan(fmt.Sprint(framework.Dig(c, "restartCount")), &r)
		n += r
	}
	return n
}

func metacontrollerPod(t *testing.T) obj {
	t.Helper()
	p, err := kube().Get(t.Context(), "/api/v1/namespaces/metacontroller/pods/metacontroller-0")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cutHooks makes the chart's hooks NetworkPolicy admit nothing for d, then
// puts its ingress rules back: Metacontroller's calls fail meanwhile, and
// the check that no sync was answered while it lasted proves the cut.
func cutHooks(t *testing.T, rel *release, d time.Duration) {
	t.Helper()
	path := "/apis/networking.k8s.io/v1/namespaces/" + rel.ns + "/networkpolicies/" + rel.name
	np, err := kube().Get(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	rules := framework.Dig(np, "spec", "ingress")
	if _, err := kube().MergePatch(t.Context(), path, obj{"spec": obj{"ingress": []any{}}}); err != nil {
		t.Fatal(err)
	}
	// kube-router applies a policy within seconds. Metacontroller keeps
	// its connections alive, and the policy engine admits established
	// ones: once the policy is enforced they are forgotten, as a node's
	// restart or a conntrack flush would. Forgotten before, a connection's
	// next packet would be tracked afresh as established while the old
	// rules still stood, and the cut would not hold. From then on (and a
	// second for the answers already on their way), no sync reaches a
	// replica.
	const enforced = 10 * time.Second
	time.Sleep(enforced)
	for _, p := range rel.pods(t, "controller") {
		if err := realNode().ForgetConnections(t.Context(), fmt.Sprint(framework.Dig(p, "status", "podIP"))); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second)
	before := answered(t, rel)
	time.Sleep(d - enforced - time.Second)
	if after := answered(t, rel); after > before {
		t.Errorf("%.0f syncs answered while the hooks were cut off: the cut did not hold", after-before)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kube().MergePatch(ctx, path, obj{"spec": obj{"ingress": rules}}); err != nil {
		t.Fatal(err)
	}
}

// answered is the syncs the release's hooks pods answered, summed.
func answered(t *testing.T, rel *release) float64 {
	t.Helper()
	var n float64
	for _, p := range rel.pods(t, "controller") {
		n += syncsAnswered(t, p)
	}
	return n
}
