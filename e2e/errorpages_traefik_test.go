//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestErrorPagesThroughTraefik proves the branded error pages on a real
// Traefik with its default provider flags, under the real Metacontroller
// running the release's CompositeController, the chart installed with helm,
// and stackdome's real page server (the release's pod on the test host,
// answering hooks and pages):
//
//   - installed: the app 200; its 503 → the HTML page for a browser, its 502
//     → the JSON envelope for axios, status kept, X-Request-Id shown; its own
//     404 untouched; an unknown host → the branded 404 of the chart's
//     catch-all;
//   - a stackdome rollout: the error-page Service is not written, so no
//     StackResource is resynced;
//   - the error-page Service deleted by hand while the release syncs: its
//     last known address stays in the mirrored slice, the route stays,
//     status says ErrorServiceNotSeen;
//   - the page endpoints made unready, then removed and the page server
//     stopped, then the chart uninstalled: with no ready hook endpoint no
//     sync reaches stackdome (the release's pod answers both), nothing is
//     written, the app still 200, its 5xx keeps its status;
//   - a release with error pages disabled (--error-service-name=): no
//     Middleware, the app 200.
//
// After each step every router Traefik built is enabled, and on every single
// write (a watch of the app's namespace) every route is routable. The
// backends live on the test host (testhost_test.go); the per-app
// EndpointSlice carries the chart error-page Service's ClusterIP, which the
// test host answers on, standing in for the service proxy (kube-proxy).
func TestErrorPagesThroughTraefik(t *testing.T) {
	requireStackResourceCRD(t)
	host := requireHost(t)
	ctx := t.Context()
	k := suite.cluster.Kube
	tr := installTraefik(t)

	const (
		appName   = "checkout"
		appHost   = "shop.e2e.test"
		requestID = "e2e-req-7f3a"
	)
	rel := newPagesRelease(t, "stackdome")
	appNS := newNamespace(t)
	w := watchNamespace(t, appNS)
	guest := host.GuestIP.String()

	// The app: answers 200 on /, its own 404 on /missing, and the status
	// /status/<code> names with a body of its own.
	appPort, _ := host.Serve(t, guest, 0, appHandler)

	rel.install(t, "", "config.entryPoints={web}")
	release, releaseNS, errorSvc, clusterIP := rel.name, rel.namespace, rel.errorService, rel.clusterIP
	svc, err := k.Get(ctx, "/api/v1/namespaces/"+releaseNS+"/services/"+errorSvc)
	if err != nil {
		t.Fatal(err)
	}
	mark, since := w.mark(), time.Now()
	if _, err := k.Create(ctx, "/apis/stackdome.io/v1alpha1/namespaces/"+appNS+"/stackresources", obj{
		"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
		"metadata": obj{"name": appName},
		"spec": obj{
			"type": "Service", "image": "example.invalid/checkout:1", "replicas": 1, "host": appHost,
			"ports": []any{obj{"name": "http", "port": appPort, "public": true}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	middleware := appNS + "-" + appName + "-errors@kubernetescrd"
	appOK := check{name: "app answers 200", host: appHost, path: "/", accept: browserAccept, status: 200, want: isBody("app ok")}
	keeps5xx := []check{
		appOK,
		{name: "app's 503 keeps its status", host: appHost, path: "/status/503", accept: browserAccept, status: 503},
		{name: "app's 502 keeps its status", host: appHost, path: "/status/502", accept: axiosAccept, status: 502},
	}
	// settlePhase waits for the real Metacontroller to leave the app alone
	// after the phase's step; every write of the phase keeps every route
	// routable.
	settlePhase := func(phase string) obj {
		t.Helper()
		ex, _ := settleRoutable(t, w, mark, since, appName, phase)
		mark, since = w.mark(), time.Now()
		return ex.Response
	}
	// nothingWritten: no child and no status written since the phase began
	// (after a pause for a sync that might come).
	nothingWritten := func(phase string) {
		t.Helper()
		time.Sleep(3 * time.Second)
		if ws := w.writesOf(mark, appName); !ws.none() {
			t.Errorf("%s: written: %s", phase, ws)
		}
		for _, b := range w.replay(mark, servedRoutesStay(appNS)) {
			t.Errorf("%s: a route would be disabled %s", phase, b)
		}
		mark, since = w.mark(), time.Now()
	}

	// --- Installed.
	res := settlePhase("installed")
	if evs, err := suite.cluster.Kube.List(ctx, "/api/v1/events", ""); err == nil {
		for _, e := range evs {
			if framework.Dig(e, "involvedObject", "kind") == "CompositeController" && framework.Dig(e, "involvedObject", "name") == rel.compositeController() {
				t.Logf("Metacontroller's event on the release's CompositeController: %v %v: %v", framework.Dig(e, "type"), framework.Dig(e, "reason"), framework.Dig(e, "message"))
			}
		}
	}
	requirePagesCondition(t, "installed", res, "True", "Wired")
	wantWired := setOf("Service/"+appName, "Deployment/"+appName, "IngressRoute/"+appName,
		"Middleware/"+appName+"-errors", "Service/"+appName+"-error-pages", "EndpointSlice/"+appName+"-error-pages")
	if got := childNames(res); !equalSets(got, wantWired) {
		t.Errorf("installed: children %v, want %v", keys(got), keys(wantWired))
	}
	if got := sliceAddresses(res, appName+"-error-pages"); len(got) != 1 || got[0] != clusterIP.String() {
		t.Errorf("installed: the mirrored EndpointSlice lists %v, want the error-page Service's ClusterIP %s", got, clusterIP)
	}
	pods := waitPods(t, appNS, "app.kubernetes.io/instance="+appName, 1)
	suite.kubelet.RunPod(t, appNS, pods[0], guest)
	waitReadyAddress(t, appNS, appName, guest)
	waitRouters(t, tr, "installed: the app's router with its errors Middleware", appRouterWith(appHost, middleware))
	runChecks(t, tr, "installed", []check{
		appOK,
		{name: "503 → HTML page for a browser, request id shown", host: appHost, path: "/status/503", accept: browserAccept, requestID: requestID, status: 503, want: isPage(503, "503 Service Unavailable", requestID)},
		{name: "502 → JSON envelope for axios", host: appHost, path: "/status/502", accept: axiosAccept, status: 502, want: isEnvelope(502)},
		{name: "500 → JSON envelope without Accept", host: appHost, path: "/status/500", status: 500, want: isEnvelope(500)},
		{name: "app's own 404 untouched", host: appHost, path: "/missing", accept: browserAccept, status: 404, want: isBody("app's own 404")},
		{name: "unknown host → branded 404 (catch-all)", host: "nobody.e2e.test", path: "/anything", accept: browserAccept, status: 404, want: isPage(404, "404 Not Found", "")},
	})
	mark, since = w.mark(), time.Now()

	// --- A stackdome rollout: new pods, new EndpointSlice contents; the
	// error-page Service (the only related object) is not written, so
	// Metacontroller resyncs no StackResource for it.
	before := framework.Dig(svc, "metadata", "resourceVersion")
	out, err := helm(ctx, "upgrade", release, suiteChart(), "--namespace", releaseNS, "--reuse-values", "--set-string", "podAnnotations.e2e-rollout=2")
	if err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	after, err := k.Get(ctx, "/api/v1/namespaces/"+releaseNS+"/services/"+errorSvc)
	if err != nil {
		t.Fatal(err)
	}
	if rv := framework.Dig(after, "metadata", "resourceVersion"); rv != before {
		t.Errorf("rollout: the error-page Service was written (resourceVersion %v → %v): every StackResource would be resynced", before, rv)
	}
	nothingWritten("rollout")

	// --- The error-page Service deleted by hand while the release syncs:
	// the related object is gone (Metacontroller resyncs the app for it);
	// the last known address stays, the route stays.
	if err := k.Do(ctx, "DELETE", "/api/v1/namespaces/"+releaseNS+"/services/"+errorSvc, "", nil, nil); err != nil {
		t.Fatal(err)
	}
	ex := syncAnswer(t, appNS, appName, since, 90*time.Second, "Service deleted: a sync saying ErrorServiceNotSeen", func(resp obj) error {
		if c := condition(resp, "ErrorPages"); c == nil || c["reason"] != "ErrorServiceNotSeen" {
			return fmt.Errorf("ErrorPages %v", c)
		}
		return nil
	})
	res = ex.Response
	requirePagesCondition(t, "Service deleted", res, "False", "ErrorServiceNotSeen")
	if got := childNames(res); !equalSets(got, wantWired) {
		t.Errorf("Service deleted: children %v, want %v kept", keys(got), keys(wantWired))
	}
	if got := sliceAddresses(res, appName+"-error-pages"); len(got) != 1 || got[0] != clusterIP.String() {
		t.Errorf("Service deleted: the mirrored EndpointSlice lists %v, want %s kept", got, clusterIP)
	}
	settlePhase("Service deleted")
	waitRouters(t, tr, "Service deleted: the app's router keeps its Middleware", appRouterWith(appHost, middleware))
	runChecks(t, tr, "Service deleted", keeps5xx)

	// --- Page endpoints unready: kube-controller-manager marks them so in
	// the chart's EndpointSlice. The hooks' pod is made unready with the
	// pages', so nothing syncs; the mirrored slice keeps its address.
	for _, p := range listPods(t, releaseNS, "app.kubernetes.io/instance="+release) {
		suite.kubelet.SetPodReady(t, releaseNS, framework.Dig(p, "metadata", "name").(string), false)
	}
	waitNoReadyAddress(t, releaseNS, rel.name)
	nothingWritten("unready")
	waitRouters(t, tr, "unready: the app's router keeps its Middleware", appRouterWith(appHost, middleware))
	runChecks(t, tr, "unready", keeps5xx)

	// --- Page endpoints removed, page server stopped: nothing answers
	// pages (connection refused on the ClusterIP, as a service proxy
	// without endpoints answers).
	// Both Deployments scaled to 0: their ReplicaSets delete the pods,
	// whose containers the kubelet stops (preStop, SIGTERM).
	for _, d := range []string{release, errorSvc} {
		if _, err := k.MergePatch(ctx, "/apis/apps/v1/namespaces/"+releaseNS+"/deployments/"+d, obj{"spec": obj{"replicas": 0}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := framework.WaitUntil(90*time.Second, 200*time.Millisecond, "the release's pods gone", func() (bool, error) {
		pods := listPods(t, releaseNS, "app.kubernetes.io/instance="+release)
		return len(pods) == 0, fmt.Errorf("%d pods left", len(pods))
	}); err != nil {
		t.Fatal(err)
	}
	nothingWritten("removed")
	waitRouters(t, tr, "removed: the app's router keeps its Middleware", appRouterWith(appHost, middleware))
	runChecks(t, tr, "removed", append(keeps5xx,
		check{name: "app's 503 body does not pass", host: appHost, path: "/status/503", accept: browserAccept, status: 503, want: notBody("app says 503")}))

	// --- Uninstalled: the release's CompositeController is gone with it, so
	// Metacontroller syncs nothing more; every child stays as it is and the
	// route keeps answering.
	rel.uninstall(t)
	nothingWritten("uninstalled")
	waitRouters(t, tr, "uninstalled: the app's router keeps its Middleware", appRouterWith(appHost, middleware))
	runChecks(t, tr, "uninstalled, nothing syncs", keeps5xx)

	// --- A release with error pages disabled: no Middleware at all.
	off := newPagesRelease(t, "stackdome")
	off.install(t, "", "config.entryPoints={web}", "errorPages.enabled=false")
	res = settlePhase("disabled")
	requirePagesCondition(t, "disabled", res, "", "")
	if got := childNames(res); !equalSets(got, setOf("Service/"+appName, "Deployment/"+appName, "IngressRoute/"+appName)) {
		t.Errorf("disabled: children %v, want no Middleware, no error-page Service or EndpointSlice", keys(got))
	}
	waitRouters(t, tr, "disabled: the app's router without middleware", appRouterWith(appHost))
	runChecks(t, tr, "disabled", []check{
		appOK,
		{name: "app's 503 passes as the app sent it", host: appHost, path: "/status/503", accept: browserAccept, status: 503, want: isBody("app says 503")},
	})
}

// servedRoutesStay is the replay check of routable for the routes that
// have been routable since they were created: a new resource's
// IngressRoute is created referring to the Middlewares of the same answer
// (hooks/internal/children/wiring.go), and until they exist Traefik leaves
// it out, which disables nothing that served. Once routable, a route must
// stay so after every write; one deleted and made again is new again.
func servedRoutesStay(ns string) func(mirror) error {
	served := map[string]bool{}
	return func(m mirror) error {
		var errs []error
		for name := range served {
			if _, ok := m["ingressroutes"][name]; !ok {
				delete(served, name)
			}
		}
		for name, ir := range m["ingressroutes"] {
			err := routeRoutable(m, ns, ir)
			switch {
			case err == nil:
				served[name] = true
			case served[name]:
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
}

// routable is what Traefik with its default provider flags needs to route
// every IngressRoute of ns (traefik/traefik@v3.7.13 pkg/provider/kubernetes/crd/kubernetes.go
// and pkg/server/middleware/middlewares.go), judged on
// m, the namespace's objects as a watch saw them after one write: each
// middleware a route uses exists in ns; an errors Middleware's service is in
// ns and exists; and that Service has an EndpointSlice with a serving
// endpoint on a port of the Service's port name. Any of these missing, for
// as long as Traefik looks, disables the route.
func routable(m mirror, ns string) error {
	var errs []error
	for _, ir := range m["ingressroutes"] {
		errs = append(errs, routeRoutable(m, ns, ir))
	}
	return errors.Join(errs...)
}

// routeRoutable is routable for the one IngressRoute ir.
func routeRoutable(m mirror, ns string, ir obj) error {
	{
		rs, _ := framework.Dig(ir, "spec", "routes").([]any)
		for _, r := range rs {
			mws, _ := framework.Dig(r, "middlewares").([]any)
			for _, mwRef := range mws {
				name, _ := framework.Dig(mwRef, "name").(string)
				if mns, _ := framework.Dig(mwRef, "namespace").(string); mns != "" && mns != ns {
					return fmt.Errorf("IngressRoute %v uses Middleware %s/%s of another namespace", framework.Dig(ir, "metadata", "name"), mns, name)
				}
				mw, ok := m["middlewares"][name]
				if !ok {
					return fmt.Errorf("IngressRoute %v uses Middleware %s, which does not exist", framework.Dig(ir, "metadata", "name"), name)
				}
				svc, _ := framework.Dig(mw, "spec", "errors", "service").(map[string]any)
				if svc == nil {
					continue
				}
				if sns, _ := svc["namespace"].(string); sns != "" && sns != ns {
					return fmt.Errorf("Middleware %s points at Service %s/%v of another namespace", name, sns, svc["name"])
				}
				if err := servable(m, fmt.Sprint(svc["name"])); err != nil {
					return fmt.Errorf("Middleware %s: %w", name, err)
				}
			}
		}
	}
	return nil
}

// servable: the Service exists and one of its EndpointSlices has a serving
// endpoint on a port named as the Service's first port.
func servable(m mirror, name string) error {
	svc, ok := m["services"][name]
	if !ok {
		return fmt.Errorf("Service %s does not exist", name)
	}
	ports, _ := framework.Dig(svc, "spec", "ports").([]any)
	if len(ports) == 0 {
		return fmt.Errorf("Service %s has no port", name)
	}
	portName, _ := framework.Dig(ports[0], "name").(string)
	n := 0
	for _, sl := range m["endpointslices"] {
		if framework.Dig(sl, "metadata", "labels", "kubernetes.io/service-name") != name {
			continue
		}
		n++
		named := false
		sps, _ := sl["ports"].([]any)
		for _, p := range sps {
			if pn, _ := framework.Dig(p, "name").(string); pn == portName {
				named = true
			}
		}
		eps, _ := sl["endpoints"].([]any)
		for _, e := range eps {
			addrs, _ := framework.Dig(e, "addresses").([]any)
			if named && framework.Dig(e, "conditions", "serving") != false && len(addrs) > 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("Service %s has no EndpointSlice with a serving endpoint on port %q (%d slices)", name, portName, n)
}

// settleRoutable is settle (mcwatch_test.go) for a phase that began at mark
// and since, then checks, on every single write the watch saw in that
// phase, that every route of the namespace stays routable.
func settleRoutable(t *testing.T, w *nsWatch, mark int, since time.Time, name, phase string) (framework.HookExchange, writes) {
	t.Helper()
	ex, ws := settle(t, w, mark, since, name, phase)
	for _, b := range w.replay(mark, servedRoutesStay(w.ns)) {
		t.Errorf("%s: a route would be disabled %s", phase, b)
	}
	return ex, ws
}

// appHandler is the app behind Traefik: 200 on /, its own 404 on /missing,
// and /status/<code> answers that code with a body of its own.
func appHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	switch {
	case r.URL.Path == "/":
		fmt.Fprint(w, "app ok")
	case len(r.URL.Path) == len("/status/503") && r.URL.Path[:len("/status/")] == "/status/":
		code, err := strconv.Atoi(r.URL.Path[len("/status/"):])
		if err != nil {
			code = http.StatusBadRequest
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, "app says %d", code)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "app's own 404")
	}
}

// waitReadyAddress waits until a Service's EndpointSlices list ip ready.
func waitReadyAddress(t *testing.T, ns, service, ip string) {
	t.Helper()
	err := framework.WaitUntil(60*time.Second, 200*time.Millisecond, fmt.Sprintf("%s ready in the EndpointSlices of %s/%s", ip, ns, service), func() (bool, error) {
		addrs, err := suite.cluster.Kube.ReadyAddresses(t.Context(), ns, service)
		if err != nil {
			return false, err
		}
		for _, a := range addrs {
			if a == ip {
				return true, nil
			}
		}
		return false, fmt.Errorf("ready addresses %v", addrs)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitNoReadyAddress waits until a Service's EndpointSlices list no ready
// address.
func waitNoReadyAddress(t *testing.T, ns, service string) {
	t.Helper()
	err := framework.WaitUntil(60*time.Second, 200*time.Millisecond, fmt.Sprintf("no ready address in the EndpointSlices of %s/%s", ns, service), func() (bool, error) {
		addrs, err := suite.cluster.Kube.ReadyAddresses(t.Context(), ns, service)
		if err != nil {
			return false, err
		}
		return len(addrs) == 0, fmt.Errorf("ready addresses %v", addrs)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func listPods(t *testing.T, ns, selector string) []obj {
	t.Helper()
	pods, err := suite.cluster.Kube.List(t.Context(), "/api/v1/namespaces/"+ns+"/pods", selector)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// childNames is the set of Kind/name of a sync answer's children.
func childNames(resp obj) map[string]bool {
	out := map[string]bool{}
	children, _ := resp["children"].([]any)
	for _, c := range children {
		out[fmt.Sprint(framework.Dig(c, "kind"))+"/"+fmt.Sprint(framework.Dig(c, "metadata", "name"))] = true
	}
	return out
}

// sliceAddresses are the addresses of the EndpointSlice child name.
func sliceAddresses(resp obj, name string) []string {
	var out []string
	children, _ := resp["children"].([]any)
	for _, c := range children {
		if framework.Dig(c, "kind") != "EndpointSlice" || framework.Dig(c, "metadata", "name") != name {
			continue
		}
		eps, _ := framework.Dig(c, "endpoints").([]any)
		for _, e := range eps {
			addrs, _ := framework.Dig(e, "addresses").([]any)
			for _, a := range addrs {
				out = append(out, fmt.Sprint(a))
			}
		}
	}
	return out
}

func setOf(items ...string) map[string]bool {
	m := map[string]bool{}
	for _, it := range items {
		m[it] = true
	}
	return m
}

func suiteChart() string { return suite.root + "/chart" }

// requirePagesCondition checks the ErrorPages condition of a sync answer's
// status; status "" means the status carries none.
func requirePagesCondition(t *testing.T, phase string, resp obj, status, reason string) {
	t.Helper()
	c := condition(resp, "ErrorPages")
	switch {
	case status == "" && c != nil:
		t.Errorf("%s: status carries an ErrorPages condition %v, want none", phase, c)
	case status != "" && (c == nil || c["status"] != status || c["reason"] != reason):
		t.Errorf("%s: ErrorPages condition %v, want %s %s", phase, c, status, reason)
	}
}
