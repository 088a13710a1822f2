//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestSyncHookVersionUpgrade upgrades the chart, mid-flight, from the
// registration it shipped before 0.2.0 (the sync hook at version v1) to this
// chart's (v2), then rolls it back, on a real Traefik with its default
// provider flags, under the real Metacontroller running the release's live
// CompositeController (it watches it, and restarts the controller when the
// upgrade changes it):
//
//   - under v1 the sync request never carries the error-page Service
//     (Metacontroller filters related objects of another namespace), so the
//     app is routed without error pages and its status says why
//     (ErrorPages False ErrorServiceNotSeen);
//   - `helm upgrade` to this chart: the request now carries the Service,
//     keyed namespace/name like every child; the wiring is added and the
//     route refers to it once it exists — no child is deleted, and the
//     app's 503 becomes the branded page;
//   - `helm rollback`: keys go back to names, the Service is filtered out
//     again; every child is kept (the slice keeps its address), pages keep
//     working, status says what it cannot see.
//
// All along, a client asks the app's route through Traefik every 10 ms:
// not one answer may be anything but the app's 200.
func TestSyncHookVersionUpgrade(t *testing.T) {
	requireStackResourceCRD(t)
	host := requireHost(t)
	ctx := t.Context()
	k := suite.cluster.Kube
	tr := installTraefik(t)
	const appName, appHost = "basket", "basket.e2e.test"
	guest := host.GuestIP.String()
	oldChart := chartWithSyncHookAt(t, "v1")

	rel := newPagesRelease(t, "stackdome")
	appNS := newNamespace(t)
	appLn, err := host.Listen(net.JoinHostPort(guest, "0"))
	if err != nil {
		t.Fatal(err)
	}
	appPort := appLn.Addr().(*net.TCPAddr).Port
	appSrv := &http.Server{Handler: http.HandlerFunc(appHandler), ReadHeaderTimeout: 5 * time.Second}
	go appSrv.Serve(appLn)
	t.Cleanup(func() { appSrv.Close() })

	rel.install(t, oldChart, "config.entryPoints={web}")
	requireSyncHookAt(t, rel, "v1")
	w := watchNamespace(t, appNS)
	mark, since := w.mark(), time.Now()

	if _, err := k.Create(ctx, "/apis/stackdome.io/v1alpha1/namespaces/"+appNS+"/stackresources", obj{
		"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": obj{"name": appName},
		"spec": obj{"type": "Service", "image": "example.invalid/basket:1", "replicas": 1, "host": appHost,
			"ports": []any{obj{"name": "http", "port": appPort, "public": true}}},
	}); err != nil {
		t.Fatal(err)
	}
	// settlePhase waits until the real Metacontroller, syncing with the
	// request shape of the hook version the live CompositeController now
	// registers (keys namespace/name at v2), leaves the app alone; every
	// write of the phase is checked for routes that stay routable.
	settlePhase := func(phase string, v2 bool) framework.HookExchange {
		t.Helper()
		first := syncWhere(t, appNS, appName, since, 90*time.Second, phase+": a sync at the registered version", func(ex framework.HookExchange) error {
			return requestKeysAt(ex.Request, v2)
		})
		ex, _ := settleRoutable(t, w, mark, first.At.Add(-time.Millisecond), appName, phase)
		mark, since = w.mark(), time.Now()
		return ex
	}
	middleware := appNS + "-" + appName + "-errors@kubernetescrd"
	unwired := setOf("Service/"+appName, "Deployment/"+appName, "IngressRoute/"+appName)
	wired := setOf("Service/"+appName, "Deployment/"+appName, "IngressRoute/"+appName,
		"Middleware/"+appName+"-errors", "Service/"+appName+"-error-pages", "EndpointSlice/"+appName+"-error-pages")

	// --- The chart as it shipped before 0.2.0: the sync hook at v1.
	res := settlePhase("sync hook at v1", false)
	if got := childNames(res.Response); !equalSets(got, unwired) {
		t.Errorf("sync hook at v1: children %v, want %v", keys(got), keys(unwired))
	}
	requireRequestKeys(t, "sync hook at v1", res.Request, appNS, false)
	requirePagesCondition(t, "sync hook at v1", res.Response, "False", "ErrorServiceNotSeen")
	pods := waitPods(t, appNS, "app.kubernetes.io/instance="+appName, 1)
	suite.kubelet.RunPod(t, appNS, pods[0], guest)
	waitReadyAddress(t, appNS, appName, guest)
	waitRouters(t, tr, "sync hook at v1: the app's router without middleware", appRouterWith(appHost))
	runChecks(t, tr, "sync hook at v1", []check{
		{name: "app answers 200", host: appHost, path: "/", accept: browserAccept, status: 200, want: isBody("app ok")},
		{name: "app's 503 passes as the app sent it", host: appHost, path: "/status/503", accept: browserAccept, status: 503, want: isBody("app says 503")},
	})

	// A client on the route from here on.
	probe := startRouteProbe(tr, appHost)

	// --- helm upgrade to this chart: the sync hook at v2.
	if out, err := helm(ctx, "upgrade", rel.name, suiteChart(), "--namespace", rel.namespace, "--reuse-values"); err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	requireSyncHookAt(t, rel, "v2")
	res = settlePhase("upgraded to v2", true)
	if got := childNames(res.Response); !equalSets(got, wired) {
		t.Errorf("upgraded to v2: children %v, want %v", keys(got), keys(wired))
	}
	requireRequestKeys(t, "upgraded to v2", res.Request, appNS, true)
	requirePagesCondition(t, "upgraded to v2", res.Response, "True", "Wired")
	waitRouters(t, tr, "upgraded to v2: the app's router with its errors Middleware", appRouterWith(appHost, middleware))
	pagesServed := []check{
		{name: "app answers 200", host: appHost, path: "/", accept: browserAccept, status: 200, want: isBody("app ok")},
		{name: "503 → the branded page", host: appHost, path: "/status/503", accept: browserAccept, status: 503, want: isPage(503, "503 Service Unavailable", "")},
		{name: "502 → the JSON envelope", host: appHost, path: "/status/502", accept: axiosAccept, status: 502, want: isEnvelope(502)},
	}
	runChecks(t, tr, "upgraded to v2", pagesServed)

	// --- helm rollback: the sync hook at v1 again.
	if out, err := helm(ctx, "rollback", rel.name, "1", "--namespace", rel.namespace); err != nil {
		t.Fatalf("helm rollback: %v\n%s", err, out)
	}
	requireSyncHookAt(t, rel, "v1")
	res = settlePhase("rolled back to v1", false)
	if got := childNames(res.Response); !equalSets(got, wired) {
		t.Errorf("rolled back to v1: children %v, want %v kept", keys(got), keys(wired))
	}
	requireRequestKeys(t, "rolled back to v1", res.Request, appNS, false)
	requirePagesCondition(t, "rolled back to v1", res.Response, "False", "ErrorServiceNotSeen")
	waitRouters(t, tr, "rolled back to v1: the app's router keeps its errors Middleware", appRouterWith(appHost, middleware))
	runChecks(t, tr, "rolled back to v1", pagesServed)

	// Every event of the namespace, from the first sync on: no child was
	// ever deleted.
	if ws := w.writesOf(0, appName); len(ws.deleted) > 0 {
		t.Errorf("the switches deleted children: %v", ws.deleted)
	}
	total, failed := probe.stop()
	t.Logf("route probe: %d requests through Traefik across the upgrade and the rollback, %d not the app's 200", total, len(failed))
	if len(failed) > 0 {
		t.Errorf("route outages: %d of %d requests, first: %v", len(failed), total, failed[:min(len(failed), 5)])
	}
	if total < 100 {
		t.Errorf("the probe made only %d requests", total)
	}
}

// chartWithSyncHookAt is a copy of the chart whose CompositeController
// registers the sync hook at version: with "v1", the chart as it shipped
// before 0.2.0 (the one line that differed).
func chartWithSyncHookAt(t *testing.T, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chart")
	if err := os.CopyFS(dir, os.DirFS(suiteChart())); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "templates", "compositecontroller.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The template registers both hooks from one range over their names;
	// only the sync hook's version is changed.
	const v2 = "    {{ $hook }}:\n      version: v2\n"
	if strings.Count(string(b), v2) != 1 {
		t.Fatalf("%s no longer registers the hooks with %q: update this test", path, v2)
	}
	b = []byte(strings.Replace(string(b), v2, "    {{ $hook }}:\n      version: {{ if eq $hook \"sync\" }}"+version+"{{ else }}v2{{ end }}\n", 1))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// requireSyncHookAt requires the release's live CompositeController to
// register the sync hook at version.
func requireSyncHookAt(t *testing.T, rel *pagesRelease, version string) {
	t.Helper()
	cc, err := suite.cluster.Kube.Get(t.Context(), "/apis/metacontroller.k8s.io/v1alpha1/compositecontrollers/"+rel.compositeController())
	if err != nil {
		t.Fatal(err)
	}
	if got := framework.HookVersion(cc, "sync"); got != version {
		t.Fatalf("the live CompositeController registers the sync hook at %s, want %s", got, version)
	}
}

// requireRequestKeys requires every key of the children and related maps of
// a sync request the real Metacontroller sent to be namespace/name (v2) or
// a name (v1), and the error-page Service to be related exactly when v2.
func requireRequestKeys(t *testing.T, phase string, req obj, ns string, v2 bool) {
	t.Helper()
	if err := requestKeysAt(req, v2); err != nil {
		t.Errorf("%s: %v", phase, err)
	}
	services, _ := framework.Dig(req, "related", "Service.v1").(map[string]any)
	if v2 != (len(services) == 1) {
		t.Errorf("%s: related Services %v", phase, keys(setOfKeys(services)))
	}
}

// requestKeysAt: every key of the request's children and related maps is
// namespace/name (v2) or a name (v1).
func requestKeysAt(req obj, v2 bool) error {
	for _, field := range []string{"children", "related"} {
		groups, _ := req[field].(map[string]any)
		for g, objs := range groups {
			m, _ := objs.(map[string]any)
			for key := range m {
				if strings.Contains(key, "/") != v2 {
					return fmt.Errorf("%s[%s] key %q", field, g, key)
				}
			}
		}
	}
	return nil
}

func setOfKeys(m map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// routeProbe asks a route through Traefik's web entry point, again and
// again, and records every answer that is not 200.
type routeProbe struct {
	total  atomic.Int64
	mu     sync.Mutex
	failed []string
	done   chan struct{}
	wg     sync.WaitGroup
}

func startRouteProbe(tr *framework.Traefik, host string) *routeProbe {
	p := &routeProbe{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
			a, err := through(tr.Web, host, "/", "", "")
			p.total.Add(1)
			if err != nil || a.status != http.StatusOK {
				p.mu.Lock()
				if err != nil {
					p.failed = append(p.failed, err.Error())
				} else {
					p.failed = append(p.failed, http.StatusText(a.status))
				}
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// stop ends the probe and returns how many requests it made and the
// failures.
func (p *routeProbe) stop() (int64, []string) {
	close(p.done)
	p.wg.Wait()
	return p.total.Load(), p.failed
}
