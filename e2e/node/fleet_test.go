//go:build e2e

package node

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestFleet is the fleet benchmark (`make bench-fleet`, docs/performance.md
// "Fleet"): STACKDOME_FLEET_N StackResources, even ones private (ports
// http 8080 and metrics 9090), odd ones public (a host, http public, the
// chart's error pages wired), created by eight clients at once, under the
// real Metacontroller from its production manifests and the chart at its
// defaults (two hooks replicas behind kube-proxy, resyncPeriodSeconds 60),
// from creation to every app Converged, then a quiet minute. It runs only
// with STACKDOME_FLEET_N set (`make e2e` skips it): it takes minutes.
//
// Where the pods run: the first STACKDOME_FLEET_NODE_N apps (50 unless
// set) as containers of the test image on the real node; the rest on the
// stand-in node (framework.StartStandinNode), which kube-scheduler places them on by
// the nodeSelector and toleration their spec carries (framework.StandinPlacement) and
// whose pods the harness reports Ready at the addresses of four real pods
// of the test image listening on both ports. Its taint keeps everything
// else off it, so the real apps need nothing of their own.
//
// STACKDOME_FLEET_MC=production (the default) runs Metacontroller as its
// manifests do (--client-go-qps=5, --client-go-burst=10, --workers=5);
// raised patches its StatefulSet with framework.MCRaisedFlags first.
// STACKDOME_FLEET_SECRETS=n then measures Metacontroller's Secret cache
// (measureSecretCache). STACKDOME_FLEET_PROFILE=<dir> takes both hooks
// pods' CPU profiles over the creation and over the quiet minute
// (NodeFixture.ProfileHooks).
//
// What it reports (t.Log, "fleet:" lines): the time to every Deployment and
// to every app Converged (and to the real node's apps Converged); the writes
// per private and per public app (status writes; children created,
// deleted, or their spec, labels or annotations changed, stackdome's
// mirrored EndpointSlices included); stackdome's syncs answered (by its own
// stackdome_hook_requests_total) and CPU per sync, both pods'
// process_cpu_seconds_total over those syncs, with the idle rate read
// before the apps; the RSS of both hooks pods and of Metacontroller (their
// process_resident_memory_bytes, Metacontroller's peak as sampled every
// 2 s); the real node's memory. It fails on a child written twice, and on
// any status or child write in the quiet minute after convergence (every
// app is resynced in it).
func TestFleet(t *testing.T) {
	f := framework.NewNodeFixture(t)
	n, _ := strconv.Atoi(os.Getenv("STACKDOME_FLEET_N"))
	if n == 0 {
		t.Skip("STACKDOME_FLEET_N is not set: the fleet benchmark runs with make bench-fleet")
	}
	onNode := 50
	if v := os.Getenv("STACKDOME_FLEET_NODE_N"); v != "" {
		onNode, _ = strconv.Atoi(v)
	}
	onNode = min(onNode, n)
	mode := os.Getenv("STACKDOME_FLEET_MC")
	if mode == "" {
		mode = "production"
	}
	if mode != "production" && mode != "raised" {
		t.Fatalf("STACKDOME_FLEET_MC=%q: production or raised", mode)
	}
	t.Logf("fleet: N=%d (%d on the real node, %d on the stand-in node), Metacontroller %s, load average %s",
		n, onNode, n-onNode, mode, loadAverage())
	progress := framework.NewProgress("fleet", framework.ProgressEvery, func(l string) { t.Log(l) })
	defer progress.Stop()

	f.RequireMetacontroller()
	if mode == "raised" {
		progress.Step("patching Metacontroller's StatefulSet with raised limits", nil)
		f.RaiseMetacontroller(framework.MCRaisedFlags)
	}
	mc := framework.PodIP(f.MetacontrollerPod())
	t.Logf("fleet: Metacontroller's args %s", f.MetacontrollerPodArgs())
	addServiceRange(t, n)

	progress.Step("installing the chart", nil)
	profiles := os.Getenv("STACKDOME_FLEET_PROFILE")
	rel := f.InstallChart(framework.ProfileArgs(profiles)...)
	hooks := rel.Pods(t, "controller")
	if len(hooks) != 2 {
		t.Fatalf("the chart runs %d hooks pods, want its default 2", len(hooks))
	}

	var standin *framework.StandinNode
	if n > onNode {
		progress.Step("starting the stand-in node", nil)
		standin = framework.NewNodeFixture(t).StartStandinNode(fleetBackends(t, 4))
	}
	ns := f.Namespace(nil)
	t.Cleanup(func() { f.DescribePods(ns) })
	ws := []*framework.Watcher{f.WatchPath("sr", framework.SRPath(ns, ""))}
	for kind, path := range framework.ChildKinds {
		ws = append(ws, f.WatchPath(kind, fmt.Sprintf(path, ns)))
	}
	// And stackdome's own EndpointSlices (a public app's mirrored
	// error-page Service), not kube-controller-manager's.
	ws = append(ws, f.WatchPath("slice", "/apis/discovery.k8s.io/v1/namespaces/"+ns+
		"/endpointslices?labelSelector=endpointslice.kubernetes.io%2Fmanaged-by%3Dstackdome.io"))

	// What the hooks pods take with nothing to answer (the kubelet's
	// probes, the metrics reads, the runtime), to tell from what the
	// syncs take.
	progress.Step(fmt.Sprintf("measuring stackdome's idle CPU for %s", fleetIdle), nil)
	idle0, idleFrom := f.ReadHooks(hooks), time.Now()
	select {
	case <-t.Context().Done():
		t.Fatal("the test ended")
	case <-time.After(fleetIdle):
	}
	idle := (f.ReadHooks(hooks).CPU() - idle0.CPU()) / time.Since(idleFrom).Seconds()
	t.Logf("fleet: stackdome idle: %.2f ms of CPU a second over both hooks pods", 1000*idle)

	mcPeak := f.SampleRSS(mc, framework.MCMetricsPort)
	before := f.ReadHooks(hooks)
	stopProfiling := f.ProfileHooks(profiles, mode+"-converge", hooks)
	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	var created atomic.Int64
	progress.Step("creating apps", func() string { return fmt.Sprintf("%d of %d created", created.Load(), n) })
	for range 8 {
		wg.Go(func() {
			for i := range work {
				name, spec := fleetApp(i)
				if i >= onNode {
					for k, v := range framework.StandinPlacement() {
						spec[k] = v
					}
				}
				f.CreateApp(ns, name, spec)
				created.Add(1)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	tCreated := time.Since(start)

	var tDeployments, tOnNode, tConverged time.Duration
	progress.Step("converging", func() string {
		deps, conv := fleetProgress(ws)
		return fmt.Sprintf("%d of %d apps Converged, %d of %d Deployments", len(conv), n, deps, n)
	})
	f.WaitFor(time.Duration(n)*3*time.Second+5*time.Minute, "every app Converged", func() (bool, error) {
		deps, conv := fleetProgress(ws)
		if tDeployments == 0 && deps >= n {
			tDeployments = time.Since(start)
		}
		if tOnNode == 0 && countBelow(conv, onNode) >= onNode {
			tOnNode = time.Since(start)
		}
		if len(conv) < n {
			return false, fmt.Errorf("%d of %d apps Converged, %d Deployments", len(conv), n, deps)
		}
		tConverged = time.Since(start)
		return true, nil
	})
	after := f.ReadHooks(hooks)
	stopProfiling()
	mcNow := f.FiguresOf(mc, framework.MCMetricsPort)
	t.Logf("fleet: N=%d created in %s; every Deployment after %s, every app Converged after %s (the real node's %d after %s), from the first create",
		n, tCreated.Round(100*time.Millisecond), tDeployments.Round(100*time.Millisecond), tConverged.Round(100*time.Millisecond),
		onNode, tOnNode.Round(100*time.Millisecond))
	syncs := after.Answered() - before.Answered()
	cpu := after.CPU() - before.CPU()
	t.Logf("fleet: stackdome answered %.0f syncs (%.1f per app; not 200: %s); CPU %.2f s over both hooks pods: %.2f ms per sync, %.2f net of idle",
		syncs, syncs/float64(n), after.NotOKSince(before), cpu, 1000*cpu/max(syncs, 1), 1000*(cpu-idle*tConverged.Seconds())/max(syncs, 1))
	standinPods := int64(0)
	if standin != nil {
		standinPods = standin.Ready()
	}
	t.Logf("fleet: RSS stackdome %s; Metacontroller %s (peak sampled %s); pods reported Ready by the stand-in node: %d",
		after.RSS(), framework.MiB(mcNow.RSS), framework.MiB(mcPeak.Value()), standinPods)
	t.Logf("fleet: memory of the real node with the fleet:\n%s", framework.Indent(framework.FormatMemory(f.Node.Memory())))

	all := fleetNodeWrites(framework.Merged(ws...), time.Time{})
	for _, shape := range []struct{ name, prefix string }{{"private", "api-"}, {"public", "web-"}} {
		m := (n + 1) / 2
		if shape.prefix == "web-" {
			m = n / 2
		}
		status, children, created := only(all.Status, shape.prefix), only(all.Children, shape.prefix), only(all.Created, shape.prefix)
		t.Logf("fleet: writes per %s app (%d): status %s; children %s (created %.2f, changed or deleted %.2f)", shape.name, m,
			spread(status, m), spread(children, m), float64(sum(created))/float64(m), float64(sum(children)-sum(created))/float64(m))
	}
	for _, child := range all.Twice() {
		t.Errorf("fleet: %s", child)
	}
	for child, states := range all.States {
		if len(states) > 1 {
			t.Logf("fleet: what each write of %s after the first changed:\n%s", child, framework.Indent(strings.Join(all.ChildDiffs(child), "\n")))
		}
	}

	progress.Step("the quiet minute", nil)
	quietFrom := time.Now()
	q0 := f.ReadHooks(hooks)
	stopProfiling = f.ProfileHooks(profiles, mode+"-quiet", hooks)
	select {
	case <-t.Context().Done():
		t.Fatal("the test ended")
	case <-time.After(65 * time.Second):
	}
	q1 := f.ReadHooks(hooks)
	stopProfiling()
	quiet := fleetNodeWrites(framework.Merged(ws...), quietFrom)
	qTook := time.Since(quietFrom)
	qSyncs, qCPU := q1.Answered()-q0.Answered(), q1.CPU()-q0.CPU()
	t.Logf("fleet: quiet minute (%s): %.0f syncs answered, %d status writes, %d child writes; CPU %.2f s over both hooks pods: %.2f ms per sync, %.2f net of idle",
		qTook.Round(time.Second), qSyncs, sum(quiet.Status), sum(quiet.Children), qCPU,
		1000*qCPU/max(qSyncs, 1), 1000*(qCPU-idle*qTook.Seconds())/max(qSyncs, 1))
	for _, w := range quiet.What {
		t.Errorf("fleet: quiet minute: %s", w)
	}

	if s, _ := strconv.Atoi(os.Getenv("STACKDOME_FLEET_SECRETS")); s > 0 {
		measureSecretCache(t, ns, mc, s, progress)
	}
}

// fleetIdle is how long the hooks pods' idle CPU is read before the apps
// are created.
const fleetIdle = 20 * time.Second

// fleetApp is app i: even ones private (http, metrics), odd ones public (a
// host, http public, metrics private), the test image listening on both.
func fleetApp(i int) (string, obj) {
	name := fmt.Sprintf("api-%04d", i)
	http := obj{"name": "http", "port": 8080}
	if i%2 == 1 {
		name = fmt.Sprintf("web-%04d", i)
		http["public"] = true
	}
	spec := framework.PortApp(framework.PortArgs("8080", "9090"), http, obj{"name": "metrics", "port": 9090})
	if i%2 == 1 {
		spec["host"] = name + ".fleet.example.com"
	}
	return name, spec
}

// fleetBackends runs n pods of the test image on the real node, in a
// namespace of their own (no app's NetworkPolicy selects them), listening
// on the ports every fleet app declares, and returns their addresses once
// they are Ready: the stand-in node's pods are reported at these.
func fleetBackends(t *testing.T, n int) []string {
	t.Helper()
	f := framework.NewNodeFixture(t)
	ns := f.Namespace(nil)
	for i := range n {
		f.MustCreate("/api/v1/namespaces/"+ns+"/pods", framework.SmokePod(fmt.Sprintf("backend-%d", i), framework.ImagePortApp, nil, framework.PortArgs("8080", "9090"), false))
	}
	var ips []string
	for i := range n {
		ips = append(ips, framework.PodIP(f.WaitPodReady(ns, fmt.Sprintf("backend-%d", i), 2*time.Minute)))
	}
	return ips
}

// fleetServiceRange is a Service range the fleet adds (a ServiceCIDR
// object, networking.k8s.io/v1): the suite's is half a /24, 126 Services,
// and a fleet of n apps makes 1.5 n. Nothing dials its addresses but
// kube-proxy's rules on the node.
const fleetServiceRange = "10.215.0.0/16"

// addServiceRange adds fleetServiceRange when n apps' Services would not
// fit the suite's range, and deletes it when the test ends (the API server
// finishes the deletion once no Service holds an address of it).
func addServiceRange(t *testing.T, n int) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	if n <= 50 {
		return
	}
	const path = "/apis/networking.k8s.io/v1/servicecidrs"
	if _, err := f.Kube.Create(t.Context(), path, obj{"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
		"metadata": obj{"name": "fleet"}, "spec": obj{"cidrs": []any{fleetServiceRange}}}); err != nil {
		t.Fatalf("adding the fleet's Service range: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := f.Kube.Do(ctx, "DELETE", path+"/fleet", "", nil, nil); err != nil && !framework.IsCode(err, 404) {
			t.Errorf("deleting the fleet's Service range: %v", err)
		}
	})
}

// countBelow is how many of the apps named have an index below n.
func countBelow(names map[string]bool, n int) int {
	c := 0
	for name := range names {
		if i, err := strconv.Atoi(name[strings.IndexByte(name, '-')+1:]); err == nil && i < n {
			c++
		}
	}
	return c
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return err.Error()
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// measureSecretCache puts n Secrets of 100 KiB in a namespace of their
// own, then creates the first StackResource with a secretRef (to a small
// Secret of ns), and reads Metacontroller's RSS (its metrics at mcIP)
// before and after its related Secret informer has listed them.
func measureSecretCache(t *testing.T, ns, mcIP string, n int, progress *framework.Progress) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	ctx := t.Context()
	other := f.Namespace(nil)
	blob := strings.Repeat("x", 100<<10)
	work := make(chan int)
	var wg sync.WaitGroup
	var created atomic.Int64
	progress.Step("Secret cache: creating Secrets of 100 KiB", func() string { return fmt.Sprintf("%d of %d", created.Load(), n) })
	for range 4 {
		wg.Go(func() {
			for i := range work {
				if _, err := f.Kube.Create(ctx, "/api/v1/namespaces/"+other+"/secrets", obj{"apiVersion": "v1", "kind": "Secret",
					"metadata": obj{"name": fmt.Sprintf("release-v%d", i)}, "stringData": obj{"release": blob}}); err != nil {
					t.Errorf("secret %d: %v", i, err)
				}
				created.Add(1)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	progress.Step("Secret cache: waiting for an app using a Secret to converge", nil)
	before := f.FiguresOf(mcIP, framework.MCMetricsPort)
	f.MustCreate("/api/v1/namespaces/"+ns+"/secrets", obj{"apiVersion": "v1", "kind": "Secret",
		"metadata": obj{"name": "db"}, "stringData": obj{"password": "x"}})
	_, spec := fleetApp(0)
	spec["envFrom"] = []any{obj{"secretRef": obj{"name": "db"}}}
	start := time.Now()
	f.CreateApp(ns, "uses-secret", spec)
	f.WaitCondition(3*time.Minute, ns, "uses-secret", "Converged", "True", "Serving")
	converged := time.Since(start)
	// The informer has listed the Secrets by the time the app converged;
	// its memory is read 20 s later, as before.
	select {
	case <-ctx.Done():
		t.Fatal("the test ended")
	case <-time.After(20 * time.Second):
	}
	after := f.FiguresOf(mcIP, framework.MCMetricsPort)
	size := float64(n) * 100 * 1024
	t.Logf("fleet: Secret cache: %d Secrets of 100 KiB (%s) in %s; Metacontroller RSS %s before the first secretRef, %s after (Converged after %s): +%s, %.1f× the Secrets' bytes",
		n, framework.MiB(size), other, framework.MiB(before.RSS), framework.MiB(after.RSS), converged.Round(100*time.Millisecond),
		framework.MiB(after.RSS-before.RSS), (after.RSS-before.RSS)/size)
}

// fleetProgress counts, from the watches, the Deployments created, and
// names the apps whose last seen status says Converged=True.
func fleetProgress(ws []*framework.Watcher) (deployments int, converged map[string]bool) {
	deps, conv := map[string]bool{}, map[string]bool{}
	for _, e := range framework.Merged(ws...) {
		name := fmt.Sprint(framework.Dig(e.Obj, "metadata", "name"))
		switch e.Kind {
		case "deployment":
			deps[name] = true
		case "sr":
			c := framework.SRCondition(e.Obj, "Converged")
			if c != nil && c["status"] == "True" {
				conv[name] = true
			} else {
				delete(conv, name)
			}
		}
	}
	return len(deps), conv
}

// fleetNodeWrites reads the writes received from since on (every write if
// since is zero): a StackResource's status changed, a child created,
// deleted, or its spec (an EndpointSlice's endpoints and ports), labels or
// annotations changed. Events before since are read to
// know each object's state.
func fleetNodeWrites(events []framework.WatchEvent, since time.Time) framework.AppWrites {
	return framework.NodeWrites(events, func(e framework.WatchEvent) bool { return !e.At.Before(since) })
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
// since only tells the state; a child created then changed is written
// twice, once created and deleted too.
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
	events := []framework.WatchEvent{
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
	if got := [2]int{sum(all.Status), sum(all.Children)}; got != [2]int{2, 4} {
		t.Errorf("every write: status %d, children %d, want 2 and 4\n%v", got[0], got[1], all.What)
	}
	later := fleetNodeWrites(events, at(5))
	if got := [2]int{sum(later.Status), sum(later.Children)}; got != [2]int{1, 2} {
		t.Errorf("since 5: status %d, children %d, want 1 and 2\n%v", got[0], got[1], later.What)
	}
	if diff := cmp.Diff([]string{"deployment web written 2 times", "service web written 2 times"}, all.Twice()); diff != "" {
		t.Errorf("children written twice (-want +got):\n%s", diff)
	}
	if got := sum(all.Created); got != 2 {
		t.Errorf("children created: %d, want 2", got)
	}
	// What the second writes changed: the replicas, and the deletion.
	deployment, service := all.ChildDiffs("deployment web"), all.ChildDiffs("service web")
	if len(deployment) != 1 || !strings.Contains(deployment[0], `"replicas": float64(1)`) || !strings.Contains(deployment[0], `"replicas": float64(2)`) {
		t.Errorf("the Deployment's second write, want replicas 1 → 2:\n%s", strings.Join(deployment, "\n"))
	}
	if len(service) != 1 || !strings.Contains(service[0], `string("deleted")`) {
		t.Errorf("the Service's second write, want its deletion:\n%s", strings.Join(service, "\n"))
	}
}
