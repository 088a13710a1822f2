//go:build e2e

package node

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// What TestFaultsSurvived reads of a fault: the writes the API server
// stored while it lasted, and what a client of Traefik got.

// faultRow is one line of the run's table.
type faultRow struct {
	fault                   string
	apps                    int
	deletions, falseHealthy int
	flaps, windowsAgain     int
	routeFailures, noPage   int
	pages                   int // branded pages for "/" of an app the fault moved
	reconverge              time.Duration
	details                 []string
}

// fleetWatch watches the fleet's StackResources and every kind of child
// stackdome makes in its namespace.
type fleetWatch struct {
	apps     map[string]*faultApp
	watchers []*framework.Watcher
}

func watchFleet(t *testing.T, ns string, fl *fleet) *fleetWatch {
	f := framework.NewNodeFixture(t)
	fw := &fleetWatch{apps: map[string]*faultApp{}}
	for _, a := range fl.apps {
		fw.apps[a.name] = a
	}
	fw.watchers = append(fw.watchers, f.WatchPath("sr", framework.SRPath(ns, "")))
	for kind, path := range framework.ChildKinds {
		fw.watchers = append(fw.watchers, f.WatchPath(kind, fmt.Sprintf(path, ns)))
	}
	return fw
}

// gateMemory is what the statuses of one app said of its port gate so
// far: the workload revision, its grace window's start, and the newest
// verdict's dial.
type gateMemory struct {
	revision     string
	failingSince string
	checkedAt    time.Time
}

// row reads the events received from start to end and the answers
// through Traefik meanwhile; moved are the apps whose port or pods the
// fault changed, whose Available may change and whose route may answer
// the branded page. An app's 5xx without the page is a route failure
// unless the fault killed page servers (pagesKilled).
func (fw *fleetWatch) row(name string, start, end time.Time, took time.Duration, routes []routeAnswer, pagesKilled bool, moved map[string]bool) faultRow {
	r := faultRow{fault: name, apps: len(fw.apps), reconverge: took}
	for _, a := range routes {
		switch {
		case a.kind == noPage:
			r.noPage++
			if pagesKilled {
				continue
			}
		case a.kind == pageForApp && moved[a.app]:
			r.pages++
			continue
		}
		r.routeFailures++
		r.details = append(r.details, a.what)
	}
	gates := map[string]gateMemory{}
	for _, e := range framework.Merged(fw.watchers...) {
		during := !e.At.Before(start) && e.At.Before(end)
		what := fmt.Sprintf("rv %d %s %s %v", e.RV, e.Type, e.Kind, framework.Dig(e.Obj, "metadata", "name"))
		if e.Kind != "sr" {
			if during && e.Type == "DELETED" {
				r.deletions++
				r.details = append(r.details, what)
			}
			continue
		}
		a, ok := fw.apps[fmt.Sprint(framework.Dig(e.Obj, "metadata", "name"))]
		if !ok {
			continue
		}
		// The gate's memory is read from every write since the watch
		// began: a window opened again is one that differs from the
		// window an earlier write of the same revision held.
		again := gateAgain(gates, a.name, e.Obj)
		if !during {
			continue
		}
		if again != "" && !moved[a.name] {
			r.windowsAgain++
			r.details = append(r.details, what+": "+again)
		}
		c := framework.SRCondition(e.Obj, "Available")
		if c == nil {
			continue
		}
		if a.dead && c["status"] == "True" {
			r.falseHealthy++
			r.details = append(r.details, fmt.Sprintf("%s: Available=True %v with port 9090 dead", what, c["reason"]))
		}
		if a.down && c["status"] == "True" && c["reason"] == "Serving" {
			if at := checkedAt(e.Obj); at.After(a.downSince) {
				r.falseHealthy++
				r.details = append(r.details, fmt.Sprintf("%s: Serving from a dial at %s, port 8080 closed at %s", what,
					at.Format(time.StampMicro), a.downSince.Format(time.StampMicro)))
			}
		}
		if moved[a.name] {
			continue
		}
		if got, want := [2]any{c["status"], c["reason"]}, a.settled(); got != want {
			r.flaps++
			r.details = append(r.details, fmt.Sprintf("%s: Available %v %v, settled at %v %v", what, got[0], got[1], want[0], want[1]))
		}
	}
	return r
}

// gateAgain records sr's port gate in gates and says how it contradicts
// what an earlier write of the same workload revision held: a second grace
// window, or a verdict dialed before the one already written ("" if it
// does not).
func gateAgain(gates map[string]gateMemory, app string, sr obj) string {
	rev, _ := framework.Dig(sr, "status", "portCheck", "revision").(string)
	since, _ := framework.Dig(sr, "status", "portCheck", "failingSince").(string)
	at := checkedAt(sr)
	m, seen := gates[app]
	if rev == "" {
		return ""
	}
	if !seen || m.revision != rev {
		gates[app] = gateMemory{revision: rev, failingSince: since, checkedAt: at}
		return ""
	}
	var again string
	switch {
	case since != "" && m.failingSince != "" && since != m.failingSince:
		again = fmt.Sprintf("grace window from %s, one from %s written before", since, m.failingSince)
	case !at.IsZero() && at.Before(m.checkedAt):
		again = fmt.Sprintf("a verdict dialed at %s over one dialed at %s", at.Format(time.StampMicro), m.checkedAt.Format(time.StampMicro))
	}
	if since != "" {
		m.failingSince = since
	}
	if at.After(m.checkedAt) {
		m.checkedAt = at
	}
	gates[app] = m
	return again
}

// checkedAt is sr's status.portCheck.checkedAt (zero if none).
func checkedAt(sr obj) time.Time {
	s, _ := framework.Dig(sr, "status", "portCheck", "checkedAt").(string)
	at, _ := time.Parse(time.RFC3339Nano, s)
	return at
}

func formatFaultTable(rows []faultRow) string {
	var b strings.Builder
	b.WriteString("| fault | apps | deletions | false-healthy moments | flaps | windows opened again | route failures | 5xx without the page | branded 503 of a moved app | time to reconverge |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %s |\n", r.fault, r.apps, r.deletions, r.falseHealthy, r.flaps, r.windowsAgain, r.routeFailures, r.noPage, r.pages, r.reconverge.Round(100*time.Millisecond))
	}
	return b.String()
}

// routeProbe asks Traefik for every public app, one after another,
// the whole run, and keeps every answer that is not the app's own: for
// "/", its 200; with pages (the full form), also for "/status/503" as a
// browser asks, its 503 or stackdome's branded 503 page.
type routeProbe struct {
	mu      sync.Mutex
	asked   int
	answers []routeAnswer
}

// routeAnswer is an answer through Traefik that was not the app's.
type routeAnswer struct {
	app  string
	kind answerKind
	what string
}

// answerKind tells the answers that are not the app's apart.
type answerKind int

const (
	// notApp: Traefik's own error, or no answer.
	notApp answerKind = iota
	// noPage: the app's 5xx with its code kept but Traefik's text, not
	// the page: Traefik's errors middleware found the page server's
	// address refusing (a page server killed, its endpoint not yet
	// dropped by kube-proxy) and sends its load balancer's text.
	noPage
	// pageForApp: the branded 503 for "/": Traefik found no ready pod
	// of the app, and stackdome's page said so.
	pageForApp
)

func startRouteProbe(t *testing.T, apps []*faultApp, pages bool) *routeProbe {
	f := framework.NewNodeFixture(t)
	p := &routeProbe{}
	var live []*faultApp
	for _, a := range apps {
		// The apps with a dead port too: their route is Traefik's as
		// any other, and port 8080 serves.
		if a.public {
			live = append(live, a)
		}
	}
	paths := []string{"/"}
	if pages {
		paths = append(paths, "/status/503")
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() { close(done); <-stopped })
	go func() {
		defer close(stopped)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			a, path := live[i%len(live)], paths[(i/len(live))%len(paths)]
			code, body, err := f.GetCodeAs(t.Context(), "http://"+net.JoinHostPort(f.TraefikIP(), "8000")+path, a.host(), "text/html")
			p.mu.Lock()
			p.asked++
			if kind, bad := classifyAnswer(path, code, body, err); bad != nil {
				p.answers = append(p.answers, routeAnswer{app: a.name, kind: kind,
					what: fmt.Sprintf("%s %s%s: %v", time.Now().Format(time.TimeOnly), a.host(), path, bad)})
			}
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *routeProbe) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked, p.answers = 0, nil
}

// failures are the answers since the last reset that were not the app's.
func (p *routeProbe) failures() []routeAnswer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]routeAnswer(nil), p.answers...)
}

// classifyAnswer says what is wrong with an answer to path, and what kind
// of answer it is: "/" wants the app's 200, "/status/503" the app's 503 or
// stackdome's branded page (nil: the answer is the app's).
func classifyAnswer(path string, code int, body string, err error) (answerKind, error) {
	page := strings.Contains(body, "<title>503 Service Unavailable</title>")
	switch {
	case err != nil:
		return notApp, err
	case path == "/" && code == 200 && strings.Contains(body, "port 8080"):
		return notApp, nil
	case path == "/status/503" && code == 503 && (page || strings.Contains(body, "port 8080 status 503")):
		return notApp, nil
	}
	bad := fmt.Errorf("%d %q", code, framework.Clip(body, 200))
	switch {
	case path == "/" && code == 503 && page:
		return pageForApp, bad
	case path == "/status/503" && code == 503:
		return noPage, bad
	}
	return notApp, bad
}

// TestFaultRowCounts: a fault's row counts what it is for, from the events
// received while the fault lasted and nothing else: a child deleted; a
// dead-port app read Available=True (both a false-healthy moment and a
// flap); a live app leaving Serving; an app whose port the test closed
// read Serving from a dial made after (false-healthy), but not from one
// made before, nor any change of it a flap (the fault moved it); a second
// grace window of one revision, and a verdict older than one written
// before; a route failure.
func TestFaultRowCounts(t *testing.T) {
	start := time.Now()
	at := func(d time.Duration) time.Time { return start.Add(d) }
	micro := func(d time.Duration) string {
		return at(d).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	}
	sr := func(name, status, reason string, gate ...string) obj {
		st := obj{"conditions": []any{obj{"type": "Available", "status": status, "reason": reason}}}
		if len(gate) > 0 {
			pc := obj{"revision": gate[0]}
			if gate[1] != "" {
				pc["checkedAt"] = gate[1]
			}
			if gate[2] != "" {
				pc["failingSince"] = gate[2]
			}
			st["portCheck"] = pc
		}
		return obj{"metadata": obj{"name": name}, "status": st}
	}
	apps := map[string]*faultApp{
		"live": {name: "live"}, "dead": {name: "dead", dead: true},
		"down": {name: "down", down: true, downSince: at(0)},
	}
	fw := &fleetWatch{apps: apps, watchers: []*framework.Watcher{
		framework.RecordedWatcher("sr", []framework.WatchEvent{
			// before the fault
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "False", "PortNotListening"), RV: 1, At: at(-2 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("dead", "False", "PortNotListening", "r1", micro(-time.Hour), "2026-12-05T10:00:00Z"), RV: 2, At: at(-time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "True", "Serving", "r1", micro(-time.Minute), ""), RV: 3, At: at(-time.Second)},
			// during it
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "True", "Serving"), RV: 4, At: at(time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("dead", "True", "VerifyingPorts"), RV: 5, At: at(2 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "False", "Progressing"), RV: 6, At: at(3 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("down", "True", "Serving", "r1", micro(-time.Second), ""), RV: 7, At: at(3 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("down", "False", "Progressing"), RV: 8, At: at(4 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("down", "True", "Serving", "r1", micro(4*time.Second), ""), RV: 9, At: at(5 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("dead", "False", "PortNotListening", "r1", micro(-time.Hour), "2026-12-05T10:05:00Z"), RV: 10, At: at(6 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "True", "Serving", "r1", micro(-2*time.Minute), ""), RV: 11, At: at(7 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "True", "Serving", "r2", micro(-3*time.Minute), ""), RV: 12, At: at(8 * time.Second)}, // a new revision
		}...),
		framework.RecordedWatcher("service", []framework.WatchEvent{
			{Kind: "service", Type: "MODIFIED", Obj: obj{"metadata": obj{"name": "live"}}, RV: 13, At: at(4 * time.Second)},
			{Kind: "service", Type: "DELETED", Obj: obj{"metadata": obj{"name": "live"}}, RV: 14, At: at(5 * time.Second)},
			{Kind: "service", Type: "DELETED", Obj: obj{"metadata": obj{"name": "dead"}}, RV: 15, At: at(time.Minute)}, // after it
		}...),
	}}
	routes := []routeAnswer{{app: "live", kind: notApp}, {app: "live", kind: noPage}, {app: "live", kind: pageForApp}, {app: "down", kind: pageForApp}}
	r := fw.row("fault", start, at(10*time.Second), time.Second, routes, false, map[string]bool{"down": true})
	got := [7]int{r.deletions, r.falseHealthy, r.flaps, r.windowsAgain, r.routeFailures, r.noPage, r.pages}
	if want := [7]int{1, 2, 2, 2, 3, 1, 1}; got != want {
		t.Errorf("deletions, false-healthy, flaps, windows again, route failures, 5xx without the page, pages of moved apps = %v, want %v\n%s", got, want, strings.Join(r.details, "\n"))
	}
	// With page servers killed, a 5xx without the page is counted, not
	// failed; every other answer still fails (the branded page for "/"
	// of an app the fault did not move, too).
	if r := fw.row("fault", start, at(10*time.Second), time.Second, routes, true, nil); r.routeFailures != 3 || r.noPage != 1 {
		t.Errorf("page servers killed: route failures %d, 5xx without the page %d, want 3 and 1", r.routeFailures, r.noPage)
	}
}

// TestRouteAnswers: the route probe takes the app's answers and
// stackdome's page for its 503, tells the branded page for "/" and an
// app's 503 with Traefik's text apart, and takes nothing else.
func TestRouteAnswers(t *testing.T) {
	page := "<!doctype html><title>503 Service Unavailable</title>"
	for _, c := range []struct {
		path string
		code int
		body string
		ok   bool
		kind answerKind
	}{
		{"/", 200, "app-0-x port 8080\n", true, notApp},
		{"/", 503, page, false, pageForApp},
		{"/", 404, "404 page not found\n", false, notApp}, // Traefik's: no router
		{"/", 502, "Bad Gateway", false, notApp},
		{"/status/503", 503, "app-0-x port 8080 status 503\n", true, notApp},
		{"/status/503", 503, page, true, notApp},
		{"/status/503", 503, "Bad Gateway", false, noPage}, // the page server refused
		{"/status/503", 502, "Bad Gateway", false, notApp},
	} {
		kind, err := classifyAnswer(c.path, c.code, c.body, nil)
		if (err == nil) != c.ok || kind != c.kind {
			t.Errorf("%s %d %q: %v, kind %d, want ok %v, kind %d", c.path, c.code, c.body, err, kind, c.ok, c.kind)
		}
	}
}
