//go:build e2e

package node

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestSyncHookVersionUpgrade upgrades the chart, mid-flight, from the
// registration it shipped before 0.2.0 (the sync hook at version v1) to this
// chart's (v2), then rolls it back, under the node's Metacontroller (it
// watches the release's CompositeController and restarts the controller
// when the upgrade changes it) and through the chart's Traefik on `web`:
//
//   - under v1 Metacontroller's sync requests (read from its log,
//     NodeFixture.TraceHooks) key children by name and never carry the error-page
//     Service (Metacontroller filters related objects of another
//     namespace), so the app is routed without error pages — its 503 is its
//     own — and its status says why (ErrorPages False ErrorServiceNotSeen);
//   - `helm upgrade` to this chart: the requests key children
//     namespace/name and carry exactly the error-page Service; the wiring
//     (errors Middleware, the error-page Service and EndpointSlice) is
//     added, ErrorPages True Wired, the 503 becomes the branded page and an
//     API client's 502 the JSON envelope;
//   - `helm rollback`: names again, the Service filtered out again; every
//     child is kept, pages keep being served, ErrorServiceNotSeen.
//
// No child of the app is deleted in any event of its namespace, and a
// client asking the app's route through Traefik every 10 ms across both
// switches gets nothing but the app's 200.
//
// It bites: with the hooks dropping the wiring once the request relates no
// error-page Service (hooks/internal/children/wiring.go), the rolled-back
// phase fails on the app's children (checked); a v1 request keyed
// namespace/name, a related Service at v1 or none at v2, and any answer of
// the probe but 200 each fail it by name.
func TestSyncHookVersionUpgrade(t *testing.T) {
	f := framework.NewNodeFixture(t)
	hooks := f.TraceHooks()
	rel := f.InstallChartFrom(chartWithSyncHookAt(t, "v1"), "config.entryPoints={web}")
	requireSyncHookAt(t, rel, "v1")
	ns := f.Namespace(nil)
	t.Cleanup(func() { f.DescribePods(ns) })
	var watches []*framework.Watcher
	for kind, path := range childCollections() {
		watches = append(watches, f.WatchPath(kind, fmt.Sprintf(path, ns)))
	}
	const name, host = "basket", "basket.node.test"
	spec := framework.PortApp(framework.PortArgs("8080"), obj{"name": "http", "port": 8080, "public": true})
	spec["host"] = host
	since := time.Now()
	f.CreateApp(ns, name, spec)
	sr, err := f.Kube.Get(t.Context(), framework.SRPath(ns, name))
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := framework.Dig(sr, "metadata", "uid").(string)

	errorService := rel.NS + "/" + rel.Name + "-error-pages"
	unwired := []string{"Deployment/" + name, "IngressRoute/" + name, "Service/" + name}
	wired := []string{"Deployment/" + name, "EndpointSlice/" + name + "-error-pages", "IngressRoute/" + name,
		"Middleware/" + name + "-errors", "Service/" + name, "Service/" + name + "-error-pages"}
	// phase checks what one registration shows: Metacontroller's requests
	// at that version (a request sent since, keyed as v2 says, and the
	// error-page Service related exactly when v2), the status, and the
	// children the app has.
	phase := func(what string, v2 bool, pages string, children []string) {
		t.Helper()
		reason := map[bool]string{false: "ErrorServiceNotSeen", true: "Wired"}[v2]
		f.WaitCondition(2*time.Minute, ns, name, "ErrorPages", pages, reason)
		req := hooks.WaitSyncRequest(t, ns, name, since, 90*time.Second, what+": a sync request keyed as the registered version",
			func(r obj) error { return requestKeysAt(r, v2) })
		related, _ := framework.Dig(req, "related", "Service.v1").(map[string]any)
		var want []string // none under v1 (slices.Sorted of no keys is nil)
		if v2 {
			want = []string{errorService}
		}
		if d := cmp.Diff(want, slices.Sorted(maps.Keys(related))); d != "" {
			t.Errorf("%s: the Services related in the request (-want +got):\n%s", what, d)
		}
		f.WaitFor(time.Minute, what+": the app's children", func() (bool, error) {
			got := f.OwnedChildren(ns, name)
			d := cmp.Diff(children, got)
			return d == "", fmt.Errorf("(-want +got):\n%s", d)
		})
	}
	appOwn503 := func(a framework.Answer) error {
		if a.Status != 503 || !strings.Contains(a.Body, "port 8080 status 503") {
			return fmt.Errorf("%d %.200q, want the app's own 503", a.Status, a.Body)
		}
		return nil
	}
	pagesServed := []routeCheck{
		{"503 → the branded page", "/status/503", framework.BrowserAccept, framework.IsPage(503, "503 Service Unavailable", "")},
		{"502 → the JSON envelope", "/status/502", framework.AxiosAccept, framework.IsEnvelope(502)},
	}

	// --- The chart as it shipped before 0.2.0: the sync hook at v1.
	f.WaitCondition(3*time.Minute, ns, name, "Available", "True", "Serving")
	phase("sync hook at v1", false, "False", unwired)
	f.WaitFor(time.Minute, "the app's own 200 through Traefik", func() (bool, error) {
		a, err := f.ThroughTraefikAs(t.Context(), host, "/", framework.BrowserAccept, "")
		return err == nil && a.Status == http.StatusOK, fmt.Errorf("%d %.100q %v", a.Status, a.Body, err)
	})
	checkRoute(t, "sync hook at v1", host, []routeCheck{{"the app's 503 passes as it sent it", "/status/503", framework.BrowserAccept, appOwn503}})

	probe := f.StartLoad(host, 100) // one request every 10 ms

	// --- helm upgrade to this chart: the sync hook at v2.
	since = time.Now()
	if out, err := f.Helm(t.Context(), "upgrade", rel.Name, f.RepoChart(), "--namespace", rel.NS, "--reuse-values", "--wait", "--timeout", "3m"); err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	requireSyncHookAt(t, rel, "v2")
	phase("upgraded to v2", true, "True", wired)
	f.WaitFor(time.Minute, "upgraded to v2: the branded 503 through Traefik", func() (bool, error) {
		a, err := f.ThroughTraefikAs(t.Context(), host, "/status/503", framework.BrowserAccept, "")
		if err != nil {
			return false, err
		}
		err = pagesServed[0].want(a)
		return err == nil, err
	})
	checkRoute(t, "upgraded to v2", host, pagesServed)

	// --- helm rollback: the sync hook at v1 again.
	since = time.Now()
	if out, err := f.Helm(t.Context(), "rollback", rel.Name, "1", "--namespace", rel.NS, "--wait", "--timeout", "3m"); err != nil {
		t.Fatalf("helm rollback: %v\n%s", err, out)
	}
	requireSyncHookAt(t, rel, "v1")
	phase("rolled back to v1", false, "False", wired)
	checkRoute(t, "rolled back to v1", host, pagesServed)

	total, failed := probe.Stop()
	t.Logf("route probe: %d requests through Traefik across the upgrade and the rollback, %d not the app's 200", total, len(failed))
	if len(failed) > 0 {
		t.Errorf("route outages: %d of %d requests, first: %v", len(failed), total, failed[:min(len(failed), 5)])
	}
	if total < 100 {
		t.Errorf("the probe made only %d requests", total)
	}
	var deleted []string
	for _, e := range framework.Merged(watches...) {
		if e.Type == "DELETED" && ownedBy(e.Obj, uid) {
			deleted = append(deleted, e.Kind+"/"+framework.PodName(e.Obj))
		}
	}
	if len(deleted) > 0 {
		t.Errorf("the switches deleted children: %v", deleted)
	}
}

// chartWithSyncHookAt is a copy of the repository's chart whose
// CompositeController registers the sync hook at version: with "v1", the
// chart as it shipped before 0.2.0 (the one line that differed).
func chartWithSyncHookAt(t *testing.T, version string) string {
	t.Helper()
	f := framework.NewNodeFixture(t)
	dir := filepath.Join(t.TempDir(), "chart")
	if err := os.CopyFS(dir, os.DirFS(f.RepoChart())); err != nil {
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
func requireSyncHookAt(t *testing.T, rel *framework.Release, version string) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	cc, err := f.Kube.Get(t.Context(), "/apis/metacontroller.k8s.io/v1alpha1/compositecontrollers/"+rel.NS+"-"+rel.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got := framework.HookVersion(cc, "sync"); got != version {
		t.Fatalf("the live CompositeController registers the sync hook at %s, want %s", got, version)
	}
}

// requestKeysAt is nil when a sync request has children and every key of
// its children and related maps is namespace/name (v2) or a name (v1).
func requestKeysAt(req obj, v2 bool) error {
	n := 0
	for _, field := range []string{"children", "related"} {
		groups, _ := req[field].(map[string]any)
		for g, objs := range groups {
			m, _ := objs.(map[string]any)
			for key := range m {
				if strings.Contains(key, "/") != v2 {
					return fmt.Errorf("%s[%s] key %q", field, g, key)
				}
				if field == "children" {
					n++
				}
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("no children in the request")
	}
	return nil
}

// stackdomeSlices are the EndpointSlices stackdome makes (an app's
// <name>-error-pages), not kube-controller-manager's of the apps' Services.
const stackdomeSlices = "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices?labelSelector=endpointslice.kubernetes.io%%2Fmanaged-by%%3Dstackdome.io"

// childCollections are framework.ChildKinds and stackdome's EndpointSlices ("slice").
func childCollections() map[string]string {
	m := map[string]string{"slice": stackdomeSlices}
	for k, v := range framework.ChildKinds {
		m[k] = v
	}
	return m
}

// ownedBy: o's controller is uid.
func ownedBy(o obj, uid string) bool {
	for _, r := range framework.ToSlice(framework.Dig(o, "metadata", "ownerReferences")) {
		if r, _ := r.(obj); r["uid"] == uid && r["controller"] == true {
			return true
		}
	}
	return false
}

// routeCheck is one answer a route must give through Traefik's web entry.
type routeCheck struct {
	name, path, accept string
	want               framework.Check
}

// checkRoute asks each check's path of host once.
func checkRoute(t *testing.T, phase, host string, checks []routeCheck) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	for _, c := range checks {
		a, err := f.ThroughTraefikAs(t.Context(), host, c.path, c.accept, "")
		if err == nil {
			err = c.want(a)
		}
		if err != nil {
			t.Errorf("%s: %s: %v", phase, c.name, err)
		}
	}
}
