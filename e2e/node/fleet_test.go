//go:build e2e

package node

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestFleetOnRealNode is the fleet benchmark's first apps as containers on
// the real node (`make bench-fleet`; docs/performance.md, "Fleet"): the
// chart at its defaults, STACKDOME_FLEET_NODE_N apps (make bench-fleet
// sets 50) of the shapes e2e/fleet_test.go creates (even ones private,
// http and metrics; odd ones public at a host, http public), each a pod of
// the test image listening on both ports, created by eight clients at
// once. It logs "fleet-node:" lines: the time from the first create to
// every Deployment and to every app Converged, the writes per app (status
// writes, and child writes: a child created, or its spec, labels or
// annotations changed, by anyone but the controllers that keep their own
// annotations), and the memory of the node with the fleet running. Then a
// quiet minute, in which nothing may be written (it fails otherwise).
//
// The stand-in fleet of e2e/fleet_test.go measures 200 and 1,000 apps,
// which a 2-core node cannot run as containers; this one shows the same
// figures hold where the kubelet, kube-proxy and the NetworkPolicy engine
// are real.
func TestFleetOnRealNode(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("STACKDOME_FLEET_NODE_N"))
	if n == 0 {
		t.Skip("STACKDOME_FLEET_NODE_N is not set: the real node's fleet runs with make bench-fleet")
	}
	installChart(t)
	ns := newNamespace(t, nil)
	t.Cleanup(func() { describePods(t, ns) })
	ws := []*watcher{watchPath(t, "sr", srPath(ns, ""))}
	for kind, path := range childKinds {
		ws = append(ws, watchPath(t, kind, fmt.Sprintf(path, ns)))
	}

	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range work {
				name, spec := fleetNodeApp(i)
				createApp(t, ns, name, spec)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	created := time.Since(start)

	var tDeployments, tConverged time.Duration
	waitFor(t, time.Duration(n)*3*time.Second+5*time.Minute, "every app Converged", func() (bool, error) {
		deps, conv := fleetNodeProgress(ws)
		if tDeployments == 0 && deps >= n {
			tDeployments = time.Since(start)
		}
		if conv < n {
			return false, fmt.Errorf("%d of %d apps Converged, %d Deployments", conv, n, deps)
		}
		tConverged = time.Since(start)
		return true, nil
	})
	t.Logf("fleet-node: N=%d created in %s; every Deployment after %s, every app Converged after %s (from the first create)",
		n, created.Round(100*time.Millisecond), tDeployments.Round(100*time.Millisecond), tConverged.Round(100*time.Millisecond))
	all := fleetNodeWrites(merged(ws...), time.Time{})
	for _, shape := range []struct{ name, prefix string }{{"private", "api-"}, {"public", "web-"}} {
		m := (n + 1) / 2
		if shape.prefix == "web-" {
			m = n / 2
		}
		t.Logf("fleet-node: writes per %s app (%d): status %s; children %s", shape.name, m,
			spread(only(all.status, shape.prefix), m), spread(only(all.children, shape.prefix), m))
	}
	t.Logf("fleet-node: memory of the node with the fleet:\n%s", framework.Indent(framework.FormatMemory(realNode().Memory())))

	quietFrom := time.Now()
	time.Sleep(65 * time.Second)
	quiet := fleetNodeWrites(merged(ws...), quietFrom)
	t.Logf("fleet-node: quiet minute (%s): %d status writes, %d child writes", time.Since(quietFrom).Round(time.Second), sum(quiet.status), sum(quiet.children))
	for _, w := range quiet.what {
		t.Errorf("fleet-node: quiet minute: %s", w)
	}
}

// fleetNodeApp is app i, as e2e/fleet_test.go's fleetApp shapes it, with
// the test image listening on its ports.
func fleetNodeApp(i int) (string, obj) {
	name := fmt.Sprintf("api-%04d", i)
	http := obj{"name": "http", "port": 8080}
	if i%2 == 1 {
		name = fmt.Sprintf("web-%04d", i)
		http["public"] = true
	}
	spec := portapp(portArgs("8080", "9090"), http, obj{"name": "metrics", "port": 9090})
	if i%2 == 1 {
		spec["host"] = name + ".fleet.example.com"
	}
	return name, spec
}

// fleetNodeProgress counts, from the watches, the Deployments created and
// the apps whose last seen status says Converged=True.
func fleetNodeProgress(ws []*watcher) (deployments, converged int) {
	deps, conv := map[string]bool{}, map[string]bool{}
	for _, e := range merged(ws...) {
		name := fmt.Sprint(framework.Dig(e.Obj, "metadata", "name"))
		switch e.Kind {
		case "deployment":
			deps[name] = true
		case "sr":
			c := srCondition(e.Obj, "Converged")
			conv[name] = c != nil && c["status"] == "True"
		}
	}
	for _, c := range conv {
		if c {
			converged++
		}
	}
	return len(deps), converged
}

// fleetWrites are the writes per app (by StackResource name; a child is
// its app's by the instance label) and what they were.
type fleetWrites struct {
	status, children map[string]int
	what             []string
}

// controllerAnnotations are the annotations the workload controllers keep
// on the children stackdome returns: their writes are not stackdome's.
var controllerAnnotations = []string{"deployment.kubernetes.io/revision"}

// fleetNodeWrites reads the writes received from since on (every write if
// since is zero): a StackResource's status changed, a child created,
// deleted, or its spec (an EndpointSlice's endpoints and ports), labels or
// annotations changed. Events before since are read to
// know each object's state.
func fleetNodeWrites(events []event, since time.Time) fleetWrites {
	return nodeWrites(events, func(e event) bool { return !e.At.Before(since) })
}

// nodeWrites reads the writes as fleetNodeWrites does, among the events
// counted says to count; the others are read to know each object's state.
func nodeWrites(events []event, counted func(event) bool) fleetWrites {
	fw := fleetWrites{status: map[string]int{}, children: map[string]int{}}
	last := map[string]string{}
	for _, e := range events {
		key := e.Kind + "/" + fmt.Sprint(framework.Dig(e.Obj, "metadata", "uid"))
		var state any
		app := fmt.Sprint(framework.Dig(e.Obj, "metadata", "labels", "app.kubernetes.io/instance"))
		if e.Kind == "sr" {
			state, app = framework.Dig(e.Obj, "status"), fmt.Sprint(framework.Dig(e.Obj, "metadata", "name"))
		} else {
			annotations := map[string]any{}
			if a, ok := framework.Dig(e.Obj, "metadata", "annotations").(map[string]any); ok {
				for k, v := range a {
					if !slices.Contains(controllerAnnotations, k) {
						annotations[k] = v
					}
				}
			}
			// An EndpointSlice has no spec: what it says is its address
			// type, endpoints and ports (nil for every other kind).
			state = []any{framework.Dig(e.Obj, "spec"), framework.Dig(e.Obj, "metadata", "labels"), annotations,
				e.Obj["addressType"], e.Obj["endpoints"], e.Obj["ports"]}
		}
		b, _ := json.Marshal(state)
		prev, seen := last[key]
		last[key] = string(b)
		changed := !seen || prev != string(b) || e.Type == "DELETED"
		if !changed || !counted(e) {
			continue
		}
		if e.Kind == "sr" {
			if e.Type == "ADDED" {
				continue // the create, not a status write
			}
			fw.status[app]++
		} else {
			fw.children[app]++
		}
		fw.what = append(fw.what, fmt.Sprintf("rv %d %s %s %v", e.RV, e.Type, e.Kind, framework.Dig(e.Obj, "metadata", "name")))
	}
	return fw
}

// spread is the mean, min and max of counts over n apps.
func spread(counts map[string]int, n int) string {
	lo, hi := -1, 0
	for _, c := range counts {
		hi = max(hi, c)
		if lo < 0 || c < lo {
			lo = c
		}
	}
	if len(counts) < n {
		lo = 0
	}
	return fmt.Sprintf("%.2f (min %d, max %d)", float64(sum(counts))/float64(n), max(lo, 0), hi)
}

// only is the counts of the apps whose name starts with prefix.
func only(counts map[string]int, prefix string) map[string]int {
	out := map[string]int{}
	for k, v := range counts {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out
}

func sum(counts map[string]int) int {
	s := 0
	for _, c := range counts {
		s += c
	}
	return s
}

// TestFleetWritesCount: a status that changed is a status write, the
// create of a StackResource is not; a child's creation, deletion and a
// change of its spec, labels or annotations are child writes, its status
// and the workload controllers' own annotations are not; what came before
// since only tells the state.
func TestFleetWritesCount(t *testing.T) {
	start := time.Now()
	at := func(d time.Duration) time.Time { return start.Add(d) }
	sr := func(status obj) obj {
		return obj{"metadata": obj{"name": "web", "uid": "u1"}, "status": status}
	}
	dep := func(replicas int, revision string, ready int) obj {
		return obj{"metadata": obj{"name": "web", "uid": "u2", "labels": obj{"app.kubernetes.io/instance": "web"},
			"annotations": obj{"deployment.kubernetes.io/revision": revision}},
			"spec": obj{"replicas": replicas}, "status": obj{"readyReplicas": ready}}
	}
	svc := obj{"metadata": obj{"name": "web", "uid": "u3", "labels": obj{"app.kubernetes.io/instance": "web"}}, "spec": obj{"clusterIP": "10.0.0.1"}}
	events := []event{
		{Kind: "sr", Type: "ADDED", Obj: sr(nil), At: at(0)},
		{Kind: "sr", Type: "MODIFIED", Obj: sr(obj{"revision": "a"}), At: at(1)},
		{Kind: "sr", Type: "MODIFIED", Obj: sr(obj{"revision": "a"}), At: at(2)},
		{Kind: "deployment", Type: "ADDED", Obj: dep(1, "1", 0), At: at(1)},
		{Kind: "deployment", Type: "MODIFIED", Obj: dep(1, "1", 1), At: at(2)},
		{Kind: "deployment", Type: "MODIFIED", Obj: dep(1, "2", 1), At: at(3)},
		{Kind: "service", Type: "ADDED", Obj: svc, At: at(1)},
		{Kind: "deployment", Type: "MODIFIED", Obj: dep(2, "2", 1), At: at(10)},
		{Kind: "service", Type: "DELETED", Obj: svc, At: at(11)},
		{Kind: "sr", Type: "MODIFIED", Obj: sr(obj{"revision": "b"}), At: at(12)},
	}
	all := fleetNodeWrites(events, time.Time{})
	if got := [2]int{sum(all.status), sum(all.children)}; got != [2]int{2, 4} {
		t.Errorf("every write: status %d, children %d, want 2 and 4\n%v", got[0], got[1], all.what)
	}
	later := fleetNodeWrites(events, at(5))
	if got := [2]int{sum(later.status), sum(later.children)}; got != [2]int{1, 2} {
		t.Errorf("since 5: status %d, children %d, want 1 and 2\n%v", got[0], got[1], later.what)
	}
}
