//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestErrorPagesThroughTraefik proves the error-page guarantee
// (docs/errorpages.md: every 5xx of an app and every unclaimed host answered
// with a branded page, the original status kept) on a real Traefik v3.7.13 with its
// default provider flags, with stackdome's real answers applied through the
// Metacontroller emulation to a live StackResource, the chart installed with
// helm, and stackdome's real page server:
//
//   - not yet installed (no error-page Service): no Middleware, the app 200;
//   - installed: the app 200; its 503 → the HTML page for a browser, its 502
//     → the JSON envelope for axios, status kept, X-Request-Id shown; its own
//     404 untouched; an unknown host → the branded 404 of the chart's
//     catch-all; a second sync writes nothing;
//   - a stackdome rollout: the error-page Service is not written, so no
//     StackResource is resynced;
//   - the page endpoints made unready, then removed and the page server
//     stopped, then the chart uninstalled: the app still 200, its 5xx keeps
//     its status;
//   - error pages disabled (--error-service-name=): no Middleware, the app 200.
//
// After each step every router Traefik built is enabled. The backends live
// on the test host (testhost_test.go); the per-app EndpointSlice carries the
// chart error-page Service's ClusterIP, which the test host answers on,
// standing in for the service proxy (kube-proxy) of a real cluster.
func TestErrorPagesThroughTraefik(t *testing.T) {
	requireStackResourceCRD(t)
	if suite.hostErr != nil {
		t.Fatalf("no test host: %v", suite.hostErr)
	}
	host := suite.host
	ctx := t.Context()
	k := suite.cluster.kube
	tr := startTraefik(t)

	const (
		appName   = "checkout"
		appHost   = "shop.e2e.test"
		requestID = "e2e-req-7f3a"
	)
	rel := newPagesRelease(t, "stackdome")
	appNS := newNamespace(t)
	guest := host.guestIP.String()

	// The app: answers 200 on /, its own 404 on /missing, and the status
	// /status/<code> names with a body of its own.
	appLn, err := host.listen(net.JoinHostPort(guest, "0"))
	if err != nil {
		t.Fatal(err)
	}
	appPort := appLn.Addr().(*net.TCPAddr).Port
	appSrv := &http.Server{Handler: http.HandlerFunc(appHandler), ReadHeaderTimeout: 5 * time.Second}
	go appSrv.Serve(appLn)
	t.Cleanup(func() { appSrv.Close() })

	hookFlags := rel.hookFlags("--entry-points", "web")
	hook := startStackdome(t, hookFlags...)
	mc := &metacontroller{kube: k, hook: hook, afterWrite: func(ctx context.Context) error { return routable(ctx, appNS) }}

	if _, err := k.create(ctx, "/apis/stackdome.io/v1alpha1/namespaces/"+appNS+"/stackresources", obj{
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

	// sync is one sync; settle syncs until an answer changes nothing, as
	// Metacontroller does while it sees its own writes. After every single
	// write the app's routes must stay routable (routable).
	sync := func(phase string) *syncResult {
		t.Helper()
		res, err := mc.sync(ctx, appNS, appName)
		if err != nil {
			t.Fatalf("%s: sync: %v", phase, err)
		}
		for _, m := range res.notAsSent {
			t.Errorf("%s: child not stored as sent: %s", phase, m)
		}
		for _, b := range res.broken {
			t.Errorf("%s: a route would be disabled after %s", phase, b)
		}
		return res
	}
	settle := func(phase string) *syncResult {
		t.Helper()
		res, _ := mc.settle(t, appNS, appName, phase)
		return res
	}

	// --- Not yet installed: no error-page Service to relate.
	res := settle("not installed")
	requirePagesCondition(t, "not installed", res, "False", "ErrorServiceNotSeen")
	if got := childNames(res.response); !equalSets(got, setOf("Service/"+appName, "Deployment/"+appName, "IngressRoute/"+appName)) {
		t.Errorf("not installed: children %v, want the app's Service, Deployment and IngressRoute only", keys(got))
	}
	pods := waitPods(t, appNS, "app.kubernetes.io/instance="+appName, 1)
	runPod(t, appNS, pods[0], guest)
	waitReadyAddress(t, appNS, appName, guest)
	waitRouters(t, tr, "not installed: the app's router without middleware", appRouterWith(appHost))
	runChecks(t, tr, "not installed", []check{
		appOK,
		{name: "app's 503 passes as the app sent it", host: appHost, path: "/status/503", accept: browserAccept, status: 503, want: isBody("app says 503")},
	})

	// --- Installed: the chart, its pod running on the test host, the page
	// server there, and the Service's ClusterIP answering on the test host;
	// Metacontroller runs under the release's CompositeController.
	rel.install(t, "", "config.entryPoints={web}")
	mc.controller = rel.compositeController()
	release, releaseNS, errorSvc, clusterIP := rel.name, rel.namespace, rel.errorService, rel.clusterIP
	svc, err := k.get(ctx, "/api/v1/namespaces/"+releaseNS+"/services/"+errorSvc)
	if err != nil {
		t.Fatal(err)
	}

	res = settle("installed")
	requirePagesCondition(t, "installed", res, "True", "Wired")
	wantWired := setOf("Service/"+appName, "Deployment/"+appName, "IngressRoute/"+appName,
		"Middleware/"+appName+"-errors", "Service/"+appName+"-error-pages", "EndpointSlice/"+appName+"-error-pages")
	if got := childNames(res.response); !equalSets(got, wantWired) {
		t.Errorf("installed: children %v, want %v", keys(got), keys(wantWired))
	}
	if got := sliceAddresses(res.response, appName+"-error-pages"); len(got) != 1 || got[0] != clusterIP.String() {
		t.Errorf("installed: the mirrored EndpointSlice lists %v, want the error-page Service's ClusterIP %s", got, clusterIP)
	}
	waitRouters(t, tr, "installed: the app's router with its errors Middleware", appRouterWith(appHost, middleware))
	runChecks(t, tr, "installed", []check{
		appOK,
		{name: "503 → HTML page for a browser, request id shown", host: appHost, path: "/status/503", accept: browserAccept, requestID: requestID, status: 503, want: isPage(503, "503 Service Unavailable", requestID)},
		{name: "502 → JSON envelope for axios", host: appHost, path: "/status/502", accept: axiosAccept, status: 502, want: isEnvelope(502)},
		{name: "500 → JSON envelope without Accept", host: appHost, path: "/status/500", status: 500, want: isEnvelope(500)},
		{name: "app's own 404 untouched", host: appHost, path: "/missing", accept: browserAccept, status: 404, want: isBody("app's own 404")},
		{name: "unknown host → branded 404 (catch-all)", host: "nobody.e2e.test", path: "/anything", accept: browserAccept, status: 404, want: isPage(404, "404 Not Found", "")},
	})

	// --- A stackdome rollout: new pods, new EndpointSlice contents; the
	// error-page Service (the only related object) is not written, so
	// Metacontroller resyncs no StackResource for it.
	before := dig(svc, "metadata", "resourceVersion")
	out, err := helm(ctx, "upgrade", release, suiteChart(), "--namespace", releaseNS, "--reuse-values", "--set-string", "podAnnotations.e2e-rollout=2")
	if err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	after, err := k.get(ctx, "/api/v1/namespaces/"+releaseNS+"/services/"+errorSvc)
	if err != nil {
		t.Fatal(err)
	}
	if rv := dig(after, "metadata", "resourceVersion"); rv != before {
		t.Errorf("rollout: the error-page Service was written (resourceVersion %v → %v): every StackResource would be resynced", before, rv)
	}

	// --- Page endpoints unready: kube-controller-manager marks them so in
	// the chart's EndpointSlice; the mirrored slice keeps its address.
	for _, p := range listPods(t, releaseNS, "app.kubernetes.io/instance="+release) {
		setPodReady(t, releaseNS, dig(p, "metadata", "name").(string), false)
	}
	waitNoReadyAddress(t, releaseNS, errorSvc)
	if res := sync("unready"); !res.settled() {
		t.Errorf("unready: children written: created %v, updated %v, deleted %v", res.created, res.childWrites, res.deleted)
	}
	waitRouters(t, tr, "unready: the app's router keeps its Middleware", appRouterWith(appHost, middleware))
	runChecks(t, tr, "unready", keeps5xx)

	// --- Page endpoints removed, page server stopped: nothing answers
	// pages (connection refused on the ClusterIP, as a service proxy
	// without endpoints answers).
	if _, err := k.mergePatch(ctx, "/apis/apps/v1/namespaces/"+releaseNS+"/deployments/"+release, obj{"spec": obj{"replicas": 0}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range listPods(t, releaseNS, "app.kubernetes.io/instance="+release) {
		forceDeletePod(releaseNS, dig(p, "metadata", "name").(string))
	}
	rel.pages.stop(10 * time.Second)
	res = settle("removed")
	if got := sliceAddresses(res.response, appName+"-error-pages"); len(got) != 1 || got[0] != clusterIP.String() {
		t.Errorf("removed: the mirrored EndpointSlice lists %v, want %s kept", got, clusterIP)
	}
	waitRouters(t, tr, "removed: the app's router keeps its Middleware", appRouterWith(appHost, middleware))
	runChecks(t, tr, "removed", append(keeps5xx,
		check{name: "app's 503 body does not pass", host: appHost, path: "/status/503", accept: browserAccept, status: 503, want: notBody("app says 503")}))

	// --- Uninstalled: the release's CompositeController is gone with it, so
	// Metacontroller syncs nothing more; every child stays as it is and the
	// route keeps answering.
	rel.uninstall(t)
	if _, err := mc.sync(ctx, appNS, appName); !errors.Is(err, errNoCompositeController) {
		t.Fatalf("uninstalled: a sync without the release's CompositeController: %v, want none to happen", err)
	}
	waitRouters(t, tr, "uninstalled: the app's router keeps its Middleware", appRouterWith(appHost, middleware))
	runChecks(t, tr, "uninstalled, nothing syncs", keeps5xx)
	// The error-page Service gone while a registration still syncs (deleted
	// by hand, or between an uninstall and a reinstall of another release):
	// the last known address stays, the route stays.
	mc.controller = ""
	res = settle("uninstalled")
	requirePagesCondition(t, "uninstalled", res, "False", "ErrorServiceNotSeen")
	if got := childNames(res.response); !equalSets(got, wantWired) {
		t.Errorf("uninstalled: children %v, want %v kept", keys(got), keys(wantWired))
	}
	if got := sliceAddresses(res.response, appName+"-error-pages"); len(got) != 1 || got[0] != clusterIP.String() {
		t.Errorf("uninstalled: the mirrored EndpointSlice lists %v, want %s kept", got, clusterIP)
	}
	waitRouters(t, tr, "uninstalled: the app's router keeps its Middleware", appRouterWith(appHost, middleware))
	runChecks(t, tr, "uninstalled", keeps5xx)

	// --- Error pages disabled: no Middleware at all.
	hook.proc.stop(10 * time.Second)
	disabled := append([]string{}, hookFlags...)
	disabled = append(disabled, "--error-service-name=")
	mc.hook = startStackdome(t, disabled...)
	res = settle("disabled")
	requirePagesCondition(t, "disabled", res, "", "")
	if got := childNames(res.response); !equalSets(got, setOf("Service/"+appName, "Deployment/"+appName, "IngressRoute/"+appName)) {
		t.Errorf("disabled: children %v, want no Middleware, no error-page Service or EndpointSlice", keys(got))
	}
	waitRouters(t, tr, "disabled: the app's router without middleware", appRouterWith(appHost))
	runChecks(t, tr, "disabled", []check{
		appOK,
		{name: "app's 503 passes as the app sent it", host: appHost, path: "/status/503", accept: browserAccept, status: 503, want: isBody("app says 503")},
	})
}

// routable is what Traefik with its default provider flags needs to route
// every IngressRoute of ns (traefik/traefik@v3.7.13 pkg/provider/kubernetes/crd/kubernetes.go
// and pkg/server/middleware/middlewares.go): each
// middleware a route uses exists in ns; an errors Middleware's service is in
// ns and exists; and that Service has an EndpointSlice with a serving
// endpoint on a port of the Service's port name. Any of these missing, for
// as long as Traefik looks, disables the route.
func routable(ctx context.Context, ns string) error {
	k := suite.cluster.kube
	routes, err := listItems(ctx, "/apis/traefik.io/v1alpha1/namespaces/"+ns+"/ingressroutes", "")
	if err != nil {
		return err
	}
	for _, ir := range routes {
		rs, _ := dig(ir, "spec", "routes").([]any)
		for _, r := range rs {
			mws, _ := dig(r, "middlewares").([]any)
			for _, m := range mws {
				name, _ := dig(m, "name").(string)
				if mns, _ := dig(m, "namespace").(string); mns != "" && mns != ns {
					return fmt.Errorf("IngressRoute %v uses Middleware %s/%s of another namespace", dig(ir, "metadata", "name"), mns, name)
				}
				mw, err := k.get(ctx, "/apis/traefik.io/v1alpha1/namespaces/"+ns+"/middlewares/"+name)
				if err != nil {
					return fmt.Errorf("IngressRoute %v uses Middleware %s: %v", dig(ir, "metadata", "name"), name, err)
				}
				svc, _ := dig(mw, "spec", "errors", "service").(map[string]any)
				if svc == nil {
					continue
				}
				if sns, _ := svc["namespace"].(string); sns != "" && sns != ns {
					return fmt.Errorf("Middleware %s points at Service %s/%v of another namespace", name, sns, svc["name"])
				}
				if err := servable(ctx, ns, fmt.Sprint(svc["name"])); err != nil {
					return fmt.Errorf("Middleware %s: %w", name, err)
				}
			}
		}
	}
	return nil
}

// servable: the Service exists and one of its EndpointSlices has a serving
// endpoint on a port named as the Service's first port.
func servable(ctx context.Context, ns, name string) error {
	svc, err := suite.cluster.kube.get(ctx, "/api/v1/namespaces/"+ns+"/services/"+name)
	if err != nil {
		return fmt.Errorf("Service %s: %v", name, err)
	}
	ports, _ := dig(svc, "spec", "ports").([]any)
	if len(ports) == 0 {
		return fmt.Errorf("Service %s has no port", name)
	}
	portName, _ := dig(ports[0], "name").(string)
	slices, err := listItems(ctx, "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices", "kubernetes.io/service-name="+name)
	if err != nil {
		return err
	}
	for _, sl := range slices {
		named := false
		sps, _ := sl["ports"].([]any)
		for _, p := range sps {
			if n, _ := dig(p, "name").(string); n == portName {
				named = true
			}
		}
		eps, _ := sl["endpoints"].([]any)
		for _, e := range eps {
			if named && dig(e, "conditions", "serving") != false && len(dig(e, "addresses").([]any)) > 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("Service %s has no EndpointSlice with a serving endpoint on port %q (%d slices)", name, portName, len(slices))
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

// startPageServer runs the real `stackdome serve` on the test host, its
// error pages on every address of the host at port (the chart's pod address
// and the error-page Service's ClusterIP alike), with extra flags.
func startPageServer(t *testing.T, port int, extra ...string) *proc {
	t.Helper()
	host := suite.host
	bin := buildStackdome(t)
	hooksAddr := net.JoinHostPort(host.guestIP.String(), "8080")
	args := append([]string{"serve",
		"--listen", hooksAddr,
		"--error-pages-listen", ":" + strconv.Itoa(port),
		"--metrics-listen", net.JoinHostPort(host.guestIP.String(), "8081"),
		"--drain-delay", "0s", "--log-format", "text"}, extra...)
	p, err := host.startProc(t.TempDir(), "stackdome-pages", bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop(10 * time.Second) })
	waitOK(t, p, 30*time.Second, "http://"+hooksAddr+"/readyz")
	return p
}

// waitReadyAddress waits until a Service's EndpointSlices list ip ready.
func waitReadyAddress(t *testing.T, ns, service, ip string) {
	t.Helper()
	err := waitUntil(60*time.Second, 200*time.Millisecond, fmt.Sprintf("%s ready in the EndpointSlices of %s/%s", ip, ns, service), func() (bool, error) {
		addrs, err := readyAddresses(t.Context(), ns, service)
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
	err := waitUntil(60*time.Second, 200*time.Millisecond, fmt.Sprintf("no ready address in the EndpointSlices of %s/%s", ns, service), func() (bool, error) {
		addrs, err := readyAddresses(t.Context(), ns, service)
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
	pods, err := listItems(t.Context(), "/api/v1/namespaces/"+ns+"/pods", selector)
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
		out[fmt.Sprint(dig(c, "kind"))+"/"+fmt.Sprint(dig(c, "metadata", "name"))] = true
	}
	return out
}

// sliceAddresses are the addresses of the EndpointSlice child name.
func sliceAddresses(resp obj, name string) []string {
	var out []string
	children, _ := resp["children"].([]any)
	for _, c := range children {
		if dig(c, "kind") != "EndpointSlice" || dig(c, "metadata", "name") != name {
			continue
		}
		eps, _ := dig(c, "endpoints").([]any)
		for _, e := range eps {
			addrs, _ := dig(e, "addresses").([]any)
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
func requirePagesCondition(t *testing.T, phase string, res *syncResult, status, reason string) {
	t.Helper()
	c := condition(res.response, "ErrorPages")
	switch {
	case status == "" && c != nil:
		t.Errorf("%s: status carries an ErrorPages condition %v, want none", phase, c)
	case status != "" && (c == nil || c["status"] != status || c["reason"] != reason):
		t.Errorf("%s: ErrorPages condition %v, want %s %s", phase, c, status, reason)
	}
}
