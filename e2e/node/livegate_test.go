//go:build e2e

package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestGateCondemnsDeadPorts is the port gate's whole loop on a real node
// with the chart's two replicas (its default replicaCount) behind its hooks
// Service: a Service (public, its host routed by Traefik) with one dead
// port and a StatefulService with storage with two, portapp listening on
// the primary port of each (so the kubelet calls the pods Ready) and never
// on the dead ones. Read from a watch, from before the apps exist, of the
// namespace's StackResources and of every kind of child stackdome makes
// (framework.ChildKinds):
//
//   - each app's first status is Available=False Progressing (the first
//     sync answers before any pod runs), and its pod carries the
//     stackdome.io/revision annotation;
//   - past the grace, each stored status is the condemnation
//     (docs/reference.md, the row "serving, a port `Closed` by a dial made
//     after `failingSince + grace`…"): Available=False PortNotListening,
//     Stalled=True PortNotListening, Converged=False, exactly one
//     readiness_failure detail per dead port, with its number, none for an
//     open port, and status.ports Closed exactly for the dead ports, Open
//     for the others; no status ever said Serving;
//   - at steady state the syncs write nothing: from the resourceVersion at
//     which both stored statuses are the condemnation, over at least three
//     resync periods (every app resynced twice at least) in which the
//     replicas answered at least two syncs per app between them and each
//     at least one, no status changes and no child is created, deleted or
//     changed (spec, labels, annotations);
//   - both replicas answered syncs: each pod's own
//     stackdome_hook_requests_total{hook="sync",code="200"} grew. Which app
//     a sync was for is not observable here (the counter has no app label,
//     and the node has no log of hook calls, which e2e/'s cluster-network
//     stand-in kept), so "both replicas answered each app" is not asserted.
//
// compositeController.resyncPeriodSeconds=2, not the chart's 60: a
// condemnation asks for no requeue, so the steady state's syncs are the
// resync's, and two of them a minute apart would make the test last
// minutes. config.portCheckGrace=5s, not the chart's 3m: the proof is the
// verdict past the grace, not the grace's length; a short grace also
// makes a sync from a parent cached before another replica's condemnation
// likelier, not rarer (docs/design.md, "A parent older than the status").
// config.verdictRequeue=1s, not 10s: the syncs during the window come a
// second apart, so the condemnation is written a second or so past the
// grace. extraArgs --idle-timeout=500ms, not 2m: Metacontroller keeps its
// hook connections alive and, with two apps, at most two are open, each
// pinned to the replica kube-proxy picked when it was opened (both may be
// one); closed by the hooks server after half a second idle, every resync
// opens new ones and kube-proxy picks again, as it would for a fleet.
//
// It bites: with a dead port listening after all (PortArgs "9090"), or
// the gate dialing the primary port only, no condemnation comes and the
// test fails naming every difference of the status it saw; a status or
// child written at steady state (a replica stamping the condemnation with
// its own dial, say) fails it, listed with the status written; with
// replicaCount=1 there is no second replica.
func TestGateCondemnsDeadPorts(t *testing.T) {
	f := framework.NewNodeFixture(t)
	const resync = 2 * time.Second
	rel := f.InstallChart("compositeController.resyncPeriodSeconds=2",
		"config.portCheckGrace=5s", "config.verdictRequeue=1s", "extraArgs={--idle-timeout=500ms}")
	controllers := rel.Pods(t, "controller")
	if len(controllers) != 2 {
		t.Fatalf("%d hooks pods, want the chart's 2", len(controllers))
	}
	ns := f.Namespace(nil)
	t.Cleanup(func() { f.DescribePods(ns) })
	f.MakePV("gate-"+ns, "1Gi")
	ws := []*framework.Watcher{f.WatchPath("sr", framework.SRPath(ns, ""))}
	for kind, path := range framework.ChildKinds {
		ws = append(ws, f.WatchPath(kind, fmt.Sprintf(path, ns)))
	}

	web := &framework.GateApp{Name: "web", Ports: map[string]int{"http": 8080, "admin": 9090}, Dead: []string{"admin"},
		Spec: framework.PortApp(framework.PortArgs("8080", "9090=never"),
			obj{"name": "http", "port": 8080, "public": true}, obj{"name": "admin", "port": 9090})}
	web.Spec["host"] = "web.gate.test"
	db := &framework.GateApp{Name: "db", Ports: map[string]int{"sql": 5432, "metrics": 9187, "repl": 5433}, Dead: []string{"metrics", "repl"},
		Spec: framework.PortApp(framework.PortArgs("5432", "9187=never", "5433=never"),
			obj{"name": "sql", "port": 5432}, obj{"name": "metrics", "port": 9187}, obj{"name": "repl", "port": 5433})}
	db.Spec["type"] = "StatefulService"
	db.Spec["storage"] = obj{"size": "1Gi", "mountPath": "/data", "storageClassName": framework.PVClass}
	apps := []*framework.GateApp{web, db}
	for _, a := range apps {
		f.CreateApp(ns, a.Name, a.Spec)
	}

	for _, a := range apps {
		pod := f.AppPods(ns, a.Name, 1, 3*time.Minute)[0]
		if rev, _ := framework.Dig(pod, "metadata", "annotations", "stackdome.io/revision").(string); rev == "" {
			t.Errorf("%s: pod %s has no stackdome.io/revision annotation", a.Name, framework.PodName(pod))
		}
	}

	// Past the grace: both stored statuses the condemnation, read from one
	// list, whose resourceVersion the steady state counts from.
	var startRV uint64
	f.WaitFor(3*time.Minute, "both statuses naming exactly their dead ports", func() (bool, error) {
		list, err := f.Kube.Get(t.Context(), framework.SRPath(ns, ""))
		if err != nil {
			return false, err
		}
		got := map[string]obj{}
		for _, sr := range framework.ToSlice(list["items"]) {
			if sr, ok := sr.(obj); ok {
				got[fmt.Sprint(framework.Dig(sr, "metadata", "name"))] = sr
			}
		}
		var errs []error
		for _, a := range apps {
			if err := a.Condemned(got[a.Name]); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", a.Name, err))
			}
		}
		if len(errs) > 0 {
			return false, errors.Join(errs...)
		}
		startRV, err = strconv.ParseUint(fmt.Sprint(framework.Dig(list, "metadata", "resourceVersion")), 10, 64)
		return err == nil, err
	})
	marked := time.Now()

	// Steady state: at least three resync periods since the mark, twice as
	// many syncs answered as there are apps, and some by each replica.
	before := map[string]float64{}
	for _, p := range controllers {
		before[framework.PodName(p)] = f.SyncsAnswered(p)
	}
	var answered map[string]float64
	f.WaitFor(90*time.Second, "three resync periods, two syncs per app and both replicas answering", func() (bool, error) {
		answered = map[string]float64{}
		var total float64
		for _, p := range controllers {
			answered[framework.PodName(p)] = f.SyncsAnswered(p) - before[framework.PodName(p)]
			total += answered[framework.PodName(p)]
		}
		ok := time.Since(marked) >= 3*resync && total >= float64(2*len(apps))
		for _, n := range answered {
			ok = ok && n > 0
		}
		return ok, fmt.Errorf("%s since the mark, syncs answered %v", time.Since(marked).Round(time.Second), answered)
	})
	t.Logf("steady state: %s, syncs answered by each replica %v", time.Since(marked).Round(100*time.Millisecond), answered)
	events := framework.Merged(ws...)
	fw := framework.NodeWrites(events, func(e framework.WatchEvent) bool { return e.RV > startRV })
	if len(fw.What) > 0 {
		// What each status write said: the reader needs it to tell a
		// stamp from a verdict.
		lines := slices.Clone(fw.What)
		for _, e := range events {
			if e.Kind == "sr" && e.RV > startRV {
				status, _ := json.Marshal(framework.Dig(e.Obj, "status"))
				lines = append(lines, fmt.Sprintf("rv %d %v: status %s", e.RV, framework.Dig(e.Obj, "metadata", "name"), framework.Clip(string(status), 1500)))
			}
		}
		t.Errorf("%d writes at steady state, want none:\n%s", len(fw.What), strings.Join(lines, "\n"))
	}

	// Over the whole run, from the watch: each app's first status, and no
	// status that said Serving.
	first := map[string]bool{}
	for _, e := range events {
		if e.Kind != "sr" {
			continue
		}
		name := fmt.Sprint(framework.Dig(e.Obj, "metadata", "name"))
		c := framework.SRCondition(e.Obj, "Available")
		if c == nil {
			continue
		}
		if !first[name] {
			first[name] = true
			if c["status"] != "False" || c["reason"] != "Progressing" {
				t.Errorf("%s: first status (rv %d) Available %v %v, want False Progressing", name, e.RV, c["status"], c["reason"])
			}
		}
		if c["reason"] == "Serving" {
			t.Errorf("%s: rv %d: status said Serving with dead ports: %v", name, e.RV, c["message"])
		}
	}
	for _, a := range apps {
		if !first[a.Name] {
			t.Errorf("%s: the watch saw no status", a.Name)
		}
	}
	for _, p := range controllers {
		t.Logf("replica %s: %.0f syncs answered, %.0f held (429)", framework.PodName(p), f.HookSyncs(p, "200"), f.HookSyncs(p, "429"))
	}
}
