//go:build e2e

package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestFaultsSurvived plays faults on a live fleet on the real node and
// holds the fleet to its promises after each. Two forms:
//
//   - short, which CI runs (`make e2e`): ten apps; stackdome's hooks pods
//     killed (`kill -9` of one container, then of both), Metacontroller's
//     killed, and the hooks cut off by their NetworkPolicy for 30 s;
//   - full, `make chaos` (STACKDOME_FAULTS=full): fifty apps, the short
//     form's faults and the error-page pods killed (one, then the other;
//     then both at once), then evicted; kube-apiserver restarted; etcd
//     stopped (SIGSTOP) for 10 s; and a `helm upgrade` of stackdome to a
//     changed pod template in the middle of a rollout of ten apps. During
//     each fault but the upgrade one app's port dies (the test closes its
//     primary port through portapp's control port: its pod goes unready)
//     and the one of the fault before comes back.
//
// After each fault the fleet must show:
//
//   - no child deleted (a watch of every kind of child in the apps'
//     namespace: DELETED events);
//   - no false-healthy moment: an app with a port that never listens (one
//     in five, by design: portapp's `9090=never`) never reads
//     Available=True, and an app whose port the test closed never reads
//     Serving from a dial made after it closed;
//   - no flap: no app's Available condition leaves the status and reason it
//     settled at, unless the fault changed its port or its pods;
//   - no window opened again: no status of an app's workload revision
//     carries a second grace window (portCheck.failingSince) or a verdict
//     older than one written before (portCheck.checkedAt going back), which
//     is what a parent cached before the window opened would answer
//     (docs/design.md, "A parent older than the status");
//   - every route kept: a client asking Traefik for every public app the
//     whole time gets the app's answer, and for its /status/503 (full
//     form) the app's 503 or the branded page, never Traefik's own error;
//     the branded 503 for "/" only of an app the fault moved (a rolling
//     single-replica StatefulSet has no pod for a moment). The one
//     exception is counted, not failed: while an error-page pod killed
//     with SIGKILL is still an endpoint, Traefik's fetch of the page can
//     be refused, and Traefik answers the app's 503 with its code and its
//     own text;
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
// false-healthy moment of the fault that caused it (TestFaultRowCounts
// holds each count to what it is for).
func TestFaultsSurvived(t *testing.T) {
	f := framework.NewNodeFixture(t)
	form, err := faultFormOf(os.Getenv("STACKDOME_FAULTS"))
	if err != nil {
		t.Fatal(err)
	}
	phase := "installing the chart"
	var rows []faultRow
	f.Restate(func() string {
		var details []string
		for _, r := range rows {
			details = append(details, r.details...)
		}
		return fmt.Sprintf("while %s; the faults played:\n%s%s", phase, formatFaultTable(rows), strings.Join(details, "\n"))
	})
	rel := f.InstallChart("config.portCheckGrace=30s")
	ns := f.Namespace(nil)
	t.Cleanup(func() { f.DescribePods(ns) })
	fl := newFleet(ns, form.apps)
	for _, a := range fl.apps {
		f.CreateApp(ns, a.name, a.spec())
	}
	phase = "settling the fleet"
	settling := time.Now()
	for _, a := range fl.apps {
		settle(t, ns, a)
	}
	t.Logf("%d apps at their true status in %s", len(fl.apps), time.Since(settling).Round(time.Second))
	fw := watchFleet(t, ns, fl)
	probe := startRouteProbe(t, fl.apps, form.full)

	for _, flt := range form.faults(rel, fl) {
		phase = "playing " + flt.name
		start := time.Now()
		probe.reset()
		moved := map[string]bool{}
		if form.full && flt.churn {
			fl.churn(t, moved)
		}
		flt.play(t, moved)
		ended := time.Now()
		phase = "reconverging after " + flt.name
		took := reconverge(t, rel, fl, ended)
		rows = append(rows, fw.row(flt.name, start, time.Now(), took, probe.failures(), flt.pagesKilled, moved))
		t.Logf("%s: played in %s, reconverged %s after", flt.name, ended.Sub(start).Round(100*time.Millisecond), took.Round(100*time.Millisecond))
	}
	phase = "checking the table"
	t.Logf("faults on %d apps (the chart's 60 s resync, a 30 s grace):\n%s", len(fl.apps), formatFaultTable(rows))
	for _, r := range rows {
		if r.deletions+r.falseHealthy+r.flaps+r.windowsAgain+r.routeFailures > 0 || r.reconverge > faultBound {
			t.Errorf("%s broke an invariant: %+v\n%s", r.fault, r, strings.Join(r.details, "\n"))
		}
	}
}

// faultForm is how much a run plays: the short form CI runs, or the full
// one (`make chaos`).
type faultForm struct {
	apps int
	full bool
}

// faultFormOf reads STACKDOME_FAULTS: "" or short, or full.
func faultFormOf(v string) (faultForm, error) {
	switch v {
	case "", "short":
		return faultForm{apps: 10}, nil
	case "full":
		return faultForm{apps: 50, full: true}, nil
	}
	return faultForm{}, fmt.Errorf("STACKDOME_FAULTS=%q: want short (the default) or full", v)
}

// faults are the form's faults in the order they are played.
func (form faultForm) faults(rel *framework.Release, fl *fleet) []fault {
	hooks := func(t *testing.T) []obj { return rel.Pods(t, "controller") }
	pages := func(t *testing.T) []obj { return rel.Pods(t, "error-pages") }
	all := []fault{
		{name: "kill -9 of one hooks pod", churn: true, play: func(t *testing.T, _ map[string]bool) { framework.NewNodeFixture(t).KillPods(hooks(t)[:1]) }},
		{name: "kill -9 of both hooks pods", churn: true, play: func(t *testing.T, _ map[string]bool) { framework.NewNodeFixture(t).KillPods(hooks(t)) }},
		{name: "kill -9 of one error-page pod, then the other", full: true, churn: true, pagesKilled: true, play: func(t *testing.T, _ map[string]bool) {
			f := framework.NewNodeFixture(t)
			ps := pages(t)
			f.KillPods(ps[:1])
			f.KillPods(ps[1:])
		}},
		{name: "kill -9 of both error-page pods at once", full: true, churn: true, pagesKilled: true, play: func(t *testing.T, _ map[string]bool) { framework.NewNodeFixture(t).KillPods(pages(t)) }},
		{name: "eviction of both error-page pods", full: true, churn: true, play: func(t *testing.T, _ map[string]bool) { framework.NewNodeFixture(t).EvictPods(rel, "error-pages") }},
		{name: "kill -9 of Metacontroller", churn: true, play: func(t *testing.T, _ map[string]bool) {
			f := framework.NewNodeFixture(t)
			f.KillPods([]obj{f.MetacontrollerPod()})
		}},
		{name: "kube-apiserver restarted", full: true, churn: true, play: func(t *testing.T, _ map[string]bool) { framework.NewNodeFixture(t).RestartAPIServer() }},
		{name: "etcd stopped for 10 s", full: true, churn: true, play: func(t *testing.T, _ map[string]bool) { framework.NewNodeFixture(t).StallEtcd(10 * time.Second) }},
		{name: "hooks cut off for 30 s", churn: true, play: func(t *testing.T, _ map[string]bool) { cutHooks(t, rel, 30*time.Second) }},
		{name: "helm upgrade of stackdome amid a rollout of 10 apps", full: true, play: func(t *testing.T, moved map[string]bool) { upgradeAmidRollout(t, rel, fl, 10, moved) }},
	}
	var out []fault
	for _, flt := range all {
		if form.full || !flt.full {
			out = append(out, flt)
		}
	}
	return out
}

// faultBound is how long after a fault ends every app must be back at its
// true status with a sync answered. A fault's end is the killed containers
// Ready again, the cut restored, the API server ready, etcd continued or
// the upgrade rolled out; after it, Metacontroller calls the hooks at the
// latest on the next resync of each parent (the chart's 60 s), or at once
// for the parents whose sync failed during the fault (its queue retries
// them with a back-off that stays under the length of the outage) and,
// restarted or its watches broken, for every parent as its informers list
// them. 60 s, with half again for a 2-core node shared with the suite. An
// app whose port the test closed as the fault began is unready within the
// kubelet's 30 s of failed probes (3 × 10 s), well before the fault ends.
const faultBound = 90 * time.Second

// fault is one fault: play returns once it has ended (the killed
// containers running again, the cut restored), having marked in moved
// the apps whose spec or pods it changed.
type fault struct {
	name  string
	full  bool // in the full form only
	churn bool // the full form kills one app's port and revives another's during it
	// pagesKilled: the fault kills error-page servers abruptly. Until
	// kube-proxy drops a dead one's endpoint (about a second), Traefik's
	// fetch of a page can be refused, and Traefik answers the app's 5xx
	// with its code and its own text (docs/reliability.md): counted, not
	// failed.
	pagesKilled bool
	play        func(t *testing.T, moved map[string]bool)
}

// faultApp is one app of the fleet and its truth.
type faultApp struct {
	name     string
	dead     bool // port 9090 never listens
	public   bool // port 8080 routed by Traefik at host
	stateful bool
	// down is set while the test keeps the app's port 8080 closed: the
	// pod is unready and Available False PortNotListening; downSince is
	// when it was closed.
	down      bool
	downSince time.Time
	// generation is the spec generation the status must have observed
	// (0: any), once the test changed the spec.
	generation int64
}

func (a *faultApp) host() string { return a.name + ".faults.test" }

// fleet is the apps of a run in their namespace; the test changes the
// truth of an app only through churn and upgradeAmidRollout.
type fleet struct {
	ns      string
	apps    []*faultApp
	victims []*faultApp // the apps whose port churn closes, in turn
	downs   int         // how many churn has closed so far
}

// newFleet is n apps: every fifth with a dead port, every second public,
// every third a StatefulService. The live private Deployments are churn's
// victims.
func newFleet(ns string, n int) *fleet {
	fl := &fleet{ns: ns}
	for i := range n {
		a := &faultApp{name: fmt.Sprint("app-", i), dead: i%5 == 4, public: i%2 == 0, stateful: i%3 == 2}
		fl.apps = append(fl.apps, a)
		if !a.dead && !a.public && !a.stateful {
			fl.victims = append(fl.victims, a)
		}
	}
	return fl
}

func (a *faultApp) spec() obj {
	admin := "9090"
	if a.dead {
		admin = "9090=never"
	}
	args := append(framework.PortArgs("8080", admin), "--control", strconv.Itoa(framework.PortAppControlPort))
	spec := framework.PortApp(args, obj{"name": "http", "port": 8080, "public": a.public}, obj{"name": "admin", "port": 9090})
	if a.public {
		spec["host"] = a.host()
	}
	if a.stateful {
		spec["type"] = "StatefulService"
	}
	return spec
}

// atTruth says whether the app's status is its truth: Serving, for a dead
// port PortNotListening past the grace (Stalled), for a port the test
// closed PortNotListening, and a changed spec's generation observed.
func (a *faultApp) atTruth(sr obj) (bool, error) {
	c, s := framework.SRCondition(sr, "Available"), framework.SRCondition(sr, "Stalled")
	var gen int64
	fmt.Sscan(fmt.Sprint(framework.Dig(sr, "status", "observedGeneration")), &gen)
	switch {
	case gen < a.generation:
		return false, fmt.Errorf("%s: status of generation %d, want %d", a.name, gen, a.generation)
	case a.dead:
		return c != nil && c["status"] == "False" && c["reason"] == "PortNotListening" && s != nil && s["status"] == "True",
			fmt.Errorf("%s: Available %v, Stalled %v", a.name, c, s)
	case a.down:
		return c != nil && c["status"] == "False" && c["reason"] == "PortNotListening", fmt.Errorf("%s (port 8080 closed): Available %v", a.name, c)
	}
	return c != nil && c["status"] == "True" && c["reason"] == "Serving", fmt.Errorf("%s: Available %v", a.name, c)
}

// settled is the Available status and reason the app holds while nothing
// changes its port or pods.
func (a *faultApp) settled() [2]any {
	if a.dead || a.down {
		return [2]any{"False", "PortNotListening"}
	}
	return [2]any{"True", "Serving"}
}

func settle(t *testing.T, ns string, a *faultApp) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	f.WaitFor(4*time.Minute, a.name+" at its true status", func() (bool, error) {
		sr, err := f.Kube.Get(t.Context(), framework.SRPath(ns, a.name))
		if err != nil {
			return false, err
		}
		return a.atTruth(sr)
	})
}

// reconverge waits until every app is at its truth and the hooks answered
// a sync after ended, and returns how long after ended that was. A hooks
// pod whose count cannot be read when the fault ends (shutting down after
// an upgrade, or not listening yet) proves nothing: only a pod read then,
// or one that appeared since, can show a sync answered after.
func reconverge(t *testing.T, rel *framework.Release, fl *fleet, ended time.Time) time.Duration {
	t.Helper()
	f := framework.NewNodeFixture(t)
	base, unread := map[string]float64{}, map[string]bool{}
	for _, p := range rel.Pods(t, "controller") {
		key := framework.PodName(p) + "/" + fmt.Sprint(framework.PodRestarts(p))
		codes, err := f.ReadSyncCodes(t.Context(), p)
		if err != nil {
			t.Logf("reconverging: %v", err)
			unread[key] = true
			continue
		}
		base[key] = codes["200"]
	}
	f.WaitFor(2*faultBound, "the fleet back at its truth, a sync answered", func() (bool, error) {
		for _, a := range fl.apps {
			sr, err := f.Kube.Get(t.Context(), framework.SRPath(fl.ns, a.name))
			if err != nil {
				return false, err
			}
			if ok, err := a.atTruth(sr); !ok {
				return false, err
			}
		}
		pods, err := f.Kube.List(t.Context(), "/api/v1/namespaces/"+rel.NS+"/pods",
			"app.kubernetes.io/instance="+rel.Name+",app.kubernetes.io/component=controller")
		if err != nil {
			return false, err
		}
		for _, p := range pods {
			key := framework.PodName(p) + "/" + fmt.Sprint(framework.PodRestarts(p))
			if !framework.PodReady(p) || unread[key] || framework.Dig(p, "metadata", "deletionTimestamp") != nil {
				continue
			}
			codes, err := f.ReadSyncCodes(t.Context(), p)
			if err != nil {
				continue // shutting down since: another pod will tell
			}
			if n, ok := base[key]; !ok || codes["200"] > n {
				return true, nil
			}
		}
		return false, fmt.Errorf("no sync answered since the fault ended")
	})
	return time.Since(ended)
}

// cutHooks makes the chart's hooks NetworkPolicy admit nothing for d, then
// puts its ingress rules back: Metacontroller's calls fail meanwhile, and
// the check that no sync was answered while it lasted proves the cut.
func cutHooks(t *testing.T, rel *framework.Release, d time.Duration) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	path := "/apis/networking.k8s.io/v1/namespaces/" + rel.NS + "/networkpolicies/" + rel.Name
	np, err := f.Kube.Get(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	rules := framework.Dig(np, "spec", "ingress")
	if _, err := f.Kube.MergePatch(t.Context(), path, obj{"spec": obj{"ingress": []any{}}}); err != nil {
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
	for _, p := range rel.Pods(t, "controller") {
		if err := f.Node.ForgetConnections(t.Context(), fmt.Sprint(framework.Dig(p, "status", "podIP"))); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second)
	before := f.HooksAnswered(rel)
	time.Sleep(d - enforced - time.Second)
	if after := f.HooksAnswered(rel); after > before {
		t.Errorf("%.0f syncs answered while the hooks were cut off: the cut did not hold", after-before)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := f.Kube.MergePatch(ctx, path, obj{"spec": obj{"ingress": rules}}); err != nil {
		t.Fatal(err)
	}
}

// The full form's faults (TestFaultsSurvived, `make chaos`): the
// error-page pods evicted, the control plane's, the upgrade amid a
// rollout, and the ports that die and come back during the others.

// churn closes port 8080 of the next victim (its pod goes unready: the
// readiness probe is on it) and opens again the one churn closed before,
// marking both moved.
func (fl *fleet) churn(t *testing.T, moved map[string]bool) {
	f := framework.NewNodeFixture(t)
	t.Helper()
	if fl.downs > 0 {
		back := fl.victims[(fl.downs-1)%len(fl.victims)]
		f.SetPort(fl.ns, back.name, 8080, "open")
		back.down, back.downSince = false, time.Time{}
		moved[back.name] = true
	}
	next := fl.victims[fl.downs%len(fl.victims)]
	next.down, next.downSince = true, time.Now()
	f.SetPort(fl.ns, next.name, 8080, "close")
	moved[next.name] = true
	fl.downs++
}

// upgradeAmidRollout changes the spec (an env var) of n live apps that no
// churn has touched, so their workloads roll, and while they roll runs
// `helm upgrade` of stackdome with a changed pod template (an annotation),
// which rolls both of its Deployments; it returns once the upgrade has
// rolled out (--wait). The rolled apps are moved and must reach Serving on
// their new generation.
func upgradeAmidRollout(t *testing.T, rel *framework.Release, fl *fleet, n int, moved map[string]bool) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	stamp := strconv.FormatInt(time.Now().Unix(), 10)
	rolled := 0
	for _, a := range fl.apps {
		if rolled == n {
			break
		}
		if a.dead || isVictim(fl, a) {
			continue
		}
		path := framework.SRPath(fl.ns, a.name)
		sr, err := f.Kube.MergePatch(t.Context(), path, obj{"spec": obj{"env": []any{obj{"name": "ROLL", "value": stamp}}}})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Sscan(fmt.Sprint(framework.Dig(sr, "metadata", "generation")), &a.generation)
		moved[a.name] = true
		rolled++
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out, err := f.Helm(ctx, "upgrade", rel.Name, filepath.Join(f.Root, "chart"), "--namespace", rel.NS,
		"--reuse-values", "--wait", "--timeout", "4m", "--set-string", "podAnnotations.stackdome-e2e/upgraded="+stamp)
	if err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
}

// isVictim says whether churn may close a's port.
func isVictim(fl *fleet, a *faultApp) bool {
	for _, v := range fl.victims {
		if v == a {
			return true
		}
	}
	return false
}
