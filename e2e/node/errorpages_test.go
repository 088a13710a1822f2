//go:build e2e

package node

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestErrorPagesOnRealNode proves the branded error pages of one app
// through the chart's Traefik, and what keeps them when stackdome's own
// pods change or go, under the real Metacontroller running the release's
// CompositeController (e2e/'s TestErrorPagesThroughTraefik, moved). The
// app (portapp, public on Traefik's web entry point) answers 200 at /, and
// /status/<code> with that code and a body of its own. Read from a watch,
// from before the app exists, of its StackResource, every kind of child
// stackdome makes and stackdome's own EndpointSlices:
//
//   - installed: ErrorPages True Wired; the app's children, by owner, are
//     exactly its Service, Deployment, IngressRoute, errors Middleware,
//     <app>-error-pages Service and EndpointSlice; that slice lists the
//     chart error-page Service's ClusterIP; through Traefik the app's 503
//     is stackdome's HTML page for a browser, showing the X-Request-Id the
//     client sent, its 502 the JSON envelope for axios, its 500 the
//     envelope to a client sending no Accept, each status kept; its 404 is
//     its own (the Middleware covers 500-599);
//   - a stackdome rollout (helm upgrade changing the pod template, every
//     hooks and page pod replaced): the error-page Service is not written
//     (its resourceVersion unchanged: Metacontroller resyncs every
//     StackResource when it is), and nothing is written to the app while
//     the new hooks pods answer its syncs;
//   - the error-page Service deleted by hand: the next sync says ErrorPages
//     False ErrorServiceNotSeen and no child is written (every child kept,
//     the slice keeps the ClusterIP); the app answers 200 and its 5xx keep
//     their status. No Service holds that address now: kube-proxy has no
//     rule for it, Traefik's errors Middleware dials it until Traefik's
//     dial timeout (30 s at the chart's defaults), and the 5xx answer then;
//   - the Service made again by hand at the same address: ErrorPages True
//     Wired again, no child written;
//   - both of the chart's Deployments scaled to 0: nothing is written, the
//     app answers 200, its 5xx keep their status and its 503's body does
//     not pass (kube-proxy refuses the Service without endpoints at once);
//   - the release uninstalled (its CompositeController gone with it):
//     nothing is written, the app's answers are as before (the 5xx after
//     the dial timeout again: uninstall deleted the Service);
//   - another release installed with errorPages.enabled=false: no
//     ErrorPages condition, no Middleware, error-page Service or
//     EndpointSlice among the children, the app's 503 passes as it sent it.
//
// After each phase, every single write of it (watchRoutes, replayed in the
// order etcd stored them) left each route that had been routable routable.
//
// e2e/'s stand-in test also made the page and hooks pods unready before
// removing them; a real kubelet reports readiness from the probe, which
// cannot be failed without breaking the pod, and the Service deleted by
// hand is the stronger case of a page Service that cannot be read.
//
// compositeController.resyncPeriodSeconds=2, not the chart's 60: each
// window in which nothing may be written lasts three resync periods (and,
// while hooks pods run, two syncs answered), which at one a minute would
// last minutes.
//
// It bites: a chart whose error-page Service changes with the pod
// template (podAnnotations on it too) fails the rollout step naming the
// resourceVersions; a sync that forgets the last known address when the
// Service is not seen fails the Service-deleted step listing the children
// written.
func TestErrorPagesOnRealNode(t *testing.T) {
	f := framework.NewNodeFixture(t)
	const resync = 2 * time.Second
	values := []string{"config.entryPoints={web}", "compositeController.resyncPeriodSeconds=2"}
	rel := f.InstallChart(values...)
	ns := f.Namespace(nil)
	t.Cleanup(func() { f.DescribePods(ns) })
	ws := f.WatchAppWrites(ns)
	rw := f.WatchRoutes(ns)
	// routesStay: every write of the phase, from the end of the one
	// before, left each route that had been routable routable.
	var routesFrom uint64
	routesStay := func(phase string) {
		t.Helper()
		next := rw.Mark()
		rw.RequireRoutesStay(t, routesFrom, phase)
		routesFrom = next
	}

	const name, host, requestID = "checkout", "shop.node.test", "node-req-7f3a"
	spec := framework.PortApp(framework.PortArgs("8080"), obj{"name": "http", "port": 8080, "public": true})
	spec["host"] = host
	spec["replicas"] = 1
	f.CreateApp(ns, name, spec)

	// --- Installed.
	f.WaitCondition(3*time.Minute, ns, name, "Available", "True", "Serving")
	f.WaitCondition(time.Minute, ns, name, "ErrorPages", "True", "Wired")
	f.QuietFor(ws[0], 3*resync, time.Minute)
	wired := []string{"Deployment/" + name, "EndpointSlice/" + name + "-error-pages", "IngressRoute/" + name,
		"Middleware/" + name + "-errors", "Service/" + name, "Service/" + name + "-error-pages"}
	if diff := cmp.Diff(wired, f.OwnedChildren(ns, name)); diff != "" {
		t.Errorf("installed: the app's children (-want +got):\n%s", diff)
	}
	errorSvc := "/api/v1/namespaces/" + rel.NS + "/services/" + rel.Name + "-error-pages"
	svc, err := f.Kube.Get(t.Context(), errorSvc)
	if err != nil {
		t.Fatal(err)
	}
	clusterIP := []string{fmt.Sprint(framework.Dig(svc, "spec", "clusterIP"))}
	if diff := cmp.Diff(clusterIP, f.SliceAddresses(ns, name+"-error-pages")); diff != "" {
		t.Errorf("installed: the mirrored EndpointSlice's addresses, want the error-page Service's ClusterIP (-want +got):\n%s", diff)
	}
	appOK := answerCheck{"the app's 200", "/", framework.BrowserAccept, "", framework.HasBody("port 8080\n")}
	keeps5xx := []answerCheck{
		appOK,
		{"the app's 503 keeps its status", "/status/503", framework.BrowserAccept, "", hasStatus(503)},
		{"the app's 502 keeps its status", "/status/502", framework.AxiosAccept, "", hasStatus(502)},
	}
	requireAnswers(t, "installed", host, untilApplied, []answerCheck{
		appOK,
		{"503 → the HTML page for a browser, request id shown", "/status/503", framework.BrowserAccept, requestID,
			framework.IsPage(503, "503 Service Unavailable", requestID)},
		{"502 → the JSON envelope for axios", "/status/502", framework.AxiosAccept, "", framework.IsEnvelope(502)},
		{"500 → the JSON envelope without Accept", "/status/500", "", "", framework.IsEnvelope(500)},
		{"the app's own 404 untouched", "/status/404", framework.BrowserAccept, "",
			framework.All(hasStatus(404), framework.HasBody("port 8080 status 404"))},
	})
	routesStay("installed")
	mark := f.ListRV(ns)

	// --- A stackdome rollout: every hooks and page pod replaced; the
	// error-page Service, the one object the app's syncs relate to, stays
	// as it was.
	old := map[string]bool{}
	for _, p := range append(rel.Pods(t, "controller"), rel.Pods(t, "error-pages")...) {
		old[framework.PodName(p)] = true
	}
	if out, err := f.Helm(t.Context(), "upgrade", rel.Name, filepath.Join(f.Root, "chart"), "--namespace", rel.NS, "--reuse-values",
		"--wait", "--timeout", "3m", "--set-string", "podAnnotations.e2e-rollout=2"); err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	hooks := rel.ReadyPods(t, "controller")
	for _, p := range append(append([]obj(nil), hooks...), rel.ReadyPods(t, "error-pages")...) {
		if old[framework.PodName(p)] {
			t.Fatalf("rollout: pod %s was not replaced", framework.PodName(p))
		}
	}
	after, err := f.Kube.Get(t.Context(), errorSvc)
	if err != nil {
		t.Fatal(err)
	}
	if before, now := framework.ResourceVersion(svc), framework.ResourceVersion(after); before != now {
		t.Errorf("rollout: the error-page Service was written (resourceVersion %d → %d): Metacontroller resyncs every StackResource for it", before, now)
	}
	mark = f.RequireUnwritten("rollout", ws, mark, resync, hooks)
	routesStay("rollout")

	// --- The error-page Service deleted by hand: Metacontroller resyncs
	// the app for it; the last known address stays, and so does every
	// child. No Service holds that address now: Traefik's errors
	// Middleware dials it until its dial timeout (the chart's Traefik at
	// its defaults: 30 s), and the app's 5xx answer then, status kept.
	if err := f.Kube.Do(t.Context(), "DELETE", errorSvc, "", nil, nil); err != nil {
		t.Fatal(err)
	}
	sr := f.WaitCondition(time.Minute, ns, name, "ErrorPages", "False", "ErrorServiceNotSeen")
	framework.RequireChildrenKept(t, "Service deleted", ws, mark, framework.ResourceVersion(sr))
	if diff := cmp.Diff(wired, f.OwnedChildren(ns, name)); diff != "" {
		t.Errorf("Service deleted: the app's children (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(clusterIP, f.SliceAddresses(ns, name+"-error-pages")); diff != "" {
		t.Errorf("Service deleted: the mirrored EndpointSlice's addresses, want the ClusterIP kept (-want +got):\n%s", diff)
	}
	mark = f.RequireUnwritten("Service deleted, once said", ws, framework.ResourceVersion(sr), resync, hooks)
	requireAnswers(t, "Service deleted", host, pastDialTimeout, keeps5xx)
	routesStay("Service deleted")

	// --- The Service made again by hand at the same address (free again
	// once the deletion is through): the next sync sees it, ErrorPages is
	// Wired again, and the children, which never lost the address, are
	// not written.
	again := obj{"apiVersion": "v1", "kind": "Service",
		"metadata": obj{"name": rel.Name + "-error-pages", "labels": framework.Dig(svc, "metadata", "labels"),
			"annotations": framework.Dig(svc, "metadata", "annotations")},
		"spec": obj{"type": "ClusterIP", "clusterIP": clusterIP[0],
			"selector": framework.Dig(svc, "spec", "selector"), "ports": framework.Dig(svc, "spec", "ports")}}
	f.WaitFor(30*time.Second, "the error-page Service made again at "+clusterIP[0], func() (bool, error) {
		_, err := f.Kube.Create(t.Context(), "/api/v1/namespaces/"+rel.NS+"/services", again)
		return err == nil, err
	})
	sr = f.WaitCondition(time.Minute, ns, name, "ErrorPages", "True", "Wired")
	framework.RequireChildrenKept(t, "Service made again", ws, mark, framework.ResourceVersion(sr))
	mark = f.RequireUnwritten("Service made again, once said", ws, framework.ResourceVersion(sr), resync, hooks)
	routesStay("Service made again")

	// --- Both Deployments scaled to 0: their pods stopped, no sync is
	// answered.
	for _, d := range []string{rel.Name, rel.Name + "-error-pages"} {
		if _, err := f.Kube.MergePatch(t.Context(), "/apis/apps/v1/namespaces/"+rel.NS+"/deployments/"+d, obj{"spec": obj{"replicas": 0}}); err != nil {
			t.Fatal(err)
		}
	}
	f.WaitFor(2*time.Minute, "the release's pods gone", func() (bool, error) {
		n := len(rel.Pods(t, "controller")) + len(rel.Pods(t, "error-pages"))
		return n == 0, fmt.Errorf("%d pods left", n)
	})
	mark = f.RequireUnwritten("scaled to 0", ws, mark, resync, nil)
	requireAnswers(t, "scaled to 0", host, once, append(keeps5xx,
		answerCheck{"the app's 503 body does not pass", "/status/503", framework.BrowserAccept, "", lacksBody("status 503")}))
	routesStay("scaled to 0")

	// --- Uninstalled: the CompositeController goes with the release, so
	// nothing syncs the app; every child stays as it is.
	if out, err := f.Helm(t.Context(), "uninstall", rel.Name, "--namespace", rel.NS, "--wait"); err != nil {
		t.Fatalf("helm uninstall: %v\n%s", err, out)
	}
	f.RequireUnwritten("uninstalled", ws, mark, resync, nil)
	requireAnswers(t, "uninstalled", host, pastDialTimeout, keeps5xx)
	routesStay("uninstalled")

	// --- A release with error pages disabled: no Middleware at all.
	f.InstallChart(append(values, "errorPages.enabled=false")...)
	f.WaitFor(time.Minute, "disabled: no ErrorPages condition", func() (bool, error) {
		sr, err := f.Kube.Get(t.Context(), framework.SRPath(ns, name))
		if err != nil {
			return false, err
		}
		c := framework.SRCondition(sr, "ErrorPages")
		return c == nil, fmt.Errorf("ErrorPages %v", c)
	})
	unwired := []string{"Deployment/" + name, "IngressRoute/" + name, "Service/" + name}
	f.WaitFor(time.Minute, "disabled: no Middleware, error-page Service or EndpointSlice", func() (bool, error) {
		got := f.OwnedChildren(ns, name)
		return cmp.Equal(unwired, got), fmt.Errorf("children %v", got)
	})
	requireAnswers(t, "disabled", host, untilApplied, []answerCheck{
		appOK,
		{"the app's 503 passes as it sent it", "/status/503", framework.BrowserAccept, "",
			framework.All(hasStatus(503), framework.HasBody("port 8080 status 503"))},
	})
	routesStay("disabled")
}

// answerCheck is one request to the app through Traefik and what its
// answer must be.
type answerCheck struct {
	name, path, accept, requestID string
	want                          framework.Check
}

// answerWait is how long requireAnswers waits for answers.
type answerWait struct {
	request time.Duration // each request's timeout
	retry   time.Duration // asking again until every answer is as wanted; 0: once
}

var (
	// once: the answers are what they were; one try each.
	once = answerWait{request: 10 * time.Second}
	// untilApplied: Traefik applies a change of the routes within a
	// minute.
	untilApplied = answerWait{request: 10 * time.Second, retry: time.Minute}
	// pastDialTimeout: an errors Middleware whose Service address nothing
	// answers waits Traefik's dial timeout (30 s by default) before the
	// answer.
	pastDialTimeout = answerWait{request: 45 * time.Second}
)

// requireAnswers sends each check's request for host, all at once, to
// Traefik's web entry point from the node, and fails t, naming phase and
// how long the answer took, for each answer that is not as wanted,
// asking again as wait says. It logs the slowest answer's time.
func requireAnswers(t *testing.T, phase, host string, wait answerWait, checks []answerCheck) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	url := "http://" + net.JoinHostPort(f.TraefikIP(), "8000")
	var slowest time.Duration
	failed := func() []error {
		errs := make([]error, len(checks))
		took := make([]time.Duration, len(checks))
		var wg sync.WaitGroup
		for i, c := range checks {
			wg.Go(func() {
				start := time.Now()
				a, err := f.FetchWithin(t.Context(), wait.request, url+c.path, host, c.accept, c.requestID)
				took[i] = time.Since(start)
				if err == nil {
					err = c.want(a)
				}
				if err != nil {
					errs[i] = fmt.Errorf("%s: %s (after %s): %w", phase, c.name, took[i].Round(100*time.Millisecond), err)
				}
			})
		}
		wg.Wait()
		slowest = slices.Max(took)
		return slices.DeleteFunc(errs, func(err error) bool { return err == nil })
	}
	errs := failed()
	for deadline := time.Now().Add(wait.retry); len(errs) > 0 && time.Now().Before(deadline); errs = failed() {
		time.Sleep(500 * time.Millisecond) // polling Traefik's answers, with a deadline
	}
	for _, err := range errs {
		t.Error(err)
	}
	t.Logf("%s: %d answers through Traefik, the slowest in %s", phase, len(checks), slowest.Round(100*time.Millisecond))
}

// hasStatus requires the status code alone.
func hasStatus(code int) framework.Check {
	return func(a framework.Answer) error {
		if a.Status != code {
			return fmt.Errorf("status %d, want %d: %.200q", a.Status, code, a.Body)
		}
		return nil
	}
}

// lacksBody requires a body without fragment.
func lacksBody(fragment string) framework.Check {
	return func(a framework.Answer) error {
		if strings.Contains(a.Body, fragment) {
			return fmt.Errorf("the body has %q: %.200q", fragment, a.Body)
		}
		return nil
	}
}
